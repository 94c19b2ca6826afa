/**
 * The read-only guard (DESIGN.md "SQL safety, in depth", step 2): parses with the real PostgreSQL
 * parser (libpg-query, PostgreSQL 18 grammar, WASM) and accepts exactly one statement that is
 * positively recognised as a read. Anything else, including text that does not parse, is refused:
 * fail closed. The policy itself is data in `guard-rules.ts`.
 */
import { loadModule, parseSync, scanSync } from 'libpg-query';
import {
  EXECUTING_EXPLAIN_OPTIONS,
  GUARD_RULES,
  type GuardRule,
  READ_STATEMENT_TYPES,
  type ReadKind,
  STATEMENT_LABELS,
} from './guard-rules.js';
import { isSignificant, lexSql } from './lexer.js';

export type { GuardRule, ReadKind } from './guard-rules.js';

/**
 * Verdict of {@link guardSql}. `sql` is the single statement from its first to its last token
 * (no semicolon, no surrounding comments or whitespace), ready to wrap as
 * `DECLARE c CURSOR FOR <sql>`. `rule` names the rule that refused (`GUARD_RULES` ids, or one of
 * `empty`, `nul-byte`, `parse-error`, `multiple-statements`, `statement-kind`, `explain-analyze`,
 * `internal`).
 */
export type GuardVerdict =
  | { ok: true; sql: string; kind: ReadKind }
  | { ok: false; reason: string; rule: string };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

let loading: Promise<void> | undefined;

/** Loads the parser's WASM module once per process (memoized; a failed load is retried next call). */
export function loadGuardParser(): Promise<void> {
  loading ??= loadModule().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/**
 * Checks that `sql` is exactly one read-only statement. Never throws: every input, however
 * broken, gets a verdict (a parser that cannot load refuses with rule `internal`).
 */
export async function guardSql(sql: string): Promise<GuardVerdict> {
  if (typeof sql !== 'string' || sql.trim() === '')
    return refuse('empty', 'refused: there is no SQL statement');
  if (sql.includes('\0')) return refuse('nul-byte', 'refused: the text contains a NUL byte');
  try {
    await loadGuardParser();
  } catch (error) {
    return refuse('internal', `refused: the SQL parser could not be loaded (${messageOf(error)})`);
  }
  try {
    return check(sql);
  } catch (error) {
    return refuse('internal', `refused: the statement could not be checked (${messageOf(error)})`);
  }
}

function check(sql: string): GuardVerdict {
  let tree: JsonObject;
  try {
    tree = parseSync(sql) as unknown as JsonObject;
  } catch (error) {
    return refuse('parse-error', `not valid PostgreSQL: ${messageOf(error)}`);
  }
  const stmts = Array.isArray(tree.stmts) ? (tree.stmts as JsonObject[]) : [];
  if (stmts.length === 0) return refuse('empty', 'refused: there is no SQL statement, only comments');
  if (stmts.length > 1) {
    return refuse(
      'multiple-statements',
      `refused: ${stmts.length} statements were given; only one statement may run at a time`,
    );
  }
  const raw = stmts[0]!;
  const stmt = (raw.stmt ?? {}) as JsonObject;
  const type = Object.keys(stmt)[0] ?? 'RawStmt';
  if (!READ_STATEMENT_TYPES.includes(type)) return refuseKind(type);
  if (type === 'ExplainStmt') {
    const explain = stmt.ExplainStmt as JsonObject;
    const options = Array.isArray(explain.options) ? explain.options : [];
    for (const option of options) {
      const name = String(
        ((option as JsonObject).DefElem as JsonObject | undefined)?.defname ?? '',
      ).toLowerCase();
      if (EXECUTING_EXPLAIN_OPTIONS.includes(name)) {
        return refuse(
          'explain-analyze',
          'refused: EXPLAIN ANALYZE executes the statement; use plain EXPLAIN',
        );
      }
    }
    const inner = Object.keys((explain.query ?? {}) as JsonObject)[0] ?? 'RawStmt';
    if (inner !== 'SelectStmt') return refuseKind(inner, 'EXPLAIN of ');
  }
  const violation = findViolation(stmt);
  if (violation) return violation;
  const { text, startByte } = statementText(sql, raw);
  if (!sameTree(text, startByte, stmt)) {
    return refuse('internal', 'refused: the statement could not be isolated from the surrounding text');
  }
  return { ok: true, sql: text, kind: kindOf(type, text) };
}

/** Walks every node (iteratively: deep trees cannot overflow the stack) and applies GUARD_RULES. */
function findViolation(root: JsonObject): GuardVerdict | undefined {
  const stack: Json[] = [root];
  while (stack.length > 0) {
    const value = stack.pop()!;
    if (Array.isArray(value)) {
      for (let k = value.length - 1; k >= 0; k -= 1) stack.push(value[k]!);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    for (const [key, child] of Object.entries(value)) {
      for (const rule of GUARD_RULES) {
        const name = matchRule(rule, key, child);
        if (name !== undefined) return refuse(rule.id, rule.reason.replaceAll('{name}', name));
      }
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
  return undefined;
}

/** The name a rule matched on the field `key` holding `value`, or undefined. */
function matchRule(rule: GuardRule, key: string, value: Json): string | undefined {
  const match = rule.match;
  if ('nodes' in match) return match.nodes.includes(key) ? labelOf(key) : undefined;
  if ('field' in match) return key === match.field && !isEmpty(value) ? key : undefined;
  if ('functions' in match) {
    if (key !== 'funcname' || !Array.isArray(value)) return undefined;
    const last = value[value.length - 1] as JsonObject | undefined;
    const name = String((last?.String as JsonObject | undefined)?.sval ?? '');
    return matchesName(name, match.functions) ? name : undefined;
  }
  if (key !== 'relname' || typeof value !== 'string') return undefined;
  return matchesName(value, match.relations) ? value : undefined;
}

function matchesName(name: string, patterns: readonly string[]): boolean {
  const lower = name.toLowerCase();
  return patterns.some((pattern) =>
    pattern.endsWith('*') ? lower.startsWith(pattern.slice(0, -1)) : lower === pattern,
  );
}

function isEmpty(value: Json): boolean {
  if (value === null || value === undefined || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

/**
 * The statement's own text: from its first to its last token as PostgreSQL's scanner sees them
 * (comments and the semicolon excluded), and the UTF-8 byte offset where it starts (libpg-query
 * locations are byte offsets).
 */
function statementText(sql: string, raw: JsonObject): { text: string; startByte: number } {
  const bytes = Buffer.from(sql, 'utf8');
  const from = typeof raw.stmt_location === 'number' ? raw.stmt_location : 0;
  const length = typeof raw.stmt_len === 'number' && raw.stmt_len > 0 ? raw.stmt_len : bytes.length - from;
  const to = from + length;
  try {
    const tokens = scanSync(sql).tokens.filter(
      (token) =>
        token.start >= from &&
        token.end <= to &&
        token.tokenName !== 'SQL_COMMENT' &&
        token.tokenName !== 'C_COMMENT' &&
        token.text !== ';',
    );
    const first = tokens[0];
    const last = tokens[tokens.length - 1];
    if (first && last)
      return { text: bytes.subarray(first.start, last.end).toString('utf8'), startByte: first.start };
  } catch {
    // fall back to our own lexer below; sameTree() verifies the result either way
  }
  const slice = bytes.subarray(from, to).toString('utf8');
  const significant = lexSql(slice).filter((token) => isSignificant(token) && token.text !== ';');
  const first = significant[0];
  const last = significant[significant.length - 1];
  if (!first || !last) return { text: slice.trim(), startByte: from };
  return {
    text: slice.slice(first.start, last.end),
    startByte: from + Buffer.byteLength(slice.slice(0, first.start), 'utf8'),
  };
}

/**
 * True when `text`, placed at the same byte offset, parses to exactly the checked statement (all
 * locations equal): what runs is what was checked.
 */
function sameTree(text: string, startByte: number, stmt: JsonObject): boolean {
  try {
    const again = parseSync(' '.repeat(startByte) + text) as unknown as JsonObject;
    const stmts = again.stmts as JsonObject[];
    return stmts.length === 1 && JSON.stringify(stmts[0]!.stmt) === JSON.stringify(stmt);
  } catch {
    return false;
  }
}

function kindOf(type: string, text: string): ReadKind {
  if (type === 'ExplainStmt') return 'explain';
  const word = /^[A-Za-z]+/.exec(text)?.[0]?.toLowerCase();
  return word === 'with' || word === 'values' || word === 'table' ? word : 'select';
}

function refuseKind(type: string, prefix = ''): GuardVerdict {
  return refuse(
    'statement-kind',
    `refused: ${prefix}${labelOf(type)} is not a read; only SELECT, VALUES, TABLE, WITH … SELECT and EXPLAIN are allowed`,
  );
}

/** `DropStmt` → `DROP`, `CreateTableAsStmt` → `CREATE TABLE AS` (or a label from STATEMENT_LABELS). */
function labelOf(type: string): string {
  const known = STATEMENT_LABELS[type];
  if (known) return known;
  return type
    .replace(/Stmt$/, '')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toUpperCase();
}

function refuse(rule: string, reason: string): GuardVerdict {
  return { ok: false, reason, rule };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
