/**
 * Child process of `test/memory-disk-full.test.ts` (run with `node --import tsx`): opens the
 * embedded memory store's SQL client on `argv[2]` (a small tmpfs), makes one write larger than the
 * free space, then checks that the next statements fail at once instead of entering a backend the
 * full disk stopped (which spun at 100 % CPU). Prints one JSON line per step; on SIGTERM closes the
 * client and exits 0. In a child so that a spin (the old behaviour) ends with the parent's kill,
 * not with a hung test runner.
 */
import { createPgliteClient } from '../../src/memory/store/shared-pglite.js';
import { storeError } from '../../src/memory/store/sql-client.js';

const dir = process.argv[2]!;
const client = createPgliteClient(dir);
const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

process.on('SIGTERM', () => {
  void client.close().finally(() => process.exit(0));
});

const failure = async (run: () => Promise<unknown>) => {
  const started = performance.now();
  try {
    await run();
    return { ok: true, ms: Math.round(performance.now() - started) };
  } catch (error) {
    const mapped = storeError(error, `pglite:${dir}`);
    return {
      ok: false,
      code: mapped.code,
      message: mapped.message,
      ms: Math.round(performance.now() - started),
    };
  }
};

await client.query('CREATE TABLE filler (x text)');
say({ step: 'opened' });
// ~160 MB of barely compressible text in one transaction: more than the disk has.
say({
  step: 'big write',
  ...(await failure(() =>
    client.transaction((tx) =>
      tx.query(
        "INSERT INTO filler SELECT (SELECT string_agg(md5(random()::text || g || i), '') FROM generate_series(1, 1000) i) FROM generate_series(1, 5000) g",
      ),
    ),
  )),
});
say({ step: 'read after', ...(await failure(() => client.query('SELECT count(*) FROM filler'))) });
say({ step: 'write after', ...(await failure(() => client.query("INSERT INTO filler VALUES ('a')"))) });
say({ step: 'waiting' });
setInterval(() => {}, 1000);
