/**
 * A user's `pglite:` database shared by several processes (issue 15): while one process holds the
 * data directory, another reaches it through the owner's Unix socket (never a second PGlite on the
 * same files), still read-only; when the owner is killed, the next call takes the directory over.
 * The owner is the built connector (`dist/`, as the CLI runs it) in a child process.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { LOCK_FILE_NAME, openPglite, runDirOf, socketDirOf } from '../src/databases/pglite/sharing.js';
import { ROOT } from './support/cli.js';

const OPTIONS = { timeoutMs: 10_000, maxRows: 100 };

describe('a pglite: database shared between processes', () => {
  let dir: string;
  let owner: ChildProcessWithoutNullStreams | undefined;

  beforeAll(async () => {
    dir = join(mkdtempSync(join(tmpdir(), 'sqlrecall-shared-db-')), 'shop');
    const db = await openPglite(dir, false);
    await db.exec(
      'CREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items VALUES (1, $$a$$), (2, $$b$$), (3, $$c$$);',
    );
    await db.close();
  }, 120_000);

  afterAll(() => {
    owner?.kill('SIGKILL');
    rmSync(join(dir, '..'), { recursive: true, force: true });
  });

  const lockPid = () => readFileSync(join(dir, LOCK_FILE_NAME), 'utf8').split(' ')[0];

  /** A child process that opens the directory through the connector and keeps it open. */
  async function startOwner(dataDir = dir): Promise<ChildProcessWithoutNullStreams> {
    const connector = pathToFileURL(join(ROOT, 'dist/databases/pglite/connector.js')).href;
    const script = `import { createPgliteConnector } from ${JSON.stringify(connector)};
const c = createPgliteConnector({ dataDir: ${JSON.stringify(dataDir)} });
await c.ping();
process.stdout.write('ready\\n');
setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('ready')) resolve();
      });
      child.stderr.on('data', (d) => {
        out += d;
      });
      child.on('close', (code) => reject(new Error(`owner exited ${code}: ${out}`)));
    });
    return child;
  }

  it('reaches the owner through its socket, read-only, and takes over when the owner is killed', async () => {
    owner = await startOwner();
    const ownerPid = String(owner.pid);
    expect(lockPid()).toBe(ownerPid);
    expect(statSync(runDirOf(dir)).mode & 0o777).toBe(0o700);
    expect(statSync(join(runDirOf(dir), '.s.PGSQL.5432')).mode & 0o777).toBe(0o600);

    const client = createPgliteConnector({ dataDir: dir });
    try {
      const schema = await client.introspect();
      expect(schema.tables.map((t) => t.name)).toEqual(['items']);
      const counted = await client.execute('SELECT count(*) AS n FROM items', OPTIONS);
      expect(counted.rows).toEqual([['3']]);
      // The directory stayed the owner's: this process is a socket client, not a second PGlite.
      expect(lockPid()).toBe(ownerPid);

      // Hostile: a write through the socket is refused by the read-only transaction; nothing changes.
      const refused = await client.execute('DELETE FROM items', OPTIONS).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(SqlrecallError);
      expect((refused as SqlrecallError).details).toMatchObject({ sqlState: '25006' });
      expect((await client.execute('SELECT count(*) AS n FROM items', OPTIONS)).rows).toEqual([['3']]);

      owner.kill('SIGKILL');
      await new Promise((resolve) => owner?.on('close', resolve));
      // The next call finds the socket gone and the owner dead: it opens the directory itself.
      const after = await client.execute('SELECT name FROM items ORDER BY id', OPTIONS);
      expect(after.rows).toEqual([['a'], ['b'], ['c']]);
      expect(lockPid()).toBe(String(process.pid));
    } finally {
      await client.close();
    }
    expect(existsSync(join(dir, LOCK_FILE_NAME))).toBe(false);
  }, 180_000);

  it('a socket client queues every concurrent statement (the owner runs one at a time), never db_busy', async () => {
    // A `serve` beside a `chat` that owns the shop: 50 users' statements arrive at once. A server
    // connector refuses beyond its pool and queue (3 + 16, db_busy); on an embedded database every
    // statement waits for the owner's single session anyway, so none may be refused.
    owner = await startOwner();
    const client = createPgliteConnector({ dataDir: dir });
    try {
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          client.execute(`SELECT count(*) + ${i} AS n FROM items`, OPTIONS).then(
            (result) => result.rows[0]?.[0],
            (error: unknown) => (error as SqlrecallError).code,
          ),
        ),
      );
      expect(answers).toEqual(Array.from({ length: 40 }, (_, i) => String(3 + i)));
      expect(lockPid()).toBe(String(owner.pid));
    } finally {
      await client.close();
      owner.kill('SIGKILL');
      await new Promise((resolve) => owner?.on('close', resolve));
      owner = undefined;
    }
  }, 180_000);

  it('a directory held by a live process that does not answer is db_unreachable, and is left alone', async () => {
    const holder = spawn('sleep', ['60']);
    try {
      const held = join(dir, '..', 'held');
      mkdirSync(held);
      writeFileSync(join(held, LOCK_FILE_NAME), `${holder.pid} someone`);
      const connector = createPgliteConnector({ dataDir: held, waitMs: 300 });
      const error = await connector.ping().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SqlrecallError);
      expect((error as SqlrecallError).code).toBe('db_unreachable');
      expect((error as SqlrecallError).message).toContain(`held by process ${holder.pid}`);
      expect(readFileSync(join(held, LOCK_FILE_NAME), 'utf8')).toBe(`${holder.pid} someone`);
      expect(existsSync(join(held, 'PG_VERSION'))).toBe(false); // no PGlite was opened on it
      await connector.close();
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('a directory whose socket path is too long is shared through a short private directory', async () => {
    const long = join(dir, '..', 'e'.repeat(110));
    const socketDir = socketDirOf(long);
    expect(socketDir).toBeDefined();
    expect(socketDir?.startsWith(long)).toBe(false);
    const holder = await startOwner(long);
    // The holder wrote where it serves into its lock: a client started with another TMPDIR (so it
    // would compute another short directory) still finds it.
    expect(readFileSync(join(long, LOCK_FILE_NAME), 'utf8').split('\n')[1]).toBe(socketDir);
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = mkdtempSync(join(tmpdir(), 'sqlrecall-other-tmp-'));
    const client = createPgliteConnector({ dataDir: long });
    try {
      expect(readFileSync(join(long, LOCK_FILE_NAME), 'utf8').split(' ')[0]).toBe(String(holder.pid));
      expect((await client.execute('SELECT 41 + 1 AS n', OPTIONS)).rows).toEqual([[42]]);
      // This process reached the holder's socket: it did not open the directory itself.
      expect(readFileSync(join(long, LOCK_FILE_NAME), 'utf8').split(' ')[0]).toBe(String(holder.pid));
      expect(statSync(socketDir as string).mode & 0o777).toBe(0o700);
      expect(statSync(join(socketDir as string, '.s.PGSQL.5432')).mode & 0o777).toBe(0o600);
      expect(statSync(join(socketDir as string, '..')).mode & 0o777).toBe(0o700);
    } finally {
      await client.close();
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.on('close', resolve));
      rmSync(socketDir as string, { recursive: true, force: true }); // the killed holder's socket
      rmSync(process.env.TMPDIR as string, { recursive: true, force: true });
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
  }, 180_000);

  it('a too-long path with no private short directory is used alone: it opens, and a second process is told at once', async () => {
    // Hostile: the short directories exist but are open to every local user (0777), so another
    // user could plant a socket there: they are refused, never used.
    const hostile = mkdtempSync(join(tmpdir(), 'sqlrecall-hostile-'));
    const userBase = join(hostile, `sqlrecall-${process.getuid?.() ?? 'user'}`); // as <tmp>/sqlrecall-<uid>
    for (const base of [join(hostile, 'sqlrecall'), userBase]) {
      mkdirSync(base);
      chmodSync(base, 0o777); // mkdir's mode is cut by the umask
    }
    const saved = { runtime: process.env.XDG_RUNTIME_DIR, tmp: process.env.TMPDIR };
    process.env.XDG_RUNTIME_DIR = hostile;
    process.env.TMPDIR = hostile;
    const long = join(dir, '..', 'd'.repeat(110));
    try {
      expect(socketDirOf(long)).toBeUndefined();
      const own = createPgliteConnector({ dataDir: long });
      try {
        await own.ping(); // before the socket length check, `listen` never called back here
        expect(readFileSync(join(long, LOCK_FILE_NAME), 'utf8').split(' ')[0]).toBe(String(process.pid));
      } finally {
        await own.close();
      }
      const holder = spawn('sleep', ['60']);
      try {
        /** A second process's connector on `long`: db_unreachable at once, not after its 60 s wait. */
        const refusedAtOnce = async (): Promise<void> => {
          const other = createPgliteConnector({ dataDir: long, waitMs: 60_000 });
          const started = Date.now();
          const error = await other.ping().then(
            () => undefined,
            (e: unknown) => e,
          );
          await other.close();
          expect((error as SqlrecallError).code).toBe('db_unreachable');
          expect(Date.now() - started).toBeLessThan(30_000); // no wait for a socket that cannot exist
        };
        writeFileSync(join(long, LOCK_FILE_NAME), `${holder.pid} someone`);
        await refusedAtOnce();

        // Hostile: a lock naming a socket directory that is not private (another user could serve
        // there) is not trusted: told at once, never connected to.
        const shortName = createHash('sha256').update(realpathSync(long)).digest('hex').slice(0, 16);
        const planted = join(userBase, shortName);
        writeFileSync(join(long, LOCK_FILE_NAME), `${holder.pid} someone\n${planted}`);
        await refusedAtOnce();
        // Nor is a directory the lock names created: a lock file never makes this process mkdir.
        const nowhere = join(hostile, 'nowhere', shortName);
        writeFileSync(join(long, LOCK_FILE_NAME), `${holder.pid} someone\n${nowhere}`);
        await refusedAtOnce();
        expect(existsSync(join(hostile, 'nowhere'))).toBe(false);
      } finally {
        holder.kill('SIGKILL');
      }
    } finally {
      for (const [name, value] of [
        ['XDG_RUNTIME_DIR', saved.runtime],
        ['TMPDIR', saved.tmp],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      rmSync(hostile, { recursive: true, force: true });
    }
  }, 120_000);

  it('two connectors of one process share one instance until the last one closes', async () => {
    const first = createPgliteConnector({ dataDir: dir });
    const second = createPgliteConnector({ dataDir: dir });
    try {
      await first.ping();
      await second.ping();
      expect(lockPid()).toBe(String(process.pid));
      await first.close();
      expect((await second.execute('SELECT count(*) AS n FROM items', OPTIONS)).rows).toEqual([['3']]);
    } finally {
      await second.close();
    }
    expect(existsSync(join(dir, LOCK_FILE_NAME))).toBe(false);
  }, 120_000);
});
