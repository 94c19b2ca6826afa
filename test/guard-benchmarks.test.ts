/**
 * The extractor and the read-only guard on real SQL: every defog gold query (all `{…}` expansions)
 * must be accepted; every model-written statement from BIRD mini-dev that PostgreSQL parses as a
 * single read must be accepted, and the rest refused with a clear reason; none may crash.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadModule, parseSync } from 'libpg-query';
import { beforeAll, describe, expect, it } from 'vitest';
import { expandGoldQuery, readDefogCsv, splitGoldQueries } from '../src/eval/gold.js';
import { extractSql } from '../src/sql/extract.js';
import { guardSql } from '../src/sql/guard.js';
import { MESSY_FORMS } from './support/messy.js';
import { benchmarkPath, HAS_BENCHMARKS } from './support/shared-data.js';

const DEFOG_FILES = [
  'questions_gen_postgres.csv',
  'instruct_basic_postgres.csv',
  'instruct_advanced_postgres.csv',
];
const WRITE_MARKERS = /"(?:InsertStmt|UpdateStmt|DeleteStmt|MergeStmt|intoClause|lockingClause)"/;

interface ModelSql {
  id: number;
  model: string;
  db: string;
  sql: string;
}

/** The test's own notion of a read, from the raw parse tree (independent of the guard's code). */
function classify(sql: string): 'read' | 'several' | 'other' | 'unparsable' {
  let tree: { stmts: { stmt: Record<string, unknown> }[] };
  try {
    tree = parseSync(sql) as unknown as typeof tree;
  } catch {
    return 'unparsable';
  }
  if (tree.stmts.length !== 1) return 'several';
  const stmt = tree.stmts[0]!.stmt;
  return Object.keys(stmt)[0] === 'SelectStmt' && !WRITE_MARKERS.test(JSON.stringify(stmt))
    ? 'read'
    : 'other';
}

const oneSpace = (sql: string) => sql.replace(/\s+/g, ' ').trim();

describe.skipIf(!HAS_BENCHMARKS)('guard and extractor on real benchmark SQL', () => {
  beforeAll(async () => {
    await loadModule();
  });

  it('accepts every defog gold query, every {…} expansion', async () => {
    let queries = 0;
    const refused: string[] = [];
    for (const file of DEFOG_FILES) {
      for (const question of await readDefogCsv(benchmarkPath('defog', file))) {
        for (const gold of splitGoldQueries(question.query)) {
          for (const sql of expandGoldQuery(gold, 'all')) {
            queries += 1;
            const verdict = await guardSql(sql);
            if (!verdict.ok) refused.push(`${verdict.reason}: ${sql}`);
            else expect(verdict.sql).toBe(sql);
          }
        }
      }
    }
    console.log(`defog gold: ${queries} expanded queries, ${queries - refused.length} accepted`);
    expect(refused).toEqual([]);
    expect(queries).toBeGreaterThan(400);
  });

  it('extracts every first-expansion gold query from every messy form', async () => {
    let cases = 0;
    const wrong: string[] = [];
    for (const file of DEFOG_FILES) {
      for (const question of await readDefogCsv(benchmarkPath('defog', file))) {
        for (const gold of splitGoldQueries(question.query)) {
          const sql = expandGoldQuery(gold, 'first')[0]!;
          for (const form of MESSY_FORMS) {
            cases += 1;
            const result = extractSql(form.wrap(sql));
            if (!result.ok || oneSpace(result.sql) !== oneSpace(sql))
              wrong.push(`${form.name}: ${JSON.stringify(result)}`);
          }
        }
      }
    }
    console.log(`defog extraction: ${cases} wrapped queries, ${cases - wrong.length} extracted exactly`);
    expect(wrong).toEqual([]);
  });

  it('accepts model-written reads, refuses the rest with a reason, never crashes', async () => {
    const dir = benchmarkPath('model-sql');
    const counts = { read: 0, several: 0, other: 0, unparsable: 0 };
    const problems: string[] = [];
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.jsonl'))) {
      const lines = readFileSync(`${dir}/${file}`, 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '');
      for (const line of lines) {
        const row = JSON.parse(line) as ModelSql;
        const kind = classify(row.sql);
        counts[kind] += 1;
        const verdict = await guardSql(row.sql);
        const label = `${row.model}#${row.id}`;
        if (kind === 'read') {
          if (!verdict.ok) problems.push(`${label} read refused: ${verdict.reason}`);
          else if (verdict.sql !== row.sql.trim().replace(/;$/, '').trim())
            problems.push(`${label} sql altered`);
        } else if (verdict.ok) {
          problems.push(`${label} ${kind} accepted`);
        } else if (kind === 'unparsable' && !/^not valid PostgreSQL: /.test(verdict.reason)) {
          problems.push(`${label} unparsable but reason is ${verdict.reason}`);
        } else if (kind === 'several' && verdict.rule !== 'multiple-statements') {
          problems.push(`${label} several statements but rule ${verdict.rule}`);
        }
        // The extractor on the same text: a single read comes out as the guard's statement.
        const extracted = extractSql(row.sql);
        if (kind === 'read' && verdict.ok && !(extracted.ok && extracted.sql === verdict.sql)) {
          problems.push(`${label} extracted ${JSON.stringify(extracted)}`);
        }
        if (kind === 'several' && extracted.ok) {
          const distinct = new Set(
            row.sql
              .split(';')
              .map(oneSpace)
              .filter((s) => s !== ''),
          );
          if (distinct.size > 1) problems.push(`${label} several different statements extracted as one`);
        }
      }
    }
    console.log(
      `model-sql: ${counts.read} single reads, ${counts.several} with several statements, ` +
        `${counts.other} other, ${counts.unparsable} do not parse`,
    );
    expect(problems).toEqual([]);
    expect(counts.read).toBeGreaterThan(900);
    expect(counts.unparsable).toBeGreaterThan(0);
  });
});
