/**
 * One embedded memory store for every process (issue 15), as a user meets it: `chat` open in one
 * terminal owns the store; `ask`, `memory add`, `memory list`, `users add` and `serve` run beside
 * it as socket clients — of the memory store and of the embedded demo shop they all question; the
 * owner killed with SIGKILL, the next process takes both over with nothing lost.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAT_PROMPT } from '../src/cli/commands/chat.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { LOCK_FILE_NAME } from '../src/memory/store/index.js';
import { type Running, runSqlrecall, startSqlrecall } from './support/cli.js';
import type { ScriptedOllama } from './support/scripted/server.js';
import { startShopModel } from './support/shop-model.js';

const HIGH = 'orders.total_amount > 10000';

describe('one embedded memory store shared by every process', () => {
  let server: ScriptedOllama;
  let dir: string;
  let env: Record<string, string>;
  let orders: number;
  const running: Running[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sqlrecall-shared-'));
    orders = (await createDemoDatabase(join(dir, 'demo-shop'))).counts.orders as number;
    server = await startShopModel();
    env = {
      SQLRECALL_HOME: join(dir, 'home'),
      OLLAMA_HOST: server.url,
      DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
    };
  }, 180_000);

  afterAll(async () => {
    for (const r of running) r.child.kill('SIGKILL');
    await Promise.all(running.map((r) => r.exited));
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (args: string[]) => runSqlrecall(args, { env, timeoutMs: 120_000 });
  const memoryDir = () => join(env.SQLRECALL_HOME as string, 'memory');
  const lockPid = () => readFileSync(join(memoryDir(), LOCK_FILE_NAME), 'utf8').split(' ')[0];
  /** The pid holding the shop's lock, or undefined when nobody holds it. */
  const shopLockPid = (): string | undefined => {
    const file = join(env.DATABASE_URL?.slice('pglite:'.length) as string, LOCK_FILE_NAME);
    return existsSync(file) ? readFileSync(file, 'utf8').split(' ')[0] : undefined;
  };
  const texts = async (user: string): Promise<string[]> => {
    const list = await cli(['memory', 'list', '--json', '--user', user]);
    expect(list.code, list.stderr).toBe(0);
    return (JSON.parse(list.stdout).memories as { text: string }[]).map((m) => m.text).sort();
  };

  it('chat owns the store while ask, memory add/list, users add and serve run beside it; SIGKILL of the owner loses nothing', async () => {
    // The demo shop is an embedded database too: chat opens it, ask and serve reach it through chat.
    const chat = startSqlrecall(['chat', '--user', 'priya'], env);
    running.push(chat);
    await chat.waitFor(new RegExp(CHAT_PROMPT.replace(/[>]/g, '\\$&')));
    expect(lockPid()).toBe(String(chat.child.pid));
    expect(shopLockPid()).toBe(String(chat.child.pid));
    const runDir = join(memoryDir(), '.run');
    expect(statSync(runDir).mode & 0o777).toBe(0o700);
    const socket = statSync(join(runDir, '.s.PGSQL.5432'));
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);

    const taught = await cli(['ask', '--json', '--user', 'priya', 'Always show me customers from India']);
    expect(taught.code, taught.stderr).toBe(0);
    expect(JSON.parse(taught.stdout).remembered).toMatchObject([{ action: 'ADD', kind: 'preference' }]);
    const added = await cli([
      'memory',
      'add',
      '--user',
      'priya',
      '--kind',
      'term',
      '--sql',
      HIGH,
      'High value order means total amount over 10000',
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(await texts('priya')).toEqual([
      'Always show me customers from India',
      'High value order means total amount over 10000',
    ]);

    // 8 concurrent identical adds from 8 processes, all through the owner's socket: one memory.
    const adds = await Promise.all(
      Array.from({ length: 8 }, () => cli(['memory', 'add', '--user', 'kim', 'Only paid orders count'])),
    );
    for (const a of adds) expect(a.code, a.stderr).toBe(0);
    expect(await texts('kim')).toEqual(['Only paid orders count']);

    const serve = startSqlrecall(['serve', '--users', '--port', '0'], env);
    running.push(serve);
    const url = (await serve.waitFor(/Listening on (http:\/\/[^\s]+)/))[1] as string;
    const user = await cli(['users', 'add', 'newbie', '--json']);
    expect(user.code, user.stderr).toBe(0);
    const { token } = JSON.parse(user.stdout) as { token: string };
    const asNewbie = () => fetch(`${url}/api/memories`, { headers: { authorization: `Bearer ${token}` } });
    expect((await asNewbie()).status).toBe(200); // the running server sees the new user at once
    expect(lockPid()).toBe(String(chat.child.pid)); // nobody else opened the data directory
    expect(shopLockPid()).toBe(String(chat.child.pid)); // nor the shop's: ask and serve used chat's socket

    chat.child.kill('SIGKILL');
    await chat.exited;
    // The next process finds a dead owner, takes the store over, and everything is there.
    expect(await texts('priya')).toEqual([
      'Always show me customers from India',
      'High value order means total amount over 10000',
    ]);
    // The server's connection broke with the owner; its next request re-resolves and still works.
    expect((await asNewbie()).status).toBe(200);
    expect(lockPid()).not.toBe(String(chat.child.pid));
    // The shop too: the next question is answered; its process took the shop over (and let it go at exit).
    const asked = await cli(['ask', '--json', '--user', 'priya', 'how many orders?']);
    expect(asked.code, asked.stderr).toBe(0);
    expect(JSON.parse(asked.stdout).rows).toEqual([[String(orders)]]);
    expect(shopLockPid()).not.toBe(String(chat.child.pid));
  }, 420_000);
});
