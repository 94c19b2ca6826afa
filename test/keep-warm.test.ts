/**
 * Keep-warm (issue 15, fast start): with SQLRECALL_KEEP_WARM, an `ask` that had to start the
 * embedded memory store and demo shop itself hands both to a background `sqlrecall hold` as it
 * exits; the next `ask` reaches them through the holder's sockets (it cannot own them while the
 * holder lives), and the holder exits once idle, releasing both. Off by default: nothing outlives
 * the command. Also: a bad setting, a hand-started holder stopped by SIGTERM, a second holder.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { processAlive } from '../src/core/process.js';
import { LOCK_FILE_NAME } from '../src/databases/pglite/sharing.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { type Running, runSqlrecall, startSqlrecall } from './support/cli.js';
import type { ScriptedOllama } from './support/scripted/server.js';
import { startShopModel } from './support/shop-model.js';

/** Polls `probe` every 100 ms until it returns a value other than undefined, or fails after `timeoutMs`. */
async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('keep-warm: a background holder after ask', () => {
  let server: ScriptedOllama;
  let dir: string;
  let shopDir: string;
  let env: Record<string, string>;
  let orders: number;
  const running: Running[] = [];
  const holders = new Set<number>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sqlrecall-warm-'));
    shopDir = join(dir, 'demo-shop');
    orders = (await createDemoDatabase(shopDir)).counts.orders as number;
    server = await startShopModel();
    env = { SQLRECALL_HOME: join(dir, 'home'), OLLAMA_HOST: server.url, DATABASE_URL: `pglite:${shopDir}` };
  }, 180_000);

  // A test that failed half-way must not leave its holder to the next one.
  afterEach(async () => {
    for (const pid of holders) if (processAlive(pid)) process.kill(pid, 'SIGTERM');
    await until('holders to exit', () => ([...holders].some(processAlive) ? undefined : true));
  }, 90_000);

  afterAll(async () => {
    for (const r of running) r.child.kill('SIGKILL');
    await Promise.all(running.map((r) => r.exited));
    for (const pid of holders) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (args: string[], extra: Record<string, string> = {}) =>
    runSqlrecall(args, { env: { ...env, ...extra }, timeoutMs: 120_000 });
  const memoryDir = () => join(env.SQLRECALL_HOME as string, 'memory');
  /** The pid in `dir`'s lock file, or undefined when no lock is there. */
  const lockPid = (lockDir: string): number | undefined => {
    const file = join(lockDir, LOCK_FILE_NAME);
    if (!existsSync(file)) return undefined;
    const pid = Number.parseInt(readFileSync(file, 'utf8').split(/[ \n]/)[0] ?? '', 10);
    return Number.isInteger(pid) ? pid : undefined;
  };
  const commandOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

  it('off by default: ask leaves no process and no lock behind', async () => {
    const asked = await cli(['ask', '--json', '--user', 'priya', 'how many orders are there?']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(lockPid(memoryDir())).toBeUndefined();
    expect(lockPid(shopDir)).toBeUndefined();
  }, 180_000);

  it('ask with SQLRECALL_KEEP_WARM hands both stores to a holder; the next ask goes through it; idle, it exits and releases both', async () => {
    const warm = { SQLRECALL_KEEP_WARM: '4' };
    const taught = await cli(
      ['ask', '--json', '--user', 'priya', 'Always show me customers from India'],
      warm,
    );
    expect(taught.code, taught.stderr).toBe(0);
    // The holder takes both directories over once the ask released them.
    const holder = await until('a holder of the memory store', () => {
      const pid = lockPid(memoryDir());
      return pid !== undefined && processAlive(pid) && lockPid(shopDir) === pid ? pid : undefined;
    });
    holders.add(holder);
    expect(commandOf(holder)).toEqual(
      expect.arrayContaining(['hold', '--idle', '4', '--memory-dir', memoryDir(), '--database-dir', shopDir]),
    );

    // The next ask (memory on) answers while the holder keeps both locks: it went through the sockets.
    const asked = await cli(['ask', '--json', '--user', 'priya', 'how many orders are there?'], warm);
    expect(asked.code, asked.stderr).toBe(0);
    expect(JSON.parse(asked.stdout).rows).toEqual([[String(orders)]]);
    expect(lockPid(memoryDir())).toBe(holder);
    expect(lockPid(shopDir)).toBe(holder);
    const listed = await cli(['memory', 'list', '--json', '--user', 'priya']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(listed.stdout).memories)).toMatch(/India/);
    expect(lockPid(memoryDir())).toBe(holder);

    // No client for 4 s: the holder exits and removes both locks and sockets.
    await until('the idle holder to exit', () => (processAlive(holder) ? undefined : true));
    expect(lockPid(memoryDir())).toBeUndefined();
    expect(lockPid(shopDir)).toBeUndefined();
    expect(existsSync(join(memoryDir(), '.run', '.s.PGSQL.5432'))).toBe(false);
    expect(existsSync(join(shopDir, '.run', '.s.PGSQL.5432'))).toBe(false);

    // Nothing was lost: the next process opens the store itself and finds the memory.
    const again = await cli(['memory', 'list', '--json', '--user', 'priya']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(again.stdout).memories)).toMatch(/India/);
  }, 300_000);

  it('sql with SQLRECALL_KEEP_WARM hands over only the database it started (never the memory store it did not open)', async () => {
    const counted = await cli(['sql', '--json', 'SELECT count(*) AS n FROM orders'], {
      SQLRECALL_KEEP_WARM: '2',
    });
    expect(counted.code, counted.stderr).toBe(0);
    const holder = await until('a holder of the shop', () => {
      const pid = lockPid(shopDir);
      return pid !== undefined && processAlive(pid) ? pid : undefined;
    });
    holders.add(holder);
    expect(commandOf(holder)).toEqual(expect.arrayContaining(['hold', '--database-dir', shopDir]));
    expect(commandOf(holder)).not.toContain('--memory-dir');
    expect(lockPid(memoryDir())).toBeUndefined();
    await until('the idle holder to exit', () => (processAlive(holder) ? undefined : true));
    expect(lockPid(shopDir)).toBeUndefined();
  }, 180_000);

  it('a database another process holds is not handed over, nor one the configuration names but the command never opened', async () => {
    const shopHolder = startSqlrecall(['hold', '--no-memory', '--idle', '600'], env);
    running.push(shopHolder);
    await shopHolder.waitFor(/Holding the database /);
    const other = join(dir, 'other-db');
    const asked = await cli(['ask', '--json', '--db', `pglite:${shopDir}`, 'how many orders are there?'], {
      SQLRECALL_KEEP_WARM: '3',
      DATABASE_URL: `pglite:${other}`,
    });
    expect(asked.code, asked.stderr).toBe(0);
    const holder = await until('a holder of the memory store', () => {
      const pid = lockPid(memoryDir());
      return pid !== undefined && processAlive(pid) ? pid : undefined;
    });
    holders.add(holder);
    expect(commandOf(holder)).toEqual(expect.arrayContaining(['hold', '--memory-dir', memoryDir()]));
    expect(commandOf(holder)).not.toContain('--database-dir');
    expect(lockPid(shopDir)).toBe(shopHolder.child.pid);
    expect(existsSync(other)).toBe(false);
    shopHolder.child.kill('SIGTERM');
    expect(await shopHolder.exited).toBe(0);
  }, 180_000);

  it('a bad SQLRECALL_KEEP_WARM or --idle is a usage error naming the setting, and nothing starts', async () => {
    const bad = await cli(['ask', 'how many orders are there?'], { SQLRECALL_KEEP_WARM: 'ten minutes' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/SQLRECALL_KEEP_WARM/);
    expect(bad.stderr).not.toMatch(/\n\s+at /); // no stack trace
    // An embedded memory store with no directory is refused (it once meant the working directory).
    const empty = mkdtempSync(join(dir, 'cwd-'));
    for (const [command, url] of [
      [['memory', 'list'], 'pglite:'],
      [['ask', 'how many orders are there?'], 'pglite:memory:'],
    ] as const) {
      const noDir = await runSqlrecall([...command], {
        env: { ...env, MEMORY_DATABASE_URL: url, SQLRECALL_KEEP_WARM: '3' },
        cwd: empty,
        timeoutMs: 60_000,
      });
      expect(noDir.code, url).toBe(2);
      // Reported once: the keep-warm hand-over after the failure adds nothing.
      expect(noDir.stderr.match(/MEMORY_DATABASE_URL=pglite: names no directory/g)).toHaveLength(1);
    }
    expect(readdirSync(empty)).toEqual([]);
    const idle = await cli(['hold', '--idle', '0']);
    expect(idle.code).toBe(2);
    expect(idle.stderr).toMatch(/--idle must be a whole number of seconds/);
    const nothing = await cli(['hold', '--no-memory', '--db', 'postgres://nobody@127.0.0.1:1/none']);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/Nothing to hold/);
    expect(lockPid(memoryDir())).toBeUndefined();
  }, 180_000);

  it('hold by hand: a second holder leaves the directories to the first; SIGTERM releases them', async () => {
    const first = startSqlrecall(['hold', '--idle', '600'], env);
    running.push(first);
    await first.waitFor(/Holding the memory store .* and the database .* exits after 600 s/);
    expect(lockPid(memoryDir())).toBe(first.child.pid);
    expect(lockPid(shopDir)).toBe(first.child.pid);

    const second = await cli(['hold', '--idle', '600']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/memory store .* is held by another sqlrecall process already; left to it/);
    expect(second.stderr).toMatch(/database .* is held by another sqlrecall process already; left to it/);
    expect(lockPid(memoryDir())).toBe(first.child.pid);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(lockPid(memoryDir())).toBeUndefined();
    expect(lockPid(shopDir)).toBeUndefined();
  }, 180_000);

  it('asks started at once all answer: the first to open exits while the others still hold a connection to it, and one takes over', async () => {
    for (let round = 0; round < 2; round += 1) {
      const runs = await Promise.all(
        [1, 2, 3, 4].map((i) => cli(['ask', '--json', '--user', `u${i}`, 'how many orders are there?'])),
      );
      for (const r of runs) {
        expect(r.stderr).not.toMatch(/Emitted 'error' event|Connection terminated unexpectedly/);
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout).rows).toEqual([[String(orders)]]);
      }
    }
  }, 300_000);
});
