/**
 * The server's own reading of a statement, for the function policy: the statement is analysed by
 * PostgreSQL itself (`CREATE TEMP VIEW … AS SELECT 1 FROM (<statement>) s` in a transaction that
 * is always rolled back: parse analysis resolves every function, operator, cast and type by its
 * argument types, and executes nothing), and the stored query tree (`pg_rewrite.ev_action`, in
 * PostgreSQL's node-string form) lists the exact objects the statement will use: `:funcid` of
 * every call (however it was written: `f(x)`, `(x).f`, `t.f` on a row, a cast), `:opno`/`:opfuncid`
 * of every operator (`ANY`/`ALL`, `IN`, `BETWEEN`, `CASE … WHEN`, `NULLIF`, `IS DISTINCT FROM`),
 * the `:eqop`/`:sortop` of `ORDER BY`/`DISTINCT`/`GROUP BY`, the `:opnos` of row comparisons, the
 * types (for domain CHECKs and type I/O functions) and the relations with the columns they read.
 * This module builds the probe and reads the tree; `function-policy.ts` judges what it finds.
 */
import type { JsonObject } from '../core/json.js';
import { guardedParts, type ParsedText } from './guard.js';
import { parseTree, type SqlToken, scanTokens } from './parse-tree.js';

/** The name of the temporary view of the probe (gone with the rollback). */
export const PROBE_VIEW = 'sqlrecall_guard_probe';

/**
 * PostgreSQL's `FirstLowInvalidHeapAttributeNumber` (-7 since PostgreSQL 12): `selectedCols` holds
 * `attnum - (-7)`, so bit 7 is a whole-row reference and bit 7 + n column n.
 */
const ATTNUM_OFFSET = 7;

/** First OID given to user-created objects (`FirstNormalObjectId`): lower ones are built in. */
export const FIRST_USER_OID = 16384;

/**
 * The statements of the probe for `sql` (one statement the guard accepted; an EXPLAIN's inner
 * statement is analysed instead, since EXPLAIN plans it): create the view, then read its tree and
 * its own OID.
 * @param checked the guard's parse (and scan) of `sql` when it has just checked it: used only
 *   where the guard itself made them of this text (`guardedParts`), else `sql` is parsed here
 * @throws Error when the statement to analyse cannot be isolated (callers fall back: fail closed)
 */
export function probeStatements(sql: string, checked?: ParsedText): string[] {
  const parts = guardedParts(sql, checked);
  const analysed = analysedText(sql, parts.tree);
  const inner = withoutParams(analysed, analysed === sql ? parts.tokens : undefined);
  return [
    `CREATE TEMP VIEW ${PROBE_VIEW} AS SELECT 1 FROM (\n${inner}\n) AS sqlrecall_probe_s`,
    `SELECT r.ev_action::text AS tree, r.ev_class::oid::text AS view
       FROM pg_catalog.pg_rewrite r
      WHERE r.ev_class = 'pg_temp.${PROBE_VIEW}'::pg_catalog.regclass`,
  ];
}

/**
 * `text` with every bind parameter (`$1`) written as `NULL`: a view cannot hold parameters, and the
 * data policy's rewrite binds its attribute values as parameters. Both are of unknown type until
 * the context resolves them, so the analysis resolves the same functions and operators.
 */
function withoutParams(text: string, scanned?: readonly SqlToken[]): string {
  // Without a `$` there is no parameter to replace.
  if (!text.includes('$')) return text;
  let bytes: Buffer | undefined;
  const pieces: string[] = [];
  let at = 0;
  for (const token of scanned ?? scanTokens(text)) {
    if (!/^\$\d+$/.test(token.text)) continue;
    bytes ??= Buffer.from(text, 'utf8');
    pieces.push(bytes.subarray(at, token.start).toString('utf8'), 'NULL');
    at = token.end;
  }
  if (pieces.length === 0) return text;
  pieces.push(bytes!.subarray(at).toString('utf8'));
  return pieces.join('');
}

/**
 * The text to analyse: the statement itself, or the statement an EXPLAIN explains. `tree`: the
 * guard's own parse of `sql`, when there is one.
 */
function analysedText(sql: string, tree?: JsonObject): string {
  const stmts = (tree ?? parseTree(sql)).stmts as JsonObject[];
  if (!Array.isArray(stmts) || stmts.length !== 1) throw new Error('not exactly one statement');
  const stmt = stmts[0]!.stmt as JsonObject;
  const explain = stmt.ExplainStmt as JsonObject | undefined;
  if (!explain) return sql;
  // EXPLAIN [ ( options ) | ANALYZE | VERBOSE ]* <statement>: skip to the statement, then check
  // that the rest parses to exactly the explained statement.
  const text = sql;
  let at = skipSpace(text, 0);
  if (!/^explain\b/i.test(text.slice(at))) throw new Error('EXPLAIN not found');
  at = skipSpace(text, at + 'explain'.length);
  if (text[at] === '(') {
    let depth = 0;
    for (; at < text.length; at += 1) {
      if (text[at] === '(') depth += 1;
      else if (text[at] === ')' && --depth === 0) break;
    }
    at = skipSpace(text, at + 1);
  }
  for (
    let word = /^(analy[sz]e|verbose)\b/i.exec(text.slice(at));
    word;
    word = /^(analy[sz]e|verbose)\b/i.exec(text.slice(at))
  )
    at = skipSpace(text, at + word[0].length);
  const rest = text.slice(at);
  // Locations in the tree are byte offsets into `sql`: pad the rest to the same place.
  const again = parseTree(' '.repeat(Buffer.byteLength(text.slice(0, at), 'utf8')) + rest)
    .stmts as JsonObject[];
  if (
    !Array.isArray(again) ||
    again.length !== 1 ||
    JSON.stringify(again[0]!.stmt) !== JSON.stringify(explain.query)
  )
    throw new Error('the explained statement could not be isolated');
  return rest;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at]!)) at += 1;
  return at;
}

/** What one analysed tree uses (OIDs as decimal strings). */
export interface AnalysedObjects {
  /** Functions called: calls, operator functions, aggregates, window functions, in-range functions. */
  functions: Set<string>;
  /** Operators (their functions are in `functions` when the tree names them; sort operators not). */
  operators: Set<string>;
  /** Types of values the statement handles. */
  types: Set<string>;
  /** Relations read, each with the attribute numbers read (0: the whole row). */
  relations: Map<string, Set<number>>;
}

/** What each field the reader takes holds, by field name. */
type FieldKind = 'function' | 'operator' | 'operators' | 'type' | 'relation' | 'columns';

const FIELD_KINDS: ReadonlyMap<string, FieldKind> = new Map<string, FieldKind>([
  ...(
    [
      'funcid',
      'opfuncid',
      'hashfuncid',
      'negfuncid',
      'aggfnoid',
      'winfnoid',
      'startInRangeFunc',
      'endInRangeFunc',
      'tsmhandler',
    ] as const
  ).map((name): [string, FieldKind] => [name, 'function']),
  ...(['opno', 'eqop', 'sortop'] as const).map((name): [string, FieldKind] => [name, 'operator']),
  ['opnos', 'operators'],
  ...(
    [
      'vartype',
      'consttype',
      'resulttype',
      'funcresulttype',
      'opresulttype',
      'paramtype',
      'casetype',
      'minmaxtype',
      'row_typeid',
      'aggtype',
      'wintype',
      'typeId',
      'refcontainertype',
      'refelemtype',
      'refrestype',
    ] as const
  ).map((name): [string, FieldKind] => [name, 'type']),
  ['relid', 'relation'],
  ['selectedCols', 'columns'],
]);

/** JavaScript's `\s`: a field starts with `:` right after one of these. */
const SPACE = /\s/;

/**
 * The objects a stored query tree (`pg_node_tree` as text: a rule's `ev_action`, a policy's
 * `polqual`, a domain constraint's `conbin`) uses. Reads field names PostgreSQL 15–18 write; an
 * OID of 0 (none) is left out. A string inside the tree cannot forge a field: the node writer
 * escapes spaces in strings, and a forged match could only add objects (more checks, never fewer).
 *
 * One pass over the text: a field is `:name value` with the `:` after white space; a scalar value
 * is the digits right after one space, a list `(o 1 2)` / `(b 7 9)` its numbers each after one
 * space, up to `)`. Columns read: PostgreSQL 15 keeps `selectedCols` in the range-table entry
 * after `:relid`, PostgreSQL 16+ in an RTEPermissionInfo that starts with `:relid`; either way the
 * first `selectedCols` after a `:relid` and before the next one belongs to that relation.
 */
export function analysedObjects(tree: string): AnalysedObjects {
  const found: AnalysedObjects = {
    functions: new Set(),
    operators: new Set(),
    types: new Set(),
    relations: new Map(),
  };
  // Operators of lists are added after the single ones, so the sets fill in the same order as
  // reading each kind of field in its own pass would.
  const listed: string[] = [];
  /** The relation of the last `:relid` (undefined: none yet, or its columns were read already). */
  let relation: Set<number> | undefined;
  for (let colon = tree.indexOf(':', 1); colon !== -1; colon = tree.indexOf(':', colon + 1)) {
    if (!SPACE.test(tree[colon - 1]!)) continue;
    let end = colon + 1;
    while (end < tree.length && isLetter(tree.charCodeAt(end))) end += 1;
    if (tree.charCodeAt(end) !== SPACE_CODE) continue;
    const kind = FIELD_KINDS.get(tree.slice(colon + 1, end));
    if (kind === undefined) continue;
    const at = end + 1;
    if (kind === 'operators' || kind === 'columns') {
      const numbers = numberList(tree, at, kind === 'operators' ? 'o' : 'b');
      if (numbers === undefined) continue;
      if (kind === 'operators') listed.push(...numbers);
      else if (relation !== undefined) {
        for (const bit of numbers) relation.add(Number(bit) - ATTNUM_OFFSET);
        relation = undefined;
      }
      continue;
    }
    const oid = digitsAt(tree, at);
    if (oid === undefined) continue;
    if (kind === 'relation') {
      if (oid === '0') {
        // It still ends the previous relation's part of the text.
        relation = undefined;
        continue;
      }
      relation = found.relations.get(oid) ?? new Set<number>();
      found.relations.set(oid, relation);
      continue;
    }
    if (oid === '0') continue;
    if (kind === 'function') found.functions.add(oid);
    else if (kind === 'operator') found.operators.add(oid);
    else found.types.add(oid);
  }
  for (const oid of listed) if (oid !== '0') found.operators.add(oid);
  return found;
}

const SPACE_CODE = 0x20;
const CLOSE_CODE = 0x29;

function isLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || code === 0x5f;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** The ASCII digits starting at `at` (at least one), or undefined. */
function digitsAt(text: string, at: number): string | undefined {
  let end = at;
  while (end < text.length && isDigit(text.charCodeAt(end))) end += 1;
  return end > at ? text.slice(at, end) : undefined;
}

/** The numbers of `(<tag> 1 2 3)` at `at` (each after exactly one space), or undefined. */
function numberList(text: string, at: number, tag: string): string[] | undefined {
  if (text[at] !== '(' || text[at + 1] !== tag) return undefined;
  const numbers: string[] = [];
  let i = at + 2;
  while (text.charCodeAt(i) === SPACE_CODE) {
    const digits = digitsAt(text, i + 1);
    if (digits === undefined) break;
    numbers.push(digits);
    i += 1 + digits.length;
  }
  return text.charCodeAt(i) === CLOSE_CODE ? numbers : undefined;
}
