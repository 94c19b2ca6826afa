/**
 * What client isolation costs on a shared embedded database (src/databases/pglite/session-gate.ts):
 * the session is saved, reset and restored only when another party gets it, so a party that runs
 * statement after statement pays nothing and every change of party pays one switch.
 *
 *   npx tsx bench/session-switch.ts [--rounds 200] [--json]
 *
 * One in-memory PGlite served on a Unix socket, the owner (in process) and one `pg` socket client
 * (as another sqlrecall process uses it), each running `SELECT 1`. Three patterns, each with
 * isolation off (a gate without a session switch: the behaviour before) and on, alternated in one
 * run: owner only, client only, and owner and client taking turns (every statement a switch).
 * Reported: mean milliseconds per statement; the switch cost is the difference between the
 * alternating pattern with isolation on and off.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { Gate, pgliteSessionSwitch } from '../src/databases/pglite/session-gate.js';
import { startWireMux } from '../src/databases/pglite/wire-mux.js';

const { values: args } = parseArgs({
  options: { rounds: { type: 'string' }, json: { type: 'boolean', default: false } },
});
const rounds = Number(args.rounds ?? 200);

const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-switch-'));
const db = new PGlite();
await db.waitReady;

type Pattern = 'owner only' | 'client only' | 'alternating';
const results: Record<string, number> = {};

async function measure(isolated: boolean): Promise<void> {
  const gate = isolated ? new Gate(pgliteSessionSwitch(db), [['search_path', 'public']]) : new Gate();
  const runDir = join(dir, isolated ? 'on' : 'off');
  const mux = await startWireMux(db, gate, runDir);
  const client = new pg.Client({ host: runDir, user: 'postgres', database: 'postgres' });
  await client.connect();
  const owner = () => gate.run(() => db.query('SELECT 1'));
  const viaSocket = () => client.query('SELECT 1');
  const patterns: Record<Pattern, (i: number) => Promise<unknown>> = {
    'owner only': () => owner(),
    'client only': () => viaSocket(),
    alternating: (i) => (i % 2 === 0 ? owner() : viaSocket()),
  };
  for (const [name, step] of Object.entries(patterns)) {
    for (let i = 0; i < 20; i += 1) await step(i); // warm-up
    const started = performance.now();
    for (let i = 0; i < rounds; i += 1) await step(i);
    results[`${name} (${isolated ? 'on' : 'off'})`] = (performance.now() - started) / rounds;
  }
  await client.end();
  await mux.close();
}

try {
  for (let pass = 0; pass < 2; pass += 1) {
    // Alternate before/after twice; keep the better figure of each (less noise from other load).
    const previous = { ...results };
    await measure(false);
    await measure(true);
    for (const [key, value] of Object.entries(previous))
      results[key] = Math.min(value, results[key] ?? value);
  }
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  const switchCost = (results['alternating (on)'] ?? 0) - (results['alternating (off)'] ?? 0);
  if (args.json) {
    process.stdout.write(
      `${JSON.stringify({ rounds, msPerStatement: results, switchMs: round(switchCost) }, null, 2)}\n`,
    );
  } else {
    process.stdout.write(
      `Session isolation on a shared PGlite: SELECT 1, ${rounds} statements per pattern\n`,
    );
    process.stdout.write('pattern        isolation off   isolation on\n');
    for (const name of ['owner only', 'client only', 'alternating'])
      process.stdout.write(
        `${name.padEnd(14)} ${String(round(results[`${name} (off)`] ?? Number.NaN)).padStart(9)} ms   ${String(round(results[`${name} (on)`] ?? Number.NaN)).padStart(9)} ms\n`,
      );
    process.stdout.write(`one switch (save, reset, restore): ${round(switchCost)} ms\n`);
  }
} finally {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
