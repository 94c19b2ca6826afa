/**
 * What a data policy grants one user, once the policy file has been read and the user's teams
 * merged: the shared shape between the policy file (which produces it), the SQL rewrite (which
 * enforces it on every statement), schema visibility, privacy mode and the audit trail.
 *
 * Names of tables and columns are lower-case, schema-qualified and unquoted (`public.orders`,
 * column `email`), as the catalog reports them after folding; a quoted mixed-case name in the
 * database keeps its case (`public."Orders"` is `public.Orders`).
 */
import type { DatabaseDialectName } from '../core/ports.js';

/** A row filter on one table: a boolean SQL expression over that table's own columns. */
export interface RowFilter {
  /**
   * The expression as the policy file wrote it, with `:name` placeholders already replaced by
   * `$1`, `$2`, … in order of first appearance (`region = $1`).
   */
  expression: string;
  /** The bind values for `$1`, `$2`, …: the user's attribute values, as text. */
  params: readonly string[];
  /** Where the rule came from, for refusals, `policy explain` and the audit (`team sales`). */
  policy: string;
}

/** The merged policy of one user. */
export interface EffectivePolicy {
  /** The user it applies to. */
  user: string;
  /**
   * The entries that produced it, most specific first (`user sam`, `team sales`, `defaults`);
   * empty when no policy file is configured (then nothing is restricted).
   */
  sources: readonly string[];
  /**
   * Tables and views the user may read (qualified names); `undefined` = every table the connection
   * role can read. With several teams, the intersection of the lists given (fail closed).
   */
  tables?: ReadonlySet<string>;
  /**
   * Columns that do not exist for this user, per qualified table name; each entry names the policy
   * that denied it. With several teams, the union (fail closed).
   */
  deniedColumns: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** Row filters per qualified table name; several teams' filters on one table are AND-ed. */
  rowFilters: ReadonlyMap<string, readonly RowFilter[]>;
  /** False = privacy mode: no result value reaches the model. Default true. */
  rowsToModel: boolean;
  /** May read the audit trail and the policy status over HTTP. */
  admin: boolean;
}

/** The policy of a process with no policy file: everything the connection role can read. */
export function unrestrictedPolicy(user: string, admin = false): EffectivePolicy {
  return {
    user,
    sources: [],
    deniedColumns: new Map(),
    rowFilters: new Map(),
    rowsToModel: true,
    admin,
  };
}

/** True when `policy` restricts tables, columns or rows (privacy mode alone restricts none). */
export function restrictsData(policy: EffectivePolicy): boolean {
  return policy.tables !== undefined || policy.deniedColumns.size > 0 || policy.rowFilters.size > 0;
}

/** The entries a refusal names (`user sam, team sales`), or `the policy of USER` when none is known. */
export function policyLabel(policy: EffectivePolicy): string {
  return policy.sources.join(', ') || `the policy of ${policy.user}`;
}

/**
 * Relations and functions `policy` names: its allow-list and the tables its column and row rules
 * cover (qualified names). A view or function the policy names is read on the administrator's word.
 */
export function namedRelations(policy: EffectivePolicy): Set<string> {
  return new Set([...(policy.tables ?? []), ...policy.deniedColumns.keys(), ...policy.rowFilters.keys()]);
}

/**
 * Why a data policy that restricts data cannot be enforced on `dialect`, or undefined when it can
 * (PostgreSQL and PGlite): the rewrite and the server-side check speak PostgreSQL only.
 */
export function policyEngineProblem(dialect: DatabaseDialectName): string | undefined {
  if (dialect === 'postgres') return undefined;
  return `data policies need a PostgreSQL database (or PGlite); this is ${ENGINE_NAMES[dialect]}, so every statement of a user whose policy restricts tables, columns or rows is refused`;
}

const ENGINE_NAMES: Readonly<Record<Exclude<DatabaseDialectName, 'postgres'>, string>> = {
  mysql: 'MySQL/MariaDB',
  sqlite: 'SQLite',
  duckdb: 'DuckDB',
};
