/**
 * The real `psql` and `pg_dump` as foreign clients of a socket (the PostgreSQL client tools of the
 * machine's server). Always spawned asynchronously: the socket's owner usually runs in the test's
 * own process, and a synchronous spawn would block the event loop that serves it.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';

/** True when `psql` and `pg_dump` are on the PATH. */
export function hasPsql(): boolean {
  return ['psql', 'pg_dump'].every((tool) => spawnSync(tool, ['--version']).status === 0);
}

/** Output of a finished client tool. */
export interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Connection arguments for the socket in `socketDir` (no password, no ~/.psqlrc). */
function connection(socketDir: string): string[] {
  return ['-h', socketDir, '-p', '5432', '-U', 'postgres', '-d', 'postgres'];
}

/** Runs a client tool to its end. */
function run(tool: string, args: string[], env: Record<string, string> = {}): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { env: { ...process.env, PGCONNECT_TIMEOUT: '10', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `psql -c sql` against the socket in `socketDir`: unaligned, tuples only, stops at the first error. */
export function psql(socketDir: string, sql: string, env: Record<string, string> = {}): Promise<ToolResult> {
  return run('psql', ['-X', '-At', '-q', '-v', 'ON_ERROR_STOP=1', ...connection(socketDir), '-c', sql], env);
}

/** `pg_dump` (schema only) against the socket in `socketDir`. */
export function pgDump(socketDir: string): Promise<ToolResult> {
  return run('pg_dump', ['--schema-only', ...connection(socketDir)]);
}

/** A `psql` that stays connected and runs one statement at a time, as a person at its prompt. */
export interface PsqlSession {
  /** Runs `sql` (one or more statements ending in `;`) and resolves with what it printed. */
  send(sql: string): Promise<string>;
  /** Sends `sql` without waiting for its answer (e.g. a statement that has to wait for the database). */
  sendNoWait(sql: string): void;
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** Kills the process (SIGKILL: no Terminate message, the connection just drops). */
  kill(): Promise<void>;
  /** Sends `\q` and waits for the exit. */
  quit(): Promise<void>;
  readonly exited: Promise<number | null>;
}

/** Starts an interactive `psql` on the socket in `socketDir`. */
export function psqlSession(socketDir: string): PsqlSession {
  const child: ChildProcessWithoutNullStreams = spawn('psql', ['-X', '-At', '-q', ...connection(socketDir)], {
    env: { ...process.env, PGCONNECT_TIMEOUT: '10' },
  });
  let out = '';
  let err = '';
  let marks = 0;
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const waitFor = (mark: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const at = out.indexOf(mark);
        if (at >= 0) {
          const printed = out.slice(0, at);
          out = out.slice(at + mark.length);
          child.stdout.off('data', check);
          resolve(printed.trim());
        }
      };
      child.stdout.on('data', check);
      void exited.then(() => reject(new Error(`psql exited: ${err}`)));
      check();
    });
  return {
    send(sql) {
      marks += 1;
      const mark = `@@done${marks}@@`;
      child.stdin.write(`${sql}\n\\echo ${mark}\n`);
      return waitFor(`${mark}\n`);
    },
    sendNoWait(sql) {
      child.stdin.write(`${sql}\n`);
    },
    stderr: () => err,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async quit() {
      child.stdin.write('\\q\n');
      await exited;
    },
    exited,
  };
}
