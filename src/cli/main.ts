/**
 * Process entry of the `sqlrecall` binary. Exits once output is flushed, so a lingering keep-alive
 * socket or database handle can never keep a finished command alive.
 */
import './preflight.js';
import { exitOnUnhandledInterrupt } from './interrupt.js';
import { processIO } from './io.js';
import { runCli } from './program.js';

exitOnUnhandledInterrupt((text) => process.stderr.write(text));
const code = await runCli(process.argv.slice(2), processIO());
process.exitCode = code;
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
