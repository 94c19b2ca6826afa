/**
 * `sqlrecall users`: tokens are printed once and stored only as hashes; rotating revokes the old
 * token; errors are one sentence with exit code 2. The first add and its refused repeat run through
 * the real binary (exit codes and streams across the process boundary); the rest run the same
 * program in this process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { hashToken, TOKEN_PATTERN, UserDirectory } from '../src/app/users.js';
import { createPgliteClient } from '../src/memory/store/index.js';
import { runSqlrecall } from './support/cli.js';
import { runCliInProcess } from './support/in-process-cli.js';

const home = mkdtempSync(join(tmpdir(), 'sqlrecall-users-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

it('adds, lists, rotates and removes users; only hashes are stored', async () => {
  const env = { SQLRECALL_HOME: home };
  const added = await runSqlrecall(['users', 'add', 'zed', '--team', 'ops', '--team-admin', '--json'], {
    env,
  });
  expect(added.code).toBe(0);
  const { token } = JSON.parse(added.stdout) as { token: string };
  expect(token).toMatch(TOKEN_PATTERN);
  const again = await runSqlrecall(['users', 'add', 'zed'], { env });
  expect(again.code).toBe(2);
  expect(again.stderr).toContain('exists already');
  const rotated = await runCliInProcess(['users', 'token', 'zed'], { env });
  expect(rotated.code).toBe(0);
  const fresh = /sqr_[A-Za-z0-9_-]{43}/.exec(rotated.stdout)?.[0];
  expect(fresh).toBeDefined();
  expect((await runCliInProcess(['users', 'add', 'bad name!'], { env })).code).toBe(2);

  const client = createPgliteClient(join(home, 'memory'));
  try {
    const users = new UserDirectory(client);
    expect(await users.authenticate(token)).toBeNull();
    // --team-admin: the team role only; an administrator of sqlrecall is `--admin`.
    expect(await users.authenticate(fresh!)).toEqual({ user: 'zed', team: 'ops', teamRole: 'admin' });
    const rows = await client.query<{ token_hash: string }>('SELECT token_hash FROM sqlrecall_tokens');
    expect(rows.map((r) => r.token_hash)).toEqual([hashToken(fresh!)]);
    const dump = JSON.stringify(await client.query('SELECT * FROM sqlrecall_users'));
    expect(dump).not.toContain(fresh!.slice(4));
  } finally {
    await client.close();
  }
  const removed = await runCliInProcess(['users', 'remove', 'zed', '--json'], { env });
  // Issue 10: removal archives the account's memories (none here) instead of deleting them.
  expect(JSON.parse(removed.stdout)).toEqual({ user: 'zed', removed: true, archivedMemories: 0 });
  expect((await runCliInProcess(['users', 'remove', 'zed'], { env })).code).toBe(2);
  expect((await runCliInProcess(['users', 'list'], { env })).stdout).toContain('No users yet');
});
