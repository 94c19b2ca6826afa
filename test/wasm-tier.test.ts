import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPTIMIZING_TIER_COMMANDS, wasmTierFor } from '../src/cli/wasm-tier.js';

const BIN = join(import.meta.dirname, '..', 'bin', 'sqlrecall.js');

describe('WebAssembly tier per command (issue 15, fast start)', () => {
  it('short commands and serve use the baseline compiler only; chat, demo, eval and mcp keep the optimizing tier', () => {
    expect(wasmTierFor(['ask', 'how many orders?'])).toBe('baseline');
    expect(wasmTierFor(['--db', 'pglite:/x', '--user', 'priya', 'memory', 'list'])).toBe('baseline');
    expect(wasmTierFor(['sql', 'SELECT 1'])).toBe('baseline');
    expect(wasmTierFor(['users', 'add', 'bob'])).toBe('baseline');
    expect(wasmTierFor(['serve', '--users', '--port', '8080'])).toBe('baseline');
    for (const command of OPTIMIZING_TIER_COMMANDS) {
      expect(wasmTierFor(['--json', command])).toBe('optimizing');
    }
    // No command (bare `sqlrecall`, `--version`): V8's default.
    expect(wasmTierFor([])).toBe('optimizing');
    expect(wasmTierFor(['--version'])).toBe('optimizing');
    // The first argument naming a command decides, not a later word of the question.
    expect(wasmTierFor(['ask', 'chat', 'logs', 'per', 'day'])).toBe('baseline');
    expect(wasmTierFor(['chat', '--user', 'ask'])).toBe('optimizing');
  });

  it('the CLI entry reads SQLRECALL_WASM_TIER before anything else and warns on a value it does not know', () => {
    const bogus = spawnSync(process.execPath, [BIN, '--version'], {
      env: { ...process.env, SQLRECALL_WASM_TIER: 'turbo' },
      encoding: 'utf8',
    });
    expect(bogus.status).toBe(0);
    expect(bogus.stderr).toContain('SQLRECALL_WASM_TIER="turbo" is not baseline or optimizing');
    const known = spawnSync(process.execPath, [BIN, '--version'], {
      env: { ...process.env, SQLRECALL_WASM_TIER: 'baseline' },
      encoding: 'utf8',
    });
    expect(known.status).toBe(0);
    expect(known.stderr).toBe('');
  });
});
