/**
 * The identifier check: before a statement runs, every
 * table and column reference is checked against the catalog, resolving aliases, CTE names (and their
 * column lists), subquery aliases, LATERAL and correlated subqueries and the search path (the
 * introspected schemas, in order); quoted identifiers are case-sensitive. Unknown names come back
 * with the closest catalog names ("did you mean customers.country?") for the repair prompt.
 *
 * Conservative: a name that could come from something the check cannot see into (a function's
 * output columns, a system catalog, a relation outside the introspected schemas, a sequence) is
 * never reported. The database has the last word either way.
 */
import type { Schema } from '../core/schema.js';
import { editDistance } from '../core/text.js';
import { loadGuardParser } from './guard.js';
import { parseStatements } from './parse-tree.js';
import { qualifiedName, quoteIdent } from './render.js';
import { analyzeStatement, type JsonObject, type RelationUse, type UnresolvedName } from './scope.js';

/** One name that does not exist, with the closest catalog names. */
export interface UnknownIdentifier {
  kind: 'table' | 'column';
  /** The name as PostgreSQL sees it (unquoted names folded to lower case). */
  name: string;
  /** The qualifier as written (`c` in `c.contry`, or a schema for a table), if any. */
  qualifier?: string;
  /** Closest existing names, best first, ready to paste (`customers.country`, `"Order Date"`). */
  candidates: string[];
  /** One sentence for the repair prompt, e.g. `column "contry" does not exist in customers; did you mean customers.country?` */
  message: string;
}

/** Result of {@link checkIdentifiers}. */
export interface IdentifierCheck {
  ok: boolean;
  unknown: UnknownIdentifier[];
}

/** Options of {@link checkIdentifiers}. */
export interface IdentifierCheckOptions {
  /**
   * The session's real search path (`current_schemas(false)`). With it, an unqualified table that
   * exists only in a schema off the path is reported with its qualified name as the candidate
   * ("did you mean payroll.salaries?"). Without it, every introspected schema counts as searched.
   */
  searchPath?: readonly string[];
}

/**
 * SQL special names PostgreSQL reads as functions (`SQLValueFunction`) when written unquoted, by the
 * parse tree's `op`: `SELECT user FROM t` returns the login role even when `t` has a `user` column
 * (PostgreSQL manual, "Session Information Functions" and "Current Date/Time").
 */
const SPECIAL_NAMES: Readonly<Record<string, string>> = {
  SVFOP_USER: 'user',
  SVFOP_CURRENT_USER: 'current_user',
  SVFOP_SESSION_USER: 'session_user',
  SVFOP_CURRENT_ROLE: 'current_role',
  SVFOP_CURRENT_SCHEMA: 'current_schema',
  SVFOP_CURRENT_CATALOG: 'current_catalog',
  SVFOP_CURRENT_DATE: 'current_date',
  SVFOP_CURRENT_TIME: 'current_time',
  SVFOP_CURRENT_TIME_N: 'current_time',
  SVFOP_CURRENT_TIMESTAMP: 'current_timestamp',
  SVFOP_CURRENT_TIMESTAMP_N: 'current_timestamp',
  SVFOP_LOCALTIME: 'localtime',
  SVFOP_LOCALTIME_N: 'localtime',
  SVFOP_LOCALTIMESTAMP: 'localtimestamp',
  SVFOP_LOCALTIMESTAMP_N: 'localtimestamp',
};

/** Most candidates listed per unknown name. */
const MAX_CANDIDATES = 3;

/**
 * Checks the table and column names of one read statement against `schema`. Statements that do not
 * parse, or that the analysis cannot model, pass (`ok: true`): the guard and the database judge them.
 */
export async function checkIdentifiers(
  sql: string,
  schema: Schema,
  options: IdentifierCheckOptions = {},
): Promise<IdentifierCheck> {
  await loadGuardParser();
  let stmt: JsonObject | undefined;
  try {
    const stmts = parseStatements(sql);
    if (stmts.length !== 1) return { ok: true, unknown: [] };
    stmt = stmts[0];
  } catch {
    return { ok: true, unknown: [] };
  }
  if (!stmt) return { ok: true, unknown: [] };
  let report: ReturnType<typeof analyzeStatement>;
  try {
    report = analyzeStatement(stmt, schema);
  } catch {
    return { ok: true, unknown: [] }; // e.g. a tree too deep to walk recursively: let the database judge
  }
  const seen = new Set<string>();
  const unknown: UnknownIdentifier[] = [];
  for (const entry of report.unresolved) {
    const key = `${entry.kind}:${entry.qualifier ?? ''}.${entry.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    unknown.push(describe(entry, schema));
  }
  unknown.push(...offPathTables(report.relations, options.searchPath));
  unknown.push(...specialNames(stmt, report.relations));
  const reported = schema.dialect === 'sqlite' ? unknown.filter(notSqliteName(schema)) : unknown;
  return { ok: reported.length === 0, unknown: reported };
}

/**
 * SQLite matches every name without regard to case, quoted or not, and gives each table the
 * implicit columns `rowid`, `oid` and `_rowid_`: the PostgreSQL reading of a name it reports unknown
 * may still be one SQLite finds. Such names are left to the database rather than "corrected".
 */
function notSqliteName(schema: Schema): (entry: UnknownIdentifier) => boolean {
  const names = new Set(['rowid', 'oid', '_rowid_']);
  for (const table of schema.tables) {
    names.add(table.name.toLowerCase());
    for (const column of table.columns) names.add(column.name.toLowerCase());
  }
  return (entry) => !names.has(entry.name.toLowerCase());
}

/**
 * Unqualified tables the analysis found in a schema that is not on the session's search path: the
 * database will not find them, so the qualified name is the candidate.
 */
function offPathTables(
  relations: RelationUse[],
  searchPath: readonly string[] | undefined,
): UnknownIdentifier[] {
  if (!searchPath) return [];
  const out: UnknownIdentifier[] = [];
  const seen = new Set<string>();
  for (const use of relations) {
    if (use.schema !== null || !use.table || searchPath.includes(use.table.schema)) continue;
    const candidate = qualifiedName(use.table);
    if (seen.has(candidate)) continue;
    seen.add(candidate);
    out.push({
      kind: 'table',
      name: use.name,
      candidates: [candidate],
      message: `table ${quoteIdent(use.name)} is not on the search path (${searchPath.join(', ') || 'empty'}); did you mean ${candidate}?`,
    });
  }
  return out;
}

/**
 * Unquoted special names (`user`, `current_date`, …) written where a table in scope has a column of
 * that name: PostgreSQL reads them as functions, so the quoted column is the candidate.
 */
function specialNames(stmt: JsonObject, relations: RelationUse[]): UnknownIdentifier[] {
  const out: UnknownIdentifier[] = [];
  const seen = new Set<string>();
  const stack: unknown[] = [stmt];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      stack.push(...value);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const node = value as Record<string, unknown>;
    const svf = node.SQLValueFunction as { op?: string } | undefined;
    const name = svf?.op ? SPECIAL_NAMES[svf.op] : undefined;
    if (name && !seen.has(name)) {
      const owners = relations
        .filter((r) => r.table?.columns.some((c) => c.name === name))
        .map((r) => r.table!);
      if (owners.length > 0) {
        seen.add(name);
        const quoted = `"${name}"`;
        const candidates = [quoted];
        out.push({
          kind: 'column',
          name,
          candidates,
          message: `unquoted ${name} is PostgreSQL's ${name} function, not the column ${quoted} of ${owners.map((t) => qualifiedName(t)).join(', ')}; write the column quoted: did you mean ${quoted}?`,
        });
      }
    }
    for (const child of Object.values(node))
      if (child !== null && typeof child === 'object') stack.push(child);
  }
  return out;
}

/** The repair-prompt text for a failed check: one line per unknown name. */
export function formatUnknownIdentifiers(unknown: UnknownIdentifier[]): string {
  return unknown.map((u) => u.message).join('\n');
}

function describe(entry: UnresolvedName, schema: Schema): UnknownIdentifier {
  const shown = quoteIdent(entry.name);
  if (entry.kind === 'table') {
    // A qualifier of a column (`x.country`) names a FROM item: suggest the aliases in scope.
    if (entry.scopeAliases.length > 0) {
      const aliases = [...new Set(entry.scopeAliases)].map((a) => ({ key: a, text: quoteIdent(a) }));
      return finish(entry, closest(entry.name, aliases), `table or alias ${shown} is not in the FROM clause`);
    }
    const pool = schema.tables.map((t) => ({ key: t.name, text: qualifiedName(t) }));
    const candidates = closest(entry.name, pool);
    const what = entry.qualifier
      ? `table ${quoteIdent(entry.qualifier)}.${shown} does not exist`
      : `table ${shown} does not exist`;
    return finish(entry, candidates, what);
  }
  const local = entry.scopeColumns.map((c) => ({
    key: c.column,
    text: `${quoteIdent(c.owner)}.${quoteIdent(c.column)}`,
  }));
  let candidates = closest(entry.name, local);
  if (candidates.length === 0 && !entry.qualifier) {
    const everywhere = schema.tables.flatMap((t) =>
      t.columns.map((c) => ({ key: c.name, text: `${qualifiedName(t)}.${quoteIdent(c.name)}` })),
    );
    candidates = closest(entry.name, everywhere);
  }
  const owners = [...new Set(entry.scopeTables.map((t) => qualifiedName(t)))];
  const where = entry.qualifier
    ? ` in ${entry.scopeTables[0] ? qualifiedName(entry.scopeTables[0]) : quoteIdent(entry.qualifier)}`
    : owners.length > 0
      ? ` in ${owners.slice(0, 4).join(', ')}`
      : '';
  return finish(
    entry,
    candidates,
    `column ${entry.qualifier ? `${quoteIdent(entry.qualifier)}.` : ''}${shown} does not exist${where}`,
  );
}

function finish(entry: UnresolvedName, candidates: string[], what: string): UnknownIdentifier {
  const hint = candidates.length > 0 ? `; did you mean ${candidates.join(' or ')}?` : '';
  return {
    kind: entry.kind,
    name: entry.name,
    ...(entry.qualifier ? { qualifier: entry.qualifier } : {}),
    candidates,
    message: `${what}${hint}`,
  };
}

/**
 * The closest names to `name` (case-insensitive edit distance, a swap of two adjacent letters
 * counting 1, see `editDistance`; a shared prefix/containment also
 * counts), at most {@link MAX_CANDIDATES}, each within a distance of max(1, length / 3).
 */
export function closest(name: string, pool: { key: string; text: string }[]): string[] {
  const target = name.toLowerCase();
  const scored = new Map<string, number>();
  for (const { key, text } of pool) {
    const lower = key.toLowerCase();
    let score = editDistance(target, lower);
    if (lower.length >= 3 && target.length >= 3 && (lower.includes(target) || target.includes(lower)))
      score = Math.min(score, 1.5);
    const limit = Math.max(1, Math.floor(Math.max(target.length, lower.length) / 3));
    if (score > limit) continue;
    const before = scored.get(text);
    if (before === undefined || score < before) scored.set(text, score);
  }
  return [...scored.entries()]
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, MAX_CANDIDATES)
    .map(([text]) => text);
}
