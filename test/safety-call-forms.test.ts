/**
 * The verdict does not depend on how a call is written: every corpus statement (the call-path
 * corpus on its schema; the tricky reads and the attack corpus on the shop) is rewritten one call
 * at a time into the other call form — `f(x)` into `(x).f`, `(x).f` into `f(x)`, `r.f` on a row
 * into `f(r)` — and each variant must get the same verdict as the original (refused stays refused,
 * accepted stays accepted, with the same rows when both run). Production path: the guard, then the
 * policy-wrapped connector, on PGlite.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scanSync } from 'libpg-query';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json, JsonObject } from '../src/core/json.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { withFunctionPolicy } from '../src/sql/function-policy.js';
import { guardSql, loadGuardParser } from '../src/sql/guard.js';
import { parseTree, walkTree } from '../src/sql/parse-tree.js';
import { CALL_PATHS, callPathSchema } from './corpus/call-paths/corpus.js';
import { ATTACKS } from './support/attacks.js';
import { createTestDatabase, type TestDatabase } from './support/engines.js';
import { SHOP_SQL } from './support/fixtures.js';

const READS = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), 'corpus', 'reads', 'reads.jsonl'),
  'utf8',
)
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => (JSON.parse(line) as { sql: string }).sql);

const RUN = { maxRows: 50, timeoutMs: 10_000 };

/** Names the rewrites may use, read from the database's catalog. */
interface Names {
  /** Plain functions (not aggregates or window functions) that take one argument. */
  oneArgument: Set<string>;
  /** Functions whose one argument is a table's row type (`r.f` is a call). */
  onRows: Set<string>;
}

async function namesOf(db: DatabaseConnector): Promise<Names> {
  const rows = async (sql: string) =>
    new Set((await db.execute(sql, { maxRows: 100_000, timeoutMs: 10_000 })).rows.map((r) => String(r[0])));
  return {
    oneArgument: await rows(
      `SELECT proname FROM pg_proc GROUP BY proname
        HAVING bool_and(prokind = 'f') AND bool_or(pronargs = 1 OR (pronargs > 1 AND pronargdefaults >= pronargs - 1))`,
    ),
    onRows: await rows(
      `SELECT p.proname FROM pg_proc p JOIN pg_class c ON c.reltype = p.proargtypes[0] WHERE p.pronargs = 1`,
    ),
  };
}

function tokensOf(sql: string) {
  return scanSync(sql).tokens;
}

/** Every variant of `sql` with exactly one call rewritten into the other form. */
function variants(sql: string, names: Names): string[] {
  const bytes = Buffer.from(sql, 'utf8');
  const text = (from: number, to: number) => bytes.subarray(from, to).toString('utf8');
  let tree: JsonObject;
  let tokens: ReturnType<typeof tokensOf>;
  try {
    tree = parseTree(sql);
    tokens = tokensOf(sql);
  } catch {
    return [];
  }
  const closing = (open: number): number => {
    let depth = 0;
    for (let k = open; k < tokens.length; k += 1) {
      if (tokens[k]!.text === '(') depth += 1;
      else if (tokens[k]!.text === ')' && --depth === 0) return k;
    }
    return -1;
  };
  const out: string[] = [];
  // f(x) → (x).f: plain one-argument calls written with an unqualified name.
  walkTree(tree, (key, node) => {
    if (key !== 'FuncCall') return;
    const parts = (node.funcname as Json[]).map((p) =>
      String(((p as JsonObject).String as JsonObject)?.sval),
    );
    const args = (node.args as Json[] | undefined) ?? [];
    if (parts.length !== 1 || args.length !== 1 || node.agg_star || node.agg_distinct || node.over) return;
    if (node.agg_order || node.agg_filter || node.func_variadic || !names.oneArgument.has(parts[0]!)) return;
    const at = tokens.findIndex((t) => t.start === node.location);
    if (at < 0 || tokens[at + 1]?.text !== '(') return;
    const end = closing(at + 1);
    if (end < 0) return;
    const arg = text(tokens[at + 1]!.end, tokens[end]!.start);
    out.push(
      `${text(0, tokens[at]!.start)}(${arg}).${tokens[at]!.text}${text(tokens[end]!.end, bytes.length)}`,
    );
  });
  // (x).f → f(x), and r.f → f(r) when f takes a table's row.
  for (let k = 0; k + 2 < tokens.length; k += 1) {
    const [first, dot, name] = [tokens[k]!, tokens[k + 1]!, tokens[k + 2]!];
    if (dot.text !== '.' || tokens[k + 3]?.text === '(' || tokens[k + 3]?.text === '.') continue;
    const fn = name.text.toLowerCase();
    if (first.text === ')' && names.oneArgument.has(fn)) {
      let depth = 0;
      let open = k;
      for (; open >= 0; open -= 1) {
        if (tokens[open]!.text === ')') depth += 1;
        else if (tokens[open]!.text === '(' && --depth === 0) break;
      }
      if (open < 0) continue;
      const inner = text(tokens[open]!.end, first.start);
      out.push(`${text(0, tokens[open]!.start)}${name.text}(${inner})${text(name.end, bytes.length)}`);
    } else if (first.tokenName === 'IDENT' && tokens[k - 1]?.text !== '.' && names.onRows.has(fn)) {
      out.push(`${text(0, first.start)}${name.text}(${first.text})${text(name.end, bytes.length)}`);
    }
  }
  // A form the grammar does not allow there (a call in FROM) is no variant.
  return out.filter((form) => {
    try {
      parseTree(form);
      return true;
    } catch {
      return false;
    }
  });
}

type Verdict = { refused: string } | { rows: unknown[][] } | { error: string };

async function verdictOf(guarded: DatabaseConnector, sql: string): Promise<Verdict> {
  const verdict = await guardSql(sql);
  if (!verdict.ok) return { refused: verdict.rule };
  try {
    return { rows: (await guarded.execute(verdict.sql, RUN)).rows };
  } catch (error) {
    const e = error as { code?: string; details?: { rule?: string }; message: string };
    return e.code === 'guard_refused' ? { refused: e.details?.rule ?? '' } : { error: e.message };
  }
}

async function expectSameVerdicts(
  guarded: DatabaseConnector,
  names: Names,
  corpus: string[],
): Promise<number> {
  let checked = 0;
  for (const sql of corpus) {
    const forms = variants(sql, names);
    if (forms.length === 0) continue;
    const original = await verdictOf(guarded, sql);
    for (const form of forms) {
      const rewritten = await verdictOf(guarded, form);
      checked += 1;
      expect(
        'refused' in rewritten,
        `${sql}\n  → ${form}\n  ${JSON.stringify(original)} vs ${JSON.stringify(rewritten)}`,
      ).toBe('refused' in original);
      if ('rows' in original && 'rows' in rewritten) expect(rewritten.rows, form).toEqual(original.rows);
    }
  }
  return checked;
}

describe('call forms do not change the verdict (PGlite)', () => {
  let paths: TestDatabase;
  let shop: TestDatabase;
  beforeAll(async () => {
    await loadGuardParser();
    paths = await createTestDatabase('pglite', 'guard_forms');
    await paths.exec(callPathSchema('insert'));
    shop = await createTestDatabase('pglite', 'guard_forms_shop');
    await shop.exec(SHOP_SQL);
  }, 60_000);
  afterAll(async () => {
    await paths?.dispose();
    await shop?.dispose();
  });

  it('rewrites the examples as expected', async () => {
    const names: Names = { oneArgument: new Set(['upper', 'leak_int']), onRows: new Set(['item_leak']) };
    expect(variants("SELECT upper('a') FROM items", names)).toEqual(["SELECT ('a').upper FROM items"]);
    expect(variants('SELECT (5).leak_int', names)).toEqual(['SELECT leak_int(5)']);
    expect(variants('SELECT c.item_leak FROM items c', names)).toEqual(['SELECT item_leak(c) FROM items c']);
  });

  it('the call-path corpus: same verdict in every call form', async () => {
    const guarded = withFunctionPolicy(paths.connector);
    const checked = await expectSameVerdicts(
      guarded,
      await namesOf(paths.connector),
      CALL_PATHS.map((record) => record.sql),
    );
    expect(checked).toBeGreaterThanOrEqual(12);
    const state = await paths.connector.execute('SELECT count(*) FROM audit', RUN);
    expect(Number(state.rows[0]?.[0])).toBe(0);
  }, 180_000);

  it('the tricky reads and the attack corpus: same verdict in every call form', async () => {
    const guarded = withFunctionPolicy(shop.connector);
    const checked = await expectSameVerdicts(guarded, await namesOf(shop.connector), [
      ...READS,
      ...ATTACKS.filter((attack) => !attack.slow && !attack.direct).map((attack) => attack.sql),
    ]);
    expect(checked).toBeGreaterThanOrEqual(10);
  }, 300_000);
});
