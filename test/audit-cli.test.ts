/**
 * `sqlrecall sql` records every statement it runs or refuses for the user, and `sqlrecall audit`
 * lists them (filters, JSON) from the memory store's database, taking over the journal the earlier
 * commands left; `users add --admin` makes an administrator. In-process CLI runs.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fixture, pgliteShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { tempDir } from './support/temp-dir.js';

let shop: Fixture;
let env: Record<string, string>;
beforeAll(async () => {
  shop = await pgliteShop();
  const home = tempDir('sqlrecall-audit-cli-');
  env = {
    SQLRECALL_HOME: home,
    DATABASE_URL: shop.url,
    MEMORY_DATABASE_URL: `pglite:${join(home, 'store')}`,
  };
}, 120_000);
afterAll(async () => {
  await shop?.close();
});

it('sql records what ran and what was refused; audit lists it per user and since a time', async () => {
  expect(
    (await runCliInProcess(['sql', '--user', 'ann', 'SELECT id FROM t ORDER BY id'], { env })).code,
  ).toBe(0);
  expect((await runCliInProcess(['sql', '--user', 'bob', 'DELETE FROM t'], { env })).code).toBe(3);
  const listed = await runCliInProcess(['audit', '--json'], { env });
  expect(listed.code).toBe(0);
  const { records } = JSON.parse(listed.stdout) as {
    records: { user: string; sql: string; outcome: string; rowCount: number | null; frontEnd: string }[];
  };
  expect(records.map((r) => [r.user, r.outcome, r.rowCount, r.frontEnd])).toEqual([
    ['bob', 'refused', null, 'cli'],
    ['ann', 'ran', 2, 'cli'],
  ]);
  const ann = await runCliInProcess(['audit', '--user', 'ann', '--since', '1h'], { env });
  expect(ann.stdout).toContain('ann  cli/person  ran, 2 row(s)');
  expect(ann.stdout).not.toContain('DELETE');
  expect((await runCliInProcess(['audit', '--since', 'soon'], { env })).code).toBe(2);
}, 180_000);

it('users add --admin makes an administrator; --team-admin only the team role', async () => {
  const admin = await runCliInProcess(['users', 'add', 'root', '--admin', '--json'], { env });
  expect(JSON.parse(admin.stdout)).toMatchObject({ user: 'root', admin: true, teamRole: null });
  const lead = await runCliInProcess(['users', 'add', 'lee', '--team', 'ops', '--team-admin', '--json'], {
    env,
  });
  expect(JSON.parse(lead.stdout)).toMatchObject({ user: 'lee', admin: false, teamRole: 'admin' });
  const list = await runCliInProcess(['users', 'list'], { env });
  expect(list.stdout).toContain('root  administrator');
  expect(list.stdout).not.toMatch(/lee\s+administrator/);
}, 120_000);
