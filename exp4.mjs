import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
const mode = process.argv[2];
const t0 = performance.now();
const d = join(mkdtempSync(join(tmpdir(), 'x31m-')), 'data');
const startParams = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];
let db;
if (mode === 'initdb') db = new PGlite({ dataDir: d, startParams });
if (mode === 'copy') { cpSync('/tmp/x31/tpl/pgdata', d, { recursive: true }); db = new PGlite({ dataDir: d, startParams }); }
if (mode === 'tar') db = new PGlite({ dataDir: d, startParams, loadDataDir: new Blob([readFileSync('/tmp/x31/tpl/pgdata.tar')]) });
if (mode === 'gz') db = new PGlite({ dataDir: d, startParams, loadDataDir: new Blob([gunzipSync(readFileSync('/tmp/x31/tpl/pgdata.tar.gz'))]) });
if (mode === 'existing') { cpSync('/tmp/x31/tpl/pgdata', d, { recursive: true }); const t = performance.now(); db = new PGlite({ dataDir: d, startParams }); }
await db.waitReady;
await db.query('select 1');
const t1 = performance.now();
await db.close();
const hwm = /VmHWM:\s*(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1];
console.log(mode, Math.round(t1 - t0), 'ms', Math.round(hwm / 1024), 'MB');
rmSync(join(d, '..'), { recursive: true, force: true });
