import { createHook } from 'node:async_hooks';
import { createServer } from 'node:http';
import { Agent, fetch as uf } from 'undici';
import { startScriptedOllama } from '/work/wt/http-honest/test/support/scripted/server.js';
let connects = 0;
createHook({ init(_id, type) { if (type === 'TCPCONNECTWRAP') connects++; } }).enable();
let serverConns = 0;
const plain = createServer(async (req, res) => { for await (const _ of req) {} res.writeHead(200, {'content-type':'application/json','content-length':2}); res.end('{}'); });
plain.on('connection', () => serverConns++);
await new Promise((r) => plain.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(plain.address() as any).port}`;
const agent = new Agent({ keepAliveTimeout: 4000 });
for (let i = 0; i < 5; i++) { const r = await uf(url, { method: 'POST', body: 'x', dispatcher: agent }); await r.json(); }
console.log('plain server:', connects, 'server saw', serverConns); connects = 0;
const s = await startScriptedOllama({});
const body = JSON.stringify({ model: 'all-minilm', input: ['x'] });
for (let i = 0; i < 5; i++) { const r = await uf(`${s.url}/api/embed`, { method: 'POST', body, dispatcher: agent }); console.log(r.headers.get('connection'), r.headers.get('keep-alive')); await r.json(); }
console.log('scripted:', connects); connects = 0;
for (let i = 0; i < 5; i++) { const r = await uf(`${s.url}/api/version`, { dispatcher: agent }); await r.json(); }
console.log('scripted GET:', connects); connects = 0;
plain.close(); await s.close();
