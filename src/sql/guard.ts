/**
 * The read-only guard: parses with the real PostgreSQL
 * parser (libpg-query, PostgreSQL 18 grammar, WASM) and accepts exactly one statement that is
 * positively recognised as a read. Anything else, including text that does not parse, is refused:
 * fail closed. The policy itself is data in `guard-rules.ts`.
 */
import { scanSync } from 'libpg-query';
import type { Json, JsonObject } from '../core/json.js';
import { severalStatements } from '../core/refusal.js';
import type { Schema } from '../core/schema.js';
import { checkAllowlist } from './allowlist.js';
import {
  GUARD_RULES,
  type GuardRule,
  matchesPattern,
  READ_STATEMENT_TYPES,
  type ReadKind,
  STATEMENT_LABELS,
} from './guard-rules.js';
import { isSignificant, lexSql } from './lexer.js';
import { loadSqlParser, parseTree } from './parse-tree.js';

export type { GuardRule, ReadKind } from './guard-rules.js';

/** Options of {@link guardSql}. */
export interface GuardOptions {
  /**
   * Allowlist mode (`--allow-tables`): patterns `schema.table`, `schema.*` or `table` (any
   * schema); every relation the statement reads must match one. Empty or undefined: no allowlist.
   */
  allowTables?: readonly string[];
  /**
   * The catalog, used in allowlist mode to resolve unqualified names through the search path
   * (`schema.schemas`, in order). Without it unqualified names resolve to `public`.
   */
  schema?: Schema;
}

/**
 * Verdict of {@link guardSql}. `sql` is the single statement from its first to its last token
 * (no semicolon, no surrounding comments or whitespace), ready to wrap as
 * `DECLARE c CURSOR FOR <sql>`. `rule` names the rule that refused (`GUARD_RULES` ids, or one of
 * `empty`, `nul-byte`, `parse-error`, `multiple-statements`, `statement-kind`, `allowlist`,
 * `internal`).
 */
export type GuardVerdict =
  | { ok: true; sql: string; kind: ReadKind }
  | { ok: false; reason: string; rule: string };

let loaded = false;

/** Loads the parser's WASM module once per process (memoized; a failed load is retried next call). */
export function loadGuardParser(): Promise<void> {
  return loadSqlParser().then(() => {
    loaded = true;
  });
}

/**
 * Checks that `sql` is exactly one read-only statement. Never throws: every input, however
 * broken, gets a verdict (a parser that cannot load refuses with rule `internal`).
 */
export async function guardSql(sql: string, options: GuardOptions = {}): Promise<GuardVerdict> {
  if (typeof sql !== 'string' || sql.trim() === '')
    return refuse('empty', 'refused: there is no SQL statement');
  if (sql.includes('\0')) return refuse('nul-byte', 'refused: the text contains a NUL byte');
  try {
    await loadGuardParser();
  } catch (error) {
    return refuse('internal', `refused: the SQL parser could not be loaded (${messageOf(error)})`);
  }
  try {
    return check(sql, options);
  } catch (error) {
    return refuse('internal', `refused: the statement could not be checked (${messageOf(error)})`);
  }
}

/**
 * The synchronous form of {@link guardSql}, for hot loops (fuzzing, benchmarks): the same verdicts,
 * but the parser must already be loaded ({@link loadGuardParser}); otherwise it refuses with rule
 * `internal`. Never throws.
 */
export function guardSqlSync(sql: string, options: GuardOptions = {}): GuardVerdict {
  if (typeof sql !== 'string' || sql.trim() === '')
    return refuse('empty', 'refused: there is no SQL statement');
  if (sql.includes('\0')) return refuse('nul-byte', 'refused: the text contains a NUL byte');
  if (!loaded) return refuse('internal', 'refused: the SQL parser is not loaded yet');
  try {
    return check(sql, options);
  } catch (error) {
    return refuse('internal', `refused: the statement could not be checked (${messageOf(error)})`);
  }
}

function check(sql: string, options: GuardOptions): GuardVerdict {
  let tree: JsonObject;
  try {
    tree = parseTree(sql);
  } catch (error) {
    return refuse('parse-error', `not valid PostgreSQL: ${messageOf(error)}`);
  }
  const stmts = Array.isArray(tree.stmts) ? (tree.stmts as JsonObject[]) : [];
  if (stmts.length === 0) return refuse('empty', 'refused: there is no SQL statement, only comments');
  if (stmts.length > 1) {
    return refuse('multiple-statements', `refused: ${severalStatements(stmts.length)}`);
  }
  const raw = stmts[0]!;
  const stmt = (raw.stmt ?? {}) as JsonObject;
  const type = Object.keys(stmt)[0] ?? 'RawStmt';
  if (!READ_STATEMENT_TYPES.includes(type)) return findViolation(stmt) ?? refuseKind(type);
  if (type === 'ExplainStmt') {
    const explained = findViolation(stmt);
    if (explained) return explained;
    const inner = Object.keys(((stmt.ExplainStmt as JsonObject).query ?? {}) as JsonObject)[0] ?? 'RawStmt';
    if (inner !== 'SelectStmt') return refuseKind(inner, 'EXPLAIN of ');
  }
  const violation = findViolation(stmt);
  if (violation) return violation;
  const { text, startByte } = statementText(sql, raw);
  if (!sameTree(text, startByte, stmt)) {
    return refuse('internal', 'refused: the statement could not be isolated from the surrounding text');
  }
  if (options.allowTables && options.allowTables.length > 0) {
    const denied = checkAllowlist(stmt, options.allowTables, options.schema);
    if (denied) return refuse('allowlist', denied);
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
  if ('nodes' in match)
    return /^[A-Z]/.test(key) && matchesPattern(key, match.nodes) ? labelOf(key, value) : undefined;
  if ('field' in match) return key === match.field && !isEmpty(value) ? key : undefined;
  if ('explainOptions' in match) {
    if (key !== 'ExplainStmt' || value === null || typeof value !== 'object' || Array.isArray(value))
      return undefined;
    const options = Array.isArray(value.options) ? value.options : [];
    for (const option of options) {
      const name = String(((option as JsonObject).DefElem as JsonObject | undefined)?.defname ?? '');
      if (matchesPattern(name, match.explainOptions)) return name.toUpperCase();
    }
    return undefined;
  }
  if ('functions' in match) {
    if (key !== 'funcname' || !Array.isArray(value)) return undefined;
    const last = value[value.length - 1] as JsonObject | undefined;
    const name = String((last?.String as JsonObject | undefined)?.sval ?? '');
    return matchesPattern(name, match.functions) ? name : undefined;
  }
  if (key !== 'relname' || typeof value !== 'string') return undefined;
  return matchesPattern(value, match.relations) ? value : undefined;
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
    const again = parseTree(' '.repeat(startByte) + text);
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

/** Statement words of `TransactionStmt.kind` (PostgreSQL's TransactionStmtKind). */
const TRANSACTION_WORDS: Readonly<Record<string, string>> = {
  TRANS_STMT_BEGIN: 'BEGIN',
  TRANS_STMT_START: 'START TRANSACTION',
  TRANS_STMT_COMMIT: 'COMMIT',
  TRANS_STMT_ROLLBACK: 'ROLLBACK',
  TRANS_STMT_SAVEPOINT: 'SAVEPOINT',
  TRANS_STMT_RELEASE: 'RELEASE SAVEPOINT',
  TRANS_STMT_ROLLBACK_TO: 'ROLLBACK TO SAVEPOINT',
  TRANS_STMT_PREPARE: 'PREPARE TRANSACTION',
  TRANS_STMT_COMMIT_PREPARED: 'COMMIT PREPARED',
  TRANS_STMT_ROLLBACK_PREPARED: 'ROLLBACK PREPARED',
};

/**
 * `DropStmt` → `DROP`, `CreateTableAsStmt` → `CREATE TABLE AS` (or a label from STATEMENT_LABELS);
 * transaction control and SET/RESET are named by their own words when the node says which.
 */
function labelOf(type: string, node?: Json): string {
  const fields = node !== null && typeof node === 'object' && !Array.isArray(node) ? node : {};
  if (type === 'TransactionStmt' && typeof fields.kind === 'string' && TRANSACTION_WORDS[fields.kind])
    return TRANSACTION_WORDS[fields.kind]!;
  if (type === 'VariableSetStmt' && typeof fields.kind === 'string')
    return fields.kind.startsWith('VAR_RESET') ? 'RESET' : 'SET';
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
