/**
 * Starts the HTTP API and web UI on a runtime and runs it until SIGINT/SIGTERM: the server's half of
 * `sqlrecall serve`. The command line parses the flags and builds the runtime; it reaches this
 * function through the process entry (`src/main.ts`), which composes the front ends, because the
 * CLI and the server are siblings that never import each other (`runtime/http-front-end.ts`).
 * Local mode: every request is the configured user, no login. Multi-user mode: personal access
 * tokens from `sqlrecall users add NAME`.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { UserDirectory } from '../app/users.js';
import { SqlrecallError } from '../core/errors.js';
import { createLogger } from '../core/log.js';
import { checkDatabaseRole, roleWarning } from '../runtime/doctor.js';
import { type HttpServerStart, isLoopback } from '../runtime/http-front-end.js';
import { memoryClient } from '../runtime/memory-runtime.js';
import { closeCheckPool, configureCheckThreads, defaultCheckThreads } from '../sql/check-pool.js';
import { createApp, defaultWebRoot } from './app.js';
import type { AuthMode } from './deps.js';
import { depsFromRuntime } from './runtime-deps.js';

/** See the module comment and {@link HttpServerStart}. */
export async function startHttpServer(options: HttpServerStart): Promise<void> {
  const { runtime, config, port, host, multiUser, stdout, stderr, styles: pc } = options;
  const client = memoryClient(config);
  const users = new UserDirectory(client);
  let auth: AuthMode;
  if (multiUser) {
    await users.init();
    const count = (await users.list()).length;
    if (count === 0)
      stderr.write(
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
    destination: { write: (line: string) => stderr.write(line) },
  });
  // The policy file is read now and again whenever it changes; each load, reload and failure
  // is logged at warn level (shown by default): it changes who may read what.
  await runtime.watchPolicy((event) => logger.warn({ policy: event.kind }, event.message));
  const deps = depsFromRuntime(runtime, {
    auth,
    client,
    webRoot: options.webRoot ?? defaultWebRoot(),
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
      stderr.write(
        `${pc.yellow('warning:')} statements are checked on the main thread: the checker threads did not start (${cause instanceof Error ? cause.message : String(cause)}).\n`,
      );
      await configureCheckThreads(0);
    },
  );
  // Open the database, the memory store and the models now: problems show at start, not on the first question.
  await deps.assistant();
  // A superuser or a role that can write is worth a loud warning at start.
  const roleCheck = roleWarning(await checkDatabaseRole(runtime));
  if (roleCheck) stderr.write(`${pc.red(pc.bold('WARNING:'))} ${roleCheck}\n`);
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
  stdout.write(`Listening on http://${shownHost}:${address.port}\n`);
  stderr.write(
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
}
