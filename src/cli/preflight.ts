/**
 * Side effects that must happen before any other module of the CLI is evaluated: imported first by
 * the process entry, src/main.ts (ES modules evaluate their imports in order, depth first), so
 * nothing has compiled a WebAssembly module yet. Sets V8's `--liftoff-only` for the commands wasm-tier.ts names.
 * `SQLRECALL_WASM_TIER=optimizing` keeps V8's default for every command (to compare, or should a
 * short command turn out to run long on some database); `baseline` uses Liftoff only for every
 * command. Another value: a warning on stderr, then the default.
 */
import { setFlagsFromString } from 'node:v8';
import { envVariable } from '../config/env.js';
import { wasmTierFor } from './wasm-tier.js';

const forced = envVariable('SQLRECALL_WASM_TIER');
if (forced !== undefined && forced !== '' && forced !== 'baseline' && forced !== 'optimizing') {
  process.stderr.write(
    `warning: SQLRECALL_WASM_TIER=${JSON.stringify(forced)} is not baseline or optimizing; using the default for this command\n`,
  );
}
if (forced !== 'optimizing' && (forced === 'baseline' || wasmTierFor(process.argv.slice(2)) === 'baseline')) {
  setFlagsFromString('--liftoff-only');
}
