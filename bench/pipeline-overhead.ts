/**
 * Pipeline overhead benchmark: the time one question spends OUTSIDE the chat model, on a 100-table
 * schema with 10,000 memories for the asking user.
 *
 *   npx tsx bench/pipeline-overhead.ts [--tables 100] [--memories 10000] [--questions 50] [--quick] [--json]
 *
 * Setup: an embedded PGlite database with `--tables` generated tables (10–20 columns, 1–2 foreign
 * keys each); the real Runtime (`Runtime.assistant()`: schema context, memory classify/recall,
 * generation, guard, read-only execution, answer, turn recording); the scripted Ollama server with
 * zero delay standing in for the models; `--memories` memories (terms and metrics, lexical-hash
 * embeddings, 384 dimensions) written for the user through the memory store.
 *
 * Method (explicit): overhead = wall time of `ask()` − time spent waiting on the chat model's reply
 * streams as measured by the client (a metering wrapper around the chat model, so the loopback HTTP
 * round trip of those calls counts as model time). The query embedding call to the zero-delay
 * server IS part of the overhead here; a real embedding model adds its own time on top.
 * The first `--warmup` questions (default 5) are not counted. `--quick`: 1,000 memories, 20
 * questions (CI size).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { loadConfig } from '../src/config/config.js';
import type { MemoryOp } from '../src/core/memory.js';
import type { ChatModel } from '../src/core/ports.js';
import { meterChatModel } from '../src/eval/meter.js';
import { percentile } from '../src/eval/report.js';
import { Runtime } from '../src/runtime/runtime.js';
import { hashEmbedding } from '../test/support/scripted/embedding.js';
import { startScriptedOllama } from '../test/support/scripted/server.js';
import { memoryText, tableName, WORDS } from './support/memory-data.js';

const { values: args } = parseArgs({
  options: {
    tables: { type: 'string', default: '100' },
    memories: { type: 'string' },
    questions: { type: 'string' },
    warmup: { type: 'string', default: '5' },
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const tableCount = Number(args.tables);
const memoryCount = Number(args.memories ?? (args.quick ? 1000 : 10_000));
const questionCount = Number(args.questions ?? (args.quick ? 20 : 50));
const warmup = Number(args.warmup);
/** The model call the overhead is compared with. */
const ASSUMED_MODEL_CALL_MS = 2000;
const USER = 'bench-user';
const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

/** Deterministic pseudo-random numbers (mulberry32). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TYPES = ['integer', 'bigint', 'text', 'numeric(12,2)', 'boolean', 'date', 'timestamptz'];

function schemaDdl(count: number): string {
  const next = random(7);
  const pick = (n: number) => Math.floor(next() * n);
  const out: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const cols = ['id bigint PRIMARY KEY'];
    for (let k = 0; k < (i === 0 ? 0 : 1 + pick(2)); k += 1)
      cols.push(`ref${k}_id bigint REFERENCES ${tableName(pick(i))}(id)`);
    const total = 10 + pick(11);
    for (let c = cols.length; c < total; c += 1)
      cols.push(`c${c}_${WORDS[pick(WORDS.length)]} ${TYPES[pick(TYPES.length)]}`);
    out.push(`CREATE TABLE ${tableName(i)} (${cols.join(', ')});`);
    out.push(`INSERT INTO ${tableName(i)} (id) SELECT g FROM generate_series(1, 20) g;`);
  }
  return out.join('\n');
}

class MeteredRuntime extends Runtime {
  constructor(
    config: ConstructorParameters<typeof Runtime>[0],
    private readonly metered: ChatModel,
  ) {
    super(config);
  }
  override chat(): ChatModel {
    return this.metered;
  }
}

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'sqlrecall-bench-overhead-'));
  const dbDir = join(home, 'db');
  const model = await startScriptedOllama({
    chat: (request) => {
      const system = request.messages[0]?.content ?? '';
      if (!system.startsWith(SQL_PROMPT_MARKER)) return 'There are 20 rows.';
      const n = /table (\d+)/.exec(request.lastUserMessage)?.[1] ?? '1';
      return `\`\`\`sql\nSELECT count(*) AS rows FROM ${tableName(Number(n) % tableCount)}\n\`\`\``;
    },
  });
  let runtime: MeteredRuntime | undefined;
  try {
    log(`creating ${tableCount} tables…`);
    const pglite = new PGlite(dbDir);
    await pglite.exec(schemaDdl(tableCount));
    await pglite.close();
    const config = loadConfig({
      env: { OLLAMA_HOST: model.url, SQLRECALL_HOME: home, DATABASE_URL: `pglite:${dbDir}` },
      cwd: home,
      flags: {},
    });
    const chat = meterChatModel(new Runtime(config).chat());
    runtime = new MeteredRuntime(config, chat);
    const memory = await runtime.memory();
    log(`writing ${memoryCount} memories for ${USER}…`);
    const started = performance.now();
    for (let from = 0; from < memoryCount; from += 500) {
      const ops: MemoryOp[] = [];
      for (let i = from; i < Math.min(memoryCount, from + 500); i += 1) {
        const m = memoryText(i, tableCount);
        ops.push({ op: 'add', memory: { kind: m.kind, text: m.text }, embedding: hashEmbedding(m.text) });
      }
      await memory.store.write({ user: USER }, ops);
    }
    log(`memories written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const stored = (await memory.store.list({ user: USER }, { limit: memoryCount + 10 })).length;
    const assistant = await runtime.assistant();
    const overheads: number[] = [];
    const walls: number[] = [];
    let modelCalls = 0;
    for (let q = 0; q < warmup + questionCount; q += 1) {
      const before = chat.reading();
      const t0 = performance.now();
      for await (const step of assistant.ask({
        user: USER,
        message: `How many rows are in table ${q * 7}?`,
      })) {
        if (step.type === 'done' && step.outcome.result?.rowCount !== 1) throw new Error('unexpected result');
      }
      const wall = performance.now() - t0;
      const after = chat.reading();
      if (q < warmup) continue;
      walls.push(wall);
      overheads.push(wall - (after.modelMs - before.modelMs));
      modelCalls += after.calls - before.calls;
    }
    const p50 = percentile(overheads, 50);
    const p95 = percentile(overheads, 95);
    const report = {
      tables: tableCount,
      memories: stored,
      questions: questionCount,
      modelCallsPerQuestion: modelCalls / questionCount,
      overheadMs: { p50: round(p50), p95: round(p95) },
      wallMs: { p50: round(percentile(walls, 50)), p95: round(percentile(walls, 95)) },
      assumedModelCallMs: ASSUMED_MODEL_CALL_MS,
      shareOfModelCall: {
        p50: round(p50 / ASSUMED_MODEL_CALL_MS, 4),
        p95: round(p95 / ASSUMED_MODEL_CALL_MS, 4),
      },
    };
    if (args.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else {
      console.log(
        `Pipeline overhead outside the chat model: ${tableCount} tables, ${stored} memories for the user, ${questionCount} questions (after ${warmup} warm-up), ${report.modelCallsPerQuestion} chat calls per question`,
      );
      console.log('| measure | p50 | p95 |');
      console.log('|---|---:|---:|');
      console.log(
        `| overhead outside the model | ${report.overheadMs.p50} ms | ${report.overheadMs.p95} ms |`,
      );
      console.log(
        `| whole question (zero-delay model) | ${report.wallMs.p50} ms | ${report.wallMs.p95} ms |`,
      );
      console.log(
        `| overhead / one ${ASSUMED_MODEL_CALL_MS / 1000}-second model call | ${(report.shareOfModelCall.p50 * 100).toFixed(1)}% | ${(report.shareOfModelCall.p95 * 100).toFixed(1)}% |`,
      );
    }
  } finally {
    await runtime?.close();
    await model.close();
    rmSync(home, { recursive: true, force: true });
  }
}

function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

main().catch((error: unknown) => {
  log(`benchmark failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
