/**
 * Runs the scripted Ollama server as its own process, replies from a script file (see `script.ts`
 * for the format). Prints the server URL as one line on stdout once it listens; logs go to stderr.
 *
 * Usage: `node --import tsx test/support/scripted/main.ts --script FILE [--port N] [--exit-with-stdin] [--verbose]`
 * - `--port N`: listen on 127.0.0.1:N (default: an ephemeral port);
 * - `--exit-with-stdin`: stop when stdin closes (so the server dies with the test that spawned it);
 * - `--verbose`: one stderr line per request (endpoint, purpose, last user message).
 * Stops on SIGINT/SIGTERM. Exit code 2 for a bad command line or script.
 */
import { parseArgs } from 'node:util';
import { loadScript, scriptOptions } from './script.js';
import { startScriptedOllama } from './server.js';

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      script: { type: 'string' },
      port: { type: 'string' },
      'exit-with-stdin': { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
    },
    allowPositionals: true,
  });
  const scriptPath = values.script ?? positionals[0];
  if (!scriptPath) throw new UsageError('missing --script FILE');
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`invalid --port ${values.port}`);
  let script: Awaited<ReturnType<typeof loadScript>>;
  try {
    script = await loadScript(scriptPath);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const options = scriptOptions(script);
  const handler = options.chat!;
  const server = await startScriptedOllama({
    ...options,
    port,
    chat: (request) => {
      if (values.verbose) {
        const said = request.lastUserMessage.replace(/\s+/g, ' ').slice(0, 120);
        process.stderr.write(
          `scripted-ollama: ${request.endpoint} purpose=${request.purpose ?? '-'} "${said}"\n`,
        );
      }
      return handler(request);
    },
  });
  process.stdout.write(`${server.url}\n`);

  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (values['exit-with-stdin']) {
    process.stdin.on('end', stop);
    process.stdin.on('close', stop);
    process.stdin.resume();
  }
}

class UsageError extends Error {}

main().catch((error: unknown) => {
  process.stderr.write(`scripted-ollama: ${(error as Error).message}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
