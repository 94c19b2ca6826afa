/**
 * Which WebAssembly compiler tier a `sqlrecall` process uses for PGlite's postgres (9 MB of
 * WebAssembly) and libpg-query.
 *
 * By default V8 compiles every WebAssembly module twice: at once with its baseline compiler
 * (Liftoff), then again in the background with its optimizing compiler (TurboFan), and swaps the
 * optimized code in function by function. For a command that lives a second or two (`ask`,
 * `memory list`, `sql`) the second pass never pays off: on a 2-core machine the background compile
 * competes with the command itself, and its code is extra memory. Measured with
 * `bench/process-start.ts` on this project's 2-core machine
 * (docs/perf/2026-12-01-baseline-wasm-tier-and-bundle.md):
 * `ask` on the demo shop with the embedded store, baseline only against both tiers, first model
 * request 1.57 s against 2.35 s and peak RSS 219 MB against 310 MB.
 *
 * `serve` runs long but takes the baseline tier too: under `bench/http-load.ts` (50 users × 20
 * questions, same build, same machine) it answered as many questions per second at saturation
 * (60.7 against 63.6, within run-to-run spread) with 322–385 MB instead of 391–461 MB of RSS, and
 * started in 1.6–2.0 s instead of 2.4–2.7 s: its time goes to HTTP, JSON and the model client more
 * than to PostgreSQL's own code, and the optimizing compile ran while the first users asked.
 */

/**
 * Commands that keep V8's default (both tiers): interactive sessions and long jobs whose queries,
 * run many times in one process, gain from optimized code (`eval` runs whole benchmarks).
 */
export const OPTIMIZING_TIER_COMMANDS: readonly string[] = ['chat', 'demo', 'eval', 'mcp'];

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
  'hold',
  'help',
]);

/**
 * The tier for a process started with `args` (argv without node and the script): `optimizing`
 * (V8's default, both compilers) when its command is one of {@link OPTIMIZING_TIER_COMMANDS} or no
 * command is named; otherwise `baseline` (Liftoff only). The command is the first argument that
 * names one; an option's value that happens to be a command name (`--user chat ask …`) can pick the
 * wrong tier, which costs speed only, never correctness.
 */
export function wasmTierFor(args: readonly string[]): 'baseline' | 'optimizing' {
  const command = args.find((arg) => COMMANDS.has(arg));
  if (command === undefined || OPTIMIZING_TIER_COMMANDS.includes(command)) return 'optimizing';
  return 'baseline';
}
