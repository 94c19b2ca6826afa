/**
 * Dialect-repair benchmark: dialect-broken variants of the defog gold queries, made by
 * rule, go through the real generate → extract → guard → identifier check → execute → empty-result
 * loop; a scripted model writes the broken variant first and replays the gold SQL on the repair
 * call. Printed: how many variants end with exactly the gold rows, with repairs (the default
 * `--max-repairs` 2) and without any repair round (`maxRepairs` 0: what happened before, when a
 * parse error was refused at once and an empty result was final), plus the share refused by the
 * guard's parser.
 *
 *   npx tsx bench/dialect-repair.ts            # all eleven databases
 *   npx tsx bench/dialect-repair.ts --quick    # four databases (CI size, well under a minute)
 *
 * Rules (each applied when it changes the gold SQL): backticks around the first FROM table (or
 * instead of every double-quoted identifier); a trailing `LIMIT n` as `SELECT TOP n`; a trailing
 * `LIMIT n` as MySQL's `LIMIT 0, n`; every string literal of an `=` comparison lower-cased.
 * Databases are loaded into in-memory PGlite from the benchmark data folder (SQLRECALL_BENCHMARKS_DIR,
 * see test/support/shared-data.ts); nothing external.
 */
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { readDatabaseSession } from '../src/agent/assistant.js';
import { generateAndRun } from '../src/agent/generate.js';
import type { ChatModel, DatabaseConnector } from '../src/core/ports.js';
import type { Table } from '../src/core/schema.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { expandGoldQuery, readDefogCsv, splitGoldQueries } from '../src/eval/gold.js';
import type { ValueHint } from '../src/linking/documents.js';
import { createValueSampler } from '../src/linking/value-hints.js';
import { guardSql } from '../src/sql/guard.js';
import { DEFOG_DATABASES, defogDump } from '../test/support/defog.js';
import { benchmarkPath } from '../test/support/shared-data.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    dbs: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});
const QUICK_DBS = ['restaurants', 'ewallet', 'broker', 'car_dealership'];
const dbNames: string[] = args.dbs ? args.dbs.split(',') : args.quick ? QUICK_DBS : [...DEFOG_DATABASES];

type Rule = 'backticks' | 'top' | 'limit-a-b' | 'lower-literals';

/** The dialect-broken variants of one gold query, by rule (only those that change it). */
function variants(gold: string): { rule: Rule; sql: string }[] {
  const out: { rule: Rule; sql: string }[] = [];
  const quoted = /"([A-Za-z_][A-Za-z0-9_ ]*)"/g;
  const backticked = quoted.test(gold)
    ? gold.replace(quoted, '`$1`')
    : gold.replace(/\bFROM\s+([a-z_][a-z0-9_]*)/i, 'FROM `$1`');
  if (backticked !== gold) out.push({ rule: 'backticks', sql: backticked });
  const limit = /\s+LIMIT\s+(\d+)\s*;?\s*$/i.exec(gold);
  if (limit) {
    const body = gold.slice(0, limit.index);
    if (/^\s*SELECT\s+(?!DISTINCT\b)/i.test(body) && !/\bUNION\b|\bINTERSECT\b|\bEXCEPT\b/i.test(body))
      out.push({ rule: 'top', sql: body.replace(/^\s*SELECT\s+/i, `SELECT TOP ${limit[1]} `) });
    out.push({ rule: 'limit-a-b', sql: `${body} LIMIT 0, ${limit[1]}` });
  }
  const lowered = gold.replace(
    /(=\s*)'((?:[^']|'')*)'/g,
    (_m, eq: string, text: string) => `${eq}'${text.toLowerCase()}'`,
  );
  if (lowered !== gold) out.push({ rule: 'lower-literals', sql: lowered });
  return out;
}

function scripted(first: string, gold: string): ChatModel & { calls: number } {
  const model: ChatModel & { calls: number } = {
    id: 'replay',
    calls: 0,
    async *stream() {
      model.calls += 1;
      yield { type: 'text-delta', text: `\`\`\`sql\n${model.calls === 1 ? first : gold}\n\`\`\`` };
      yield { type: 'finish', finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
    },
  };
  return model;
}

const canon = (rows: unknown[][]) =>
  rows
    .map((r) => JSON.stringify(r))
    .sort()
    .join('\n');

async function run(
  db: DatabaseConnector,
  input: Omit<Parameters<typeof generateAndRun>[0], 'chat' | 'maxRepairs' | 'db'>,
  first: string,
  gold: string,
  maxRepairs: number,
): Promise<{ rows: string | null; calls: number }> {
  const chat = scripted(first, gold);
  const loop = generateAndRun({ ...input, db, chat, maxRepairs });
  try {
    for (;;) {
      const next = await loop.next();
      if (next.done)
        return { rows: next.value.sql ? canon(next.value.result.rows) : null, calls: chat.calls };
    }
  } catch {
    return { rows: null, calls: chat.calls };
  }
}

const questions = await readDefogCsv(benchmarkPath('defog', 'questions_gen_postgres.csv'));
const totals = { gold: 0, goldExtra: 0, variants: 0, before: 0, after: 0, refusedBefore: 0, repairCalls: 0 };
const byRule = new Map<Rule, { n: number; before: number; after: number }>();
const started = performance.now();
for (const name of dbNames) {
  const pglite = new PGlite();
  await pglite.exec(defogDump(name));
  const db = createPgliteConnector({ pglite });
  const schema = await db.introspect();
  const session = await readDatabaseSession(db, 30_000);
  const cache = new Map<Table, Promise<ValueHint[]>>();
  const sampler = createValueSampler(db);
  const valueHints = (t: Table) => {
    if (!cache.has(t)) cache.set(t, sampler(t));
    return cache.get(t)!;
  };
  const input = {
    messages: [],
    maxRows: 100_000,
    statementTimeoutMs: 30_000,
    maxTokens: 1024,
    schema,
    valueHints,
    ...(session.searchPath ? { searchPath: session.searchPath } : {}),
  };
  for (const q of questions.filter((x) => x.dbName === name)) {
    const gold = expandGoldQuery(splitGoldQueries(q.query)[0]!, 'first')[0]!;
    let goldRows: string;
    try {
      goldRows = canon((await db.execute(gold, { maxRows: 100_000, timeoutMs: 30_000 })).rows);
    } catch {
      continue;
    }
    const itself = await run(db, input, gold, gold, 2);
    totals.gold += 1;
    if (itself.calls !== 1 || itself.rows !== goldRows) {
      totals.goldExtra += 1;
      if (args.verbose) console.log(`gold needed ${itself.calls} calls: ${gold}`);
    }
    for (const v of variants(gold)) {
      const verdict = await guardSql(v.sql);
      if (!verdict.ok && verdict.rule !== 'parse-error') continue; // not a dialect slip
      const before = await run(db, input, v.sql, gold, 0);
      const after = await run(db, input, v.sql, gold, 2);
      if (before.rows === goldRows && after.rows === goldRows && after.calls === 1) continue; // not broken
      if (args.verbose && after.rows !== goldRows) console.log(`not repaired (${v.rule}): ${v.sql}`);
      totals.variants += 1;
      if (!verdict.ok) totals.refusedBefore += 1;
      if (before.rows === goldRows) totals.before += 1;
      if (after.rows === goldRows) totals.after += 1;
      totals.repairCalls += after.calls - 1;
      const r = byRule.get(v.rule) ?? { n: 0, before: 0, after: 0 };
      r.n += 1;
      if (before.rows === goldRows) r.before += 1;
      if (after.rows === goldRows) r.after += 1;
      byRule.set(v.rule, r);
    }
  }
  await db.close();
}
const pct = (a: number, n: number) => (n === 0 ? '-' : `${((100 * a) / n).toFixed(1)} %`);
console.log(`databases: ${dbNames.join(', ')}`);
console.log(`dialect-broken variants (gold rows differ or a repair was needed): ${totals.variants}`);
console.log('| rule | variants | gold rows without repair (before) | gold rows after repair |');
console.log('|---|---|---|---|');
for (const [rule, r] of [...byRule].sort())
  console.log(`| ${rule} | ${r.n} | ${pct(r.before, r.n)} | ${pct(r.after, r.n)} |`);
console.log(
  `| all | ${totals.variants} | ${pct(totals.before, totals.variants)} | ${pct(totals.after, totals.variants)} |`,
);
console.log(`refused at once before (parse errors): ${pct(totals.refusedBefore, totals.variants)}`);
console.log(
  `repair model calls: ${totals.repairCalls} (${(totals.repairCalls / Math.max(1, totals.variants)).toFixed(2)} per variant)`,
);
console.log(
  `gold queries as the first reply: ${totals.gold}; needing more than one model call or not ending with the gold rows: ${totals.goldExtra}`,
);
console.log(`time: ${((performance.now() - started) / 1000).toFixed(1)} s`);
