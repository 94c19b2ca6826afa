/**
 * Which WebAssembly compiler tier a `sqlrecall` process uses for PGlite's postgres (9 MB of
 * WebAssembly) and libpg-query.
 *
 * By default V8 compiles every WebAssembly module twice: at once with its baseline compiler
 * (Liftoff), then again in the background with its optimizing compiler (TurboFan), and swaps the
 * optimized code in function by function. For a long-lived process (a chat, the HTTP server) the
 * second pass pays off. For a command that lives a second or two (`ask`, `memory list`, `sql`) it
 * never does: on a 2-core machine the background compile competes with the command itself, and its
 * code is extra memory. Measured with `bench/process-start.ts` on this project's 2-core machine
 * (BENCHMARKS.md, issue 15 third session): `ask` on the demo shop with the embedded store,
 * baseline only against both tiers, first model request 1.57 s against 2.35 s and peak RSS 219 MB
 * against 310 MB.
 */

/** Commands that run until the user stops them (or run long jobs): they keep the optimizing tier. */
export const LONG_RUNNING_COMMANDS: readonly string[] = ['chat', 'demo', 'eval', 'serve', 'mcp'];

/** Every top-level command of the CLI (program.ts), to find which one an argument list runs. */
const COMMANDS = new Set([
  'ask',
  'chat',
  'memory',
  'sql',
  'schema',
  'doctor',
  'demo',
  'eval',
  'serve',
  'users',
  'mcp',
  'help',
]);

/**
 * The tier for a process started with `args` (argv without node and the script): `optimizing`
 * (V8's default, both compilers) when its command is one of {@link LONG_RUNNING_COMMANDS} or no
 * command is named; otherwise `baseline` (Liftoff only). The command is the first argument that
 * names one; an option's value that happens to be a command name (`--user chat ask …`) can pick the
 * wrong tier, which costs speed only, never correctness.
 */
export function wasmTierFor(args: readonly string[]): 'baseline' | 'optimizing' {
  const command = args.find((arg) => COMMANDS.has(arg));
  if (command === undefined || LONG_RUNNING_COMMANDS.includes(command)) return 'optimizing';
  return 'baseline';
}
