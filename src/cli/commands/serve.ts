/**
 * `sqlrecall serve [--port 8484] [--host 127.0.0.1] [--users]`: the HTTP API and the web UI.
 * This module parses the flags and builds the runtime; the server itself (`server/start.ts`) is
 * handed in by the process entry, since the CLI never imports the server (`runtime/http-front-end.ts`).
 * Runs until SIGINT/SIGTERM.
 */
import { SqlrecallError } from '../../core/errors.js';
import { type FrontEnds, isLoopback } from '../../runtime/http-front-end.js';
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

/**
 * Runs `serve` until a signal stops it; returns the exit code.
 * @throws nothing: a missing HTTP front end (a CLI composed without one) is reported as exit 1
 */
export async function runServe(io: CliIO, opts: ServeOptions, frontEnds: FrontEnds = {}): Promise<number> {
  return withRuntime(
    io,
    opts,
    async (runtime, config) => {
      const port = opts.port === undefined ? 8484 : Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new SqlrecallError('usage', '--port must be a whole number from 0 to 65535.');
      const host = opts.host ?? '127.0.0.1';
      if (!frontEnds.httpServer)
        throw new SqlrecallError('internal', 'This build of sqlrecall has no HTTP server to start.');
      const start = await frontEnds.httpServer();
      await start({
        runtime,
        config,
        port,
        host,
        multiUser: Boolean(opts.users) || !isLoopback(host),
        webRoot: opts.web,
        stdout: io.stdout,
        stderr: io.stderr,
        styles: pc,
      });
      return 0;
    },
    { warn: warnTo(io) },
  );
}
