import { createHook } from 'node:async_hooks';
import { Agent, fetch as uf } from 'undici';
import { createOllamaFetch, createOllamaClient } from '/work/wt/http-honest/src/models/ollama/client.js';
import { startScriptedOllama } from '/work/wt/http-honest/test/support/scripted/server.js';
let connects = 0;
createHook({ init(_id, type) { if (type === 'TCPCONNECTWRAP') connects++; } }).enable();
const server = await startScriptedOllama({ chat: () => 'SELECT 1 one two three' });
const body = JSON.stringify({ model: 'all-minilm', input: ['x'] });
const agent = new Agent({ keepAliveTimeout: 4000 });
for (let i = 0; i < 5; i++) { const r = await uf(`${server.url}/api/embed`, { method: 'POST', body, dispatcher: agent, headers: {'content-type':'application/json'} }); await r.json(); }
console.log('raw undici+agent:', connects); connects = 0;
for (let i = 0; i < 5; i++) { const r = await createOllamaFetch()(`${server.url}/api/embed`, { method: 'POST', body, headers: {'content-type':'application/json'} }); await r.json(); }
console.log('createOllamaFetch:', connects); connects = 0;
const f = createOllamaFetch();
for (let i = 0; i < 5; i++) { const r = await f(`${server.url}/api/embed`, { method: 'POST', body, headers: {'content-type':'application/json'} }); await r.json(); }
console.log('createOllamaFetch reused:', connects); connects = 0;
const c = createOllamaClient({ host: server.url });
for (let i = 0; i < 5; i++) await c.embed({ model: 'all-minilm', input: ['x'] });
console.log('ollama client reused:', connects); connects = 0;
for (let i = 0; i < 5; i++) await createOllamaClient({ host: server.url }).embed({ model: 'all-minilm', input: ['x'] });
console.log('ollama client per call:', connects); connects = 0;
await server.close();
