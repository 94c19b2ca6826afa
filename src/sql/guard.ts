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
import { loadSqlParser, parseTree, type SqlToken } from './parse-tree.js';

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

/**
 * One text with its parse tree (`parseTree(sql)`, exactly) and, when known, its scanner tokens
 * (`scanTokens(sql)`, comments included). Handed from one check to the next so that the same text
 * is not parsed twice; whoever holds it owns it and must not change it.
 */
export interface ParsedText {
  sql: string;
  tree: JsonObject;
  tokens?: SqlToken[];
}

/**
 * Trees this module parsed, with the text each is the parse of: a parse handed back for a check
 * is used only when it is one of these and of the same text; any other is ignored and the text
 * parsed again (a tree built or parsed elsewhere cannot stand for a text).
 */
const ownParses = new WeakMap<JsonObject, string>();

/** Scanner token lists this module made, with the text each is the scan of (as {@link ownParses}). */
const ownScans = new WeakMap<readonly SqlToken[], string>();

/**
 * The parts of `parsed` that this module made of exactly `sql`: its tree when it is
 * {@link parseForGuard}'s parse of `sql`, its tokens when the guard scanned `sql` into them. Any
 * other part (built, changed in type, or made of another text) is left out, so the caller parses
 * or scans `sql` itself. For the server's analysis of a statement the guard has just checked.
 */
export function guardedParts(
  sql: string,
  parsed: ParsedText | undefined,
): { tree?: JsonObject; tokens?: SqlToken[] } {
  if (parsed === undefined || parsed.sql !== sql) return {};
  return {
    ...(ownParses.get(parsed.tree) === sql ? { tree: parsed.tree } : {}),
    ...(parsed.tokens !== undefined && ownScans.get(parsed.tokens) === sql ? { tokens: parsed.tokens } : {}),
  };
}

/**
 * `parseTree(sql)`, remembered as the parse of `sql` so that {@link guardParsedSync} can check
 * `sql` on it without parsing again. The caller must not change the tree.
 * @throws Error when the text does not parse or the parser is not loaded
 */
export function parseForGuard(sql: string): JsonObject {
  const tree = parseTree(sql);
  ownParses.set(tree, sql);
  return tree;
}

/**
 * Parses of statements the guard accepted, by their verdict text, waiting for the data policy's
 * rewrite of the same text ({@link takeGuardedParse}). Each is taken at most once (the taker owns
 * the tree); the oldest go first beyond the last few.
 */
const accepted = new Map<string, ParsedText>();
/** Few, and only short texts: a tree kept but never taken is memory held for nothing. */
const ACCEPTED_KEPT = 4;
const ACCEPTED_MAX_CHARS = 8_000;

/**
 * The parse of `sql` kept by the guard's last acceptance of exactly this text, or undefined.
 * The entry is removed: the caller owns the tree (it is `parseTree(sql)`, no one else holds it).
 */
export function takeGuardedParse(sql: string): ParsedText | undefined {
  const entry = accepted.get(sql);
  if (entry) accepted.delete(sql);
  return entry;
}

function keepAccepted(entry: ParsedText): void {
  if (entry.sql.length > ACCEPTED_MAX_CHARS) return;
  accepted.delete(entry.sql);
  accepted.set(entry.sql, entry);
  while (accepted.size > ACCEPTED_KEPT) accepted.delete(accepted.keys().next().value as string);
}

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
    return check(sql, options, undefined, keepAccepted);
  } catch (error) {
    return refuse('internal', `refused: the statement could not be checked (${messageOf(error)})`);
  }
}

/**
 * {@link guardSqlSync} of `parsed.sql` on its given parse instead of parsing the text again: for
 * the data policy, whose rewrite has just parsed the text it produced. `parsed.tree` must be
 * `parseTree(parsed.sql)` itself, owned by the caller and unchanged (so the verdict is the one the
 * text gets); `parsed.tokens`, when given, `scanTokens(parsed.sql)`. A tree that is not
 * {@link parseForGuard}'s parse of that same text is ignored (the text is parsed), and so are
 * tokens the guard did not scan from it. Never throws.
 * @param keep told, on acceptance, of the guard's own parse (and scan, when it made or took one)
 *   of the verdict's text, for the server's analysis of it ({@link guardedParts})
 */
export function guardParsedSync(
  parsed: ParsedText,
  options: GuardOptions = {},
  keep?: (parsed: ParsedText) => void,
): GuardVerdict {
  const sql = parsed.sql;
  if (typeof sql !== 'string' || sql.trim() === '')
    return refuse('empty', 'refused: there is no SQL statement');
  if (sql.includes('\0')) return refuse('nul-byte', 'refused: the text contains a NUL byte');
  if (!loaded) return refuse('internal', 'refused: the SQL parser is not loaded yet');
  try {
    return check(sql, options, parsed, keep);
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
    return check(sql, options, undefined, keepAccepted);
  } catch (error) {
    return refuse('internal', `refused: the statement could not be checked (${messageOf(error)})`);
  }
}

/**
 * The checks. `given`: the parse of `sql` already made (see {@link guardParsedSync}). `keep`: told
 * of the parse of the verdict's text when one was made here, for the data policy's rewrite.
 */
function check(
  sql: string,
  options: GuardOptions,
  given?: ParsedText,
  keep?: (parsed: ParsedText) => void,
): GuardVerdict {
  let tree: JsonObject;
  if (given !== undefined && given.sql === sql && ownParses.get(given.tree) === sql) {
    tree = given.tree;
  } else {
    given = undefined;
    try {
      tree = parseForGuard(sql);
    } catch (error) {
      return refuse('parse-error', `not valid PostgreSQL: ${messageOf(error)}`);
    }
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
  const ownTokens =
    given?.tokens !== undefined && ownScans.get(given.tokens) === sql ? given.tokens : undefined;
  const { text, startByte, tokens } = statementText(sql, raw, ownTokens);
  // The statement is the whole text: the parser, given the same text, gives the same tree, so
  // there is nothing to parse again. Otherwise the isolated text is parsed and compared.
  let textTree: JsonObject | undefined = text === sql ? tree : undefined;
  if (textTree === undefined) {
    const again = sameTree(text, startByte, stmt);
    if (!again) {
      return refuse('internal', 'refused: the statement could not be isolated from the surrounding text');
    }
    // Unpadded, the parse made for the comparison is the parse of the verdict's text itself.
    if (startByte === 0) textTree = again;
  }
  if (options.allowTables && options.allowTables.length > 0) {
    const denied = checkAllowlist(stmt, options.allowTables, options.schema);
    if (denied) return refuse('allowlist', denied);
  }
  if (keep && textTree !== undefined)
    keep({ sql: text, tree: textTree, ...(text === sql && tokens ? { tokens } : {}) });
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
      for (const rule of rulesFor(key)) {
        const name = matchRule(rule, key, child);
        if (name !== undefined) return refuse(rule.id, rule.reason.replaceAll('{name}', name));
      }
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
  return undefined;
}

/**
 * The rules that can match a field named `key`, in GUARD_RULES order: every rule whose test of the
 * key alone passes (the rest of {@link matchRule} still runs on each). Keys are the parser's node
 * and field names, a small fixed set, so the answer is kept per key.
 */
const rulesByKey = new Map<string, readonly GuardRule[]>();

function rulesFor(key: string): readonly GuardRule[] {
  let rules = rulesByKey.get(key);
  if (rules === undefined) {
    rules = GUARD_RULES.filter((rule) => mayMatchKey(rule, key));
    if (rulesByKey.size < 10_000) rulesByKey.set(key, rules);
  }
  return rules;
}

/** False when {@link matchRule} cannot match a field named `key`, whatever its value. */
function mayMatchKey(rule: GuardRule, key: string): boolean {
  const match = rule.match;
  if ('nodes' in match) return /^[A-Z]/.test(key) && matchesPattern(key, match.nodes);
  if ('field' in match) return key === match.field;
  if ('explainOptions' in match) return key === 'ExplainStmt';
  if ('functions' in match) return key === 'funcname';
  return key === 'relname';
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
function statementText(
  sql: string,
  raw: JsonObject,
  scanned?: SqlToken[],
): { text: string; startByte: number; tokens?: SqlToken[] } {
  const bytes = Buffer.from(sql, 'utf8');
  const from = typeof raw.stmt_location === 'number' ? raw.stmt_location : 0;
  const length = typeof raw.stmt_len === 'number' && raw.stmt_len > 0 ? raw.stmt_len : bytes.length - from;
  const to = from + length;
  let all: SqlToken[] | undefined;
  try {
    if (scanned !== undefined) all = scanned;
    else {
      all = scanSync(sql).tokens;
      ownScans.set(all, sql);
    }
    const tokens = all.filter(
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
      return {
        text: bytes.subarray(first.start, last.end).toString('utf8'),
        startByte: first.start,
        tokens: all,
      };
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
 * The parse of `text` placed at the same byte offset when it is exactly the checked statement
 * (all locations equal): what runs is what was checked. Undefined when it is not.
 */
function sameTree(text: string, startByte: number, stmt: JsonObject): JsonObject | undefined {
  try {
    const again = startByte === 0 ? parseForGuard(text) : parseTree(' '.repeat(startByte) + text);
    const stmts = again.stmts as JsonObject[];
    return stmts.length === 1 && JSON.stringify(stmts[0]!.stmt) === JSON.stringify(stmt) ? again : undefined;
  } catch {
    return undefined;
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
