/**
 * `sqlrecall serve [--port 8484] [--host 127.0.0.1] [--users]`: the HTTP API and the web UI.
 * Local mode (default, loopback only): every request is the configured user, no login.
 * Multi-user mode (`--users`, or whenever bound beyond loopback): personal access tokens from
 * `sqlrecall users add NAME`. Runs until SIGINT/SIGTERM.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { SqlrecallError } from '../../core/errors.js';
import { createLogger } from '../../core/log.js';
import { checkDatabaseRole, roleWarning } from '../../runtime/doctor.js';
import { createApp, defaultWebRoot } from '../../server/app.js';
import type { AuthMode } from '../../server/deps.js';
import { depsFromRuntime, memoryClient } from '../../server/runtime-deps.js';
import { UserDirectory } from '../../server/users.js';
import { closeCheckPool, configureCheckThreads, defaultCheckThreads } from '../../sql/check-pool.js';
import { pc } from '../colors.js';
import type { CliIO } from '../io.js';
import type { GlobalOptions } from '../program.js';
import { withRuntime } from '../with-runtime.js';
import { warnTo } from './ask.js';

/** Options of `serve`. */
export interface ServeOptions extends GlobalOptions {
  port?: string;
  host?: string;
  users?: boolean;
  /** Folder of the built UI (hidden flag; default `dist/web` of the package). */
  web?: string;
}

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Runs `serve` until a signal stops it; returns the exit code. */
export async function runServe(io: CliIO, opts: ServeOptions): Promise<number> {
  return withRuntime(
    io,
    opts,
    async (runtime, config) => {
      const port = opts.port === undefined ? 8484 : Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new SqlrecallError('usage', '--port must be a whole number from 0 to 65535.');
      const host = opts.host ?? '127.0.0.1';
      const multiUser = Boolean(opts.users) || !isLoopback(host);
      const client = memoryClient(config);
      const users = new UserDirectory(client);
      let auth: AuthMode;
      if (multiUser) {
        await users.init();
        const count = (await users.list()).length;
        if (count === 0)
          io.stderr.write(
            `${pc.yellow('note:')} no users yet: run \`sqlrecall users add NAME\` in another terminal; its token works here at once.\n`,
          );
        auth = { mode: 'users', users };
      } else {
        auth = { mode: 'local', user: config.user, ...(config.team ? { team: config.team } : {}) };
      }
      // Access log through the one logger: JSON lines on stderr, every field sanitized. Requests
      // are `info` (shown with --log-level info/debug), server errors `error`.
      const logger = createLogger({
        level: config.logLevel,
        base: { component: 'server' },
        destination: { write: (line: string) => io.stderr.write(line) },
      });
      const deps = depsFromRuntime(runtime, {
        auth,
        client,
        webRoot: opts.web ?? defaultWebRoot(),
        allowedHosts: isLoopback(host) ? [] : [host],
        log: (entry) => {
          if (entry.status >= 500) logger.error(entry, 'request');
          else logger.info(entry, 'request');
        },
      });
      // Long statements are parsed and checked on worker threads, so one user's statements never
      // stall the others' requests (sql/check-pool.ts); started now, with the parser loaded.
      await configureCheckThreads(config.checkThreads ?? defaultCheckThreads(), { warm: true }).catch(
        async (cause: unknown) => {
          io.stderr.write(
            `${pc.yellow('warning:')} statements are checked on the main thread: the checker threads did not start (${cause instanceof Error ? cause.message : String(cause)}).\n`,
          );
          await configureCheckThreads(0);
        },
      );
      // Open the database, the memory store and the models now: problems show at start, not on the first question.
      await deps.assistant();
      // A superuser or a role that can write is worth a loud warning at start.
      const roleCheck = roleWarning(await checkDatabaseRole(runtime));
      if (roleCheck) io.stderr.write(`${pc.red(pc.bold('WARNING:'))} ${roleCheck}\n`);
      const app = createApp(deps);
      const server = serve({ fetch: app.fetch, port, hostname: host });
      await new Promise<void>((resolve, reject) => {
        server.once('listening', () => resolve());
        server.once('error', reject);
      }).catch((cause: unknown) => {
        throw new SqlrecallError('usage', `Cannot listen on ${host}:${port}: ${(cause as Error).message}.`, {
          cause,
        });
      });
      const address = server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      io.stdout.write(`Listening on http://${shownHost}:${address.port}\n`);
      io.stderr.write(
        multiUser
          ? `Multi-user mode: sign in with a token from \`sqlrecall users add NAME\`. Stop with Ctrl+C.\n`
          : `Local mode: signed in as ${config.user} (no login; only this machine can connect). Stop with Ctrl+C.\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          server.close(() => resolve());
          // Streams that are still open (SSE) must not keep the process alive.
          if ('closeAllConnections' in server) server.closeAllConnections();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await closeCheckPool();
      return 0;
    },
    { warn: warnTo(io) },
  );
}
