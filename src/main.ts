/**
 * Process entry of the `sqlrecall` binary and the composition root of the front ends: the command
 * line runs every command, and `serve` starts the HTTP server it receives from here. It lives above
 * `cli/` and `server/` because those two are siblings that never import each other; only this
 * module knows both (the server is still loaded lazily, when `serve` runs). Exits once output is
 * flushed, so a lingering keep-alive socket or database handle can never keep a finished command
 * alive.
 */
import './cli/preflight.js';
import { exitOnUnhandledInterrupt } from './cli/interrupt.js';
import { processIO } from './cli/io.js';
import { runCli } from './cli/program.js';

exitOnUnhandledInterrupt((text) => process.stderr.write(text));
const code = await runCli(process.argv.slice(2), processIO(), {
  httpServer: async () => (await import('./server/start.js')).startHttpServer,
});
process.exitCode = code;
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
