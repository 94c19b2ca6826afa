// Runs PGlite's initdb once into `<dir>/pgdata` and writes its tarball to `<dir>/pgdata.tar`
// (test/support/pglite-template.ts). A separate process: an instance created and closed inside
// vitest's main process left it exiting silently before any test ran.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

const dir = process.argv[2];
if (!dir) throw new Error('usage: make-pglite-template.mjs <dir>');
const db = new PGlite(join(dir, 'pgdata'));
try {
  await db.waitReady;
  const tar = await db.dumpDataDir('none');
  writeFileSync(join(dir, 'pgdata.tar'), Buffer.from(await tar.arrayBuffer()));
} finally {
  await db.close();
}
