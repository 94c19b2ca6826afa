/**
 * Issue 4, "Fuzzing": at least 100,000 random and mutated inputs (fast-check) each get a verdict —
 * never a crash, never a hang — and a mutated input that PostgreSQL's parser reads as a write is
 * never accepted. The oracle is independent of the guard's code: it parses the input itself and
 * looks for write nodes, several statements, non-read statements, EXPLAIN ANALYZE and a few denied
 * functions. Seeds: the attack corpus and the tricky reads. `SQLRECALL_FUZZ_RUNS` scales the runs.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { parseSync } from 'libpg-query';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GuardVerdict, guardSqlSync, loadGuardParser } from '../src/sql/guard.js';
import { ATTACKS } from './support/attacks.js';

const READS = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), 'corpus', 'reads', 'reads.jsonl'),
  'utf8',
)
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => (JSON.parse(line) as { sql: string }).sql);
const SEEDS = [...ATTACKS.map((a) => a.sql), ...READS];

/** Total inputs: 4 properties share them (≥ 100,000 by default). */
const TOTAL_RUNS = Number(process.env.SQLRECALL_FUZZ_RUNS ?? 100_000);
const RUNS = Math.ceil(TOTAL_RUNS / 4);

const WRITE_NODES = /"(InsertStmt|UpdateStmt|DeleteStmt|MergeStmt|TruncateStmt|intoClause|lockingClause)"/;
const DENIED = new Set([
  'pg_sleep',
  'dblink',
  'dblink_exec',
  'set_config',
  'nextval',
  'setval',
  'lo_import',
  'pg_read_file',
]);

/** The oracle: why PostgreSQL's own parse of `sql` is not a plain read, or undefined when it is one. */
function writeReason(sql: string): string | undefined {
  let tree: { stmts: { stmt: Record<string, unknown> }[] };
  try {
    tree = parseSync(sql) as unknown as typeof tree;
  } catch {
    return undefined; // does not parse: not a write (and the guard must refuse it anyway)
  }
  if (tree.stmts.length !== 1) return `${tree.stmts.length} statements`;
  const stmt = tree.stmts[0]!.stmt;
  const type = Object.keys(stmt)[0] ?? '';
  if (type !== 'SelectStmt' && type !== 'ExplainStmt') return type;
  const json = JSON.stringify(stmt);
  const write = WRITE_NODES.exec(json)?.[1];
  if (write) return write;
  if (type === 'ExplainStmt' && /"defname":"analy[sz]e"/i.test(json)) return 'EXPLAIN ANALYZE';
  for (const match of json.matchAll(
    /"funcname":\[(?:\{"String":\{"sval":"[^"]*"\}\},)*\{"String":\{"sval":"([^"]*)"\}\}\]/g,
  ))
    if (DENIED.has(match[1]!.toLowerCase())) return match[1];
  return undefined;
}

/** Inputs seen: accepted, refused, and refused although PostgreSQL parses them (the interesting ones). */
const counts = { accepted: 0, refused: 0, refusedButParses: 0 };

/** Checks one input; returns a problem description, or undefined when all is well. */
function problem(sql: string): string | undefined {
  let verdict: GuardVerdict;
  try {
    verdict = guardSqlSync(sql);
  } catch (error) {
    return `threw ${String(error)}`;
  }
  if (!verdict.ok) {
    counts.refused += 1;
    if (verdict.rule !== 'parse-error' && verdict.rule !== 'empty' && verdict.rule !== 'nul-byte')
      counts.refusedButParses += 1;
    return verdict.reason === '' ? 'empty reason' : undefined;
  }
  counts.accepted += 1;
  const why = writeReason(sql) ?? writeReason(verdict.sql);
  if (why) return `accepted a write (${why})`;
  if (!sql.includes(verdict.sql)) return 'accepted text that is not in the input';
  return undefined;
}

const PIECES = [
  ';',
  '; DELETE FROM t',
  ' DELETE FROM t ',
  'INSERT INTO t VALUES (1)',
  'UPDATE t SET v = 1',
  ' INTO x ',
  ' FOR UPDATE',
  'WITH d AS (DELETE FROM t RETURNING 1) ',
  '(WITH u AS (UPDATE t SET v = 1 RETURNING 1) SELECT 1 FROM u)',
  ' UNION SELECT 1',
  'SELECT ',
  ' FROM t',
  '--',
  '\n',
  '/*',
  '*/',
  "'",
  "''",
  '"',
  '$$',
  '$x$',
  "E'\\'",
  '\\',
  '(',
  ')',
  'pg_sleep(1)',
  'BEGIN;',
  'COMMIT',
  'EXPLAIN ANALYZE ',
  'TABLE t',
  'VALUES (1)',
  'U&',
  '\u0000',
  'é',
];

/** One mutation of `text` at a position chosen by `at` ∈ [0, 1). */
const mutation = fc.tuple(
  fc.double({ min: 0, max: 0.9999, noNaN: true }),
  fc.nat(PIECES.length - 1),
  fc.nat(4),
);

function mutate(text: string, [at, piece, kind]: [number, number, number]): string {
  const i = Math.floor(at * (text.length + 1));
  switch (kind) {
    case 0:
      return text.slice(0, i) + PIECES[piece]! + text.slice(i);
    case 1:
      return text.slice(0, i) + text.slice(i + 1 + (piece % 4));
    case 2:
      return text.slice(0, i) + PIECES[piece]! + text.slice(i + 1);
    case 3:
      return text.slice(0, i) + text.slice(i).toUpperCase();
    default:
      return text + PIECES[piece]!;
  }
}

describe('guard fuzzing', () => {
  beforeAll(async () => {
    await loadGuardParser();
  });
  afterAll(() => {
    const total = counts.accepted + counts.refused;
    console.log(
      `fuzz: ${total} inputs, ${counts.accepted} accepted (oracle-checked), ${counts.refused} refused ` +
        `(${counts.refusedButParses} of them valid PostgreSQL refused by a policy rule)`,
    );
  });

  const check = (sql: string) => {
    const found = problem(sql);
    if (found) throw new Error(`${found}: ${JSON.stringify(sql)}`);
  };

  it(`mutated corpus statements (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SEEDS),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        (seed, steps) => check(steps.reduce(mutate, seed)),
      ),
      { numRuns: RUNS },
    );
  }, 120_000);

  it(`reads with clauses spliced in at word boundaries (${RUNS} runs)`, () => {
    // Whole clauses at spaces keep much of the input valid SQL, so the oracle sees real parses.
    const clauses = [
      ' FOR UPDATE',
      ' FOR SHARE',
      ' INTO stolen',
      ' UNION (WITH d AS (DELETE FROM t RETURNING 1) SELECT 1 FROM d)',
      '; DELETE FROM t',
      ' WHERE pg_sleep(1) IS NULL',
      ' (SELECT nextval($$s$$))',
      ', pg_catalog.set_config($$a$$, $$b$$, false)',
      ' LIMIT 1',
      ' ORDER BY 1',
      ' /* ; DROP TABLE t */',
      ' -- ; DROP TABLE t\n',
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...READS),
        fc.array(fc.tuple(fc.double({ min: 0, max: 0.9999, noNaN: true }), fc.constantFrom(...clauses)), {
          minLength: 1,
          maxLength: 2,
        }),
        (seed, steps) => {
          let text = seed;
          for (const [at, clause] of steps) {
            const spaces = [...text.matchAll(/ /g)].map((m) => m.index!).concat(text.length);
            const i = spaces[Math.floor(at * spaces.length)]!;
            text = text.slice(0, i) + clause + text.slice(i);
          }
          check(text);
        },
      ),
      { numRuns: RUNS },
    );
  }, 120_000);

  it(`two seeds joined by a random separator (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SEEDS),
        fc.constantFrom(';', ' ', '\n', ' UNION ', ' -- \n', '/* */;', ';;', ', '),
        fc.constantFrom(...SEEDS),
        (a, separator, b) => check(a + separator + b),
      ),
      { numRuns: RUNS },
    );
  }, 120_000);

  it(`random text, random SQL-ish tokens (${RUNS} runs)`, () => {
    const token = fc.oneof(
      fc.constantFrom(...PIECES, 'SELECT', 'FROM', 'WHERE', 'a', '1', ',', '*', 'AS', 'JOIN', 'ON', '='),
      fc.string({ maxLength: 6 }),
      fc.string({ unit: 'grapheme', maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 16 }), (tokens) => check(tokens.join(' '))),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('the oracle itself sees writes (so the fuzz checks have teeth)', () => {
    expect(writeReason('SELECT 1; DELETE FROM t')).toBe('2 statements');
    expect(writeReason('WITH d AS (DELETE FROM t RETURNING 1) SELECT 1')).toBe('DeleteStmt');
    expect(writeReason('SELECT * FROM t FOR UPDATE')).toBe('lockingClause');
    expect(writeReason('SELECT pg_catalog.PG_SLEEP(1)')).toBe('PG_SLEEP'.toLowerCase());
    expect(writeReason('SELECT 1')).toBeUndefined();
    expect(problem('SELECT 1')).toBeUndefined();
  });
});
