/**
 * The second look at a statement that runs under a data policy: PostgreSQL's own analysis of the
 * rewritten statement (the same probe the function policy uses: a temporary view in a transaction
 * that is always rolled back) lists by OID every function, operator and relation it will use,
 * however it was written. The rewrite reads names; this reads what the server resolved, so what
 * a name cannot show is caught here:
 *
 * - a function or operator defined in the database (not built in): its body may read any table,
 *   whatever its text looks like (escaped names, dynamic SQL, an operator over a function), so a
 *   policed user may call built-in functions and operators only;
 * - a view, materialized view or foreign table the policy does not name: its definition may read
 *   statistics catalogs or policed tables under another spelling;
 * - a table outside the user's allow-list, or one a row filter makes unreadable because the user
 *   lacks the attribute it names.
 *
 * Fails closed: a database that will not analyse the statement (no TEMP privilege, a read-only
 * server, event triggers, a connector without the probe) runs nothing for a policed user.
 */
import type { DatabaseConnector } from '../core/ports.js';
import { unreadableTables } from '../policy/resolve.js';
import { type EffectivePolicy, namedRelations, policyLabel } from '../policy/types.js';
import type { ParsedText } from '../sql/guard.js';
import { ROW_COUNT_RELATIONS } from '../sql/policy-rewrite.js';
import { analysedObjects, FIRST_USER_OID, probeStatements } from '../sql/server-analysis.js';

/** A refusal of the analysis: what to say, the rule, and the policy it names. */
export interface AnalysisRefusal {
  reason: string;
  rule: string;
  policy: string;
}

/**
 * Analyses `sql` (the statement as it will run, bind parameters as `$n`) on `db` and judges what
 * it uses against `policy`.
 * @param checked the guard's parse of `sql` from its check of it, to spare parsing it again (used
 *   only when the guard made it of this text)
 * @returns undefined when it may run, else the refusal
 * @throws SqlrecallError `db_unreachable`, `db_timeout` from the database
 */
export async function judgeAnalysed(
  db: DatabaseConnector,
  sql: string,
  policy: EffectivePolicy,
  checked?: ParsedText,
): Promise<AnalysisRefusal | undefined> {
  const name = policyLabel(policy);
  const cannot = (why: string): AnalysisRefusal => ({
    reason: `under ${name} every statement is first analysed by the database itself, and ${why}; nothing ran`,
    rule: 'policy-analysis',
    policy: name,
  });
  if (!db.probe) return cannot('this connection cannot analyse statements');
  let statements: string[];
  try {
    statements = probeStatements(sql, checked);
  } catch {
    return cannot('this statement could not be prepared for the analysis');
  }
  let tree: string | null | undefined;
  let view: string | null | undefined;
  try {
    const [row] = await db.probe(statements, { timeoutMs: 15_000 });
    tree = row?.tree;
    view = row?.view;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'db_unreachable' || code === 'db_timeout') throw error;
    return cannot(`the database would not analyse it (${(error as Error).message ?? String(error)})`);
  }
  if (!tree) return cannot('the database returned no analysis');
  const objects = analysedObjects(tree);
  const isUser = (oid: string): boolean => Number(oid) >= FIRST_USER_OID;
  const functions = [...objects.functions].filter(isUser);
  const operators = [...objects.operators].filter(isUser);
  const relations = [...objects.relations.keys()].filter((oid) => isUser(oid) && oid !== view);
  const rows = await lookUp(db, functions, operators, relations);
  const named = namedRelations(policy);
  const unnamedCode = rows.find(
    (r) => (r.kind === 'function' || r.kind === 'operator') && !named.has(r.name),
  );
  const unknownCode =
    functions.length + operators.length >
    rows.filter((r) => r.kind === 'function' || r.kind === 'operator').length;
  if (unnamedCode || unknownCode) {
    const what = unnamedCode
      ? `${unnamedCode.kind} ${unnamedCode.name}`
      : 'a function or operator defined in this database';
    return {
      reason: `${what} is defined in this database and ${name} does not name it; a function's body can read data the policy hides, so under a data policy only built-in functions and operators, and those the policy names, may run`,
      rule: 'policy-function',
      policy: name,
    };
  }
  const missing = unreadableTables(policy);
  for (const oid of relations) {
    const row = rows.find((r) => r.oid === oid);
    if (!row) return cannot(`relation ${oid} could not be found in the catalog`);
    const table = row.name;
    const rule = missing.get(table);
    if (rule)
      return { reason: `${table} is unreadable for you: ${rule}`, rule: 'policy-attribute', policy: rule };
    if (policy.tables && !policy.tables.has(table))
      return {
        reason: `${table} is not among the tables ${name} lets you read`,
        rule: 'policy-tables',
        policy: name,
      };
    if (row.kind !== 'r' && row.kind !== 'p' && !named.has(table)) {
      const reached = await viewReaches(db, oid, policy);
      if (reached)
        return {
          reason: `${table} is a ${row.kind === 'f' ? 'foreign table' : 'view'} that ${name} does not name, and it reads ${reached}`,
          rule: 'policy-view',
          policy: name,
        };
    }
  }
  return undefined;
}

/**
 * Catalogs that hold column values of every table (statistics), or count every table's rows,
 * refused behind a view too.
 */
const STATISTICS = new Set([
  'pg_catalog.pg_statistic',
  'pg_catalog.pg_statistic_ext',
  'pg_catalog.pg_statistic_ext_data',
  'pg_catalog.pg_stats',
  'pg_catalog.pg_stats_ext',
  'pg_catalog.pg_stats_ext_exprs',
  ...ROW_COUNT_RELATIONS.map((name) => `pg_catalog.${name}`),
]);

/**
 * What the view `oid` reads that the policy must stop, following its definition's dependencies
 * (`pg_depend` of its rewrite rules) through views of views: a policed table, a table outside the
 * allow-list, a statistics catalog, a foreign table or a function defined in the database (whose
 * body nothing can see into). Undefined when it reads none of those.
 */
async function viewReaches(
  db: DatabaseConnector,
  oid: string,
  policy: EffectivePolicy,
): Promise<string | undefined> {
  const sql = `WITH RECURSIVE reached(oid) AS (
      SELECT ${Number(oid)}::oid
      UNION
      SELECT d.refobjid FROM pg_catalog.pg_depend d
        JOIN pg_catalog.pg_rewrite r ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = r.oid
        JOIN reached ON r.ev_class = reached.oid
       WHERE d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid <> r.ev_class)
    SELECT 'relation' AS what, c.relkind::text AS kind, n.nspname::text || '.' || c.relname::text AS name
      FROM reached JOIN pg_catalog.pg_class c ON c.oid = reached.oid
      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    UNION ALL
    SELECT 'function', '', n.nspname::text || '.' || p.proname::text
      FROM reached
      JOIN pg_catalog.pg_rewrite r ON r.ev_class = reached.oid
      JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = r.oid
       AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
      JOIN pg_catalog.pg_proc p ON p.oid = d.refobjid
      JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
     WHERE p.oid >= ${FIRST_USER_OID}
    UNION ALL
    SELECT 'definition', '', pg_catalog.pg_get_viewdef(c.oid)
      FROM reached JOIN pg_catalog.pg_class c ON c.oid = reached.oid
     WHERE c.relkind IN ('v', 'm') AND c.oid >= ${FIRST_USER_OID}`;
  const rows = await catalogRows(db, `SELECT * FROM (${sql}) AS reached LIMIT ${VIEW_OBJECTS_MAX + 1}`);
  if (rows.length > VIEW_OBJECTS_MAX) return 'more objects than can be checked';
  const policed = new Set([...policy.deniedColumns.keys(), ...policy.rowFilters.keys()]);
  for (const [what, kind, reachedName] of rows.map((r) => [r.what, r.kind, r.name].map(String))) {
    if (what === 'function') return `function ${reachedName}, whose body may read anything`;
    if (what === 'definition') {
      const pinned = pinnedCatalogIn(reachedName ?? '');
      if (pinned) return `the catalog ${pinned}`;
      continue;
    }
    if (reachedName === undefined) continue;
    if (STATISTICS.has(reachedName)) return `the statistics catalog ${reachedName}`;
    if (policed.has(reachedName)) return `${reachedName}, which the policy restricts`;
    if (kind === 'f') return `the foreign table ${reachedName}`;
    if ((kind === 'r' || kind === 'p') && policy.tables && !policy.tables.has(reachedName))
      return `${reachedName}, which is not among the tables you may read`;
  }
  return undefined;
}

/**
 * Catalogs of {@link STATISTICS} that PostgreSQL pins: a view reading one records no dependency on
 * it, so its definition is searched for the name (as a word) instead.
 */
const PINNED = /(?<![\w$])(pg_class|pg_statistic|pg_statistic_ext|pg_statistic_ext_data)(?![\w$])/i;

function pinnedCatalogIn(definition: string): string | undefined {
  const hit = PINNED.exec(definition)?.[1];
  return hit === undefined ? undefined : `pg_catalog.${hit.toLowerCase()}`;
}

interface CatalogRow {
  oid: string;
  kind: string;
  name: string;
}

/** Names and kinds of the user-defined objects found (one catalog query). */
async function lookUp(
  db: DatabaseConnector,
  functions: string[],
  operators: string[],
  relations: string[],
): Promise<CatalogRow[]> {
  if (functions.length + operators.length + relations.length === 0) return [];
  const list = (oids: string[]): string => (oids.length > 0 ? oids.join(',') : '0');
  const sql = `SELECT p.oid::text AS oid, 'function' AS kind, n.nspname::text || '.' || p.proname::text AS name
      FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
     WHERE p.oid IN (${list(functions)})
    UNION ALL
    SELECT o.oid::text, 'operator', n.nspname::text || '.' || o.oprname::text
      FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
     WHERE o.oid IN (${list(operators)})
    UNION ALL
    SELECT c.oid::text, c.relkind::text, n.nspname::text || '.' || c.relname::text
      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE c.oid IN (${list(relations)})`;
  const rows = await catalogRows(db, sql);
  return rows.map((row) => ({ oid: String(row.oid), kind: String(row.kind), name: String(row.name) }));
}

/** Most objects one view's definition may reach before the view is refused as too large to check. */
const VIEW_OBJECTS_MAX = 100_000;

/**
 * Runs one of this module's own catalog queries (fixed text, numeric OIDs only) through the
 * connector's probe: a transaction that is always rolled back, straight to the database. Through
 * `execute` it would be judged by the function policy like a user's statement, a server analysis
 * of its own each time, for a query that calls built-in functions only.
 * @throws SqlrecallError `db_*`; Error when the connector has no probe
 */
async function catalogRows(db: DatabaseConnector, sql: string): Promise<Record<string, string | null>[]> {
  if (!db.probe) throw new Error('this connection cannot read the catalog for the analysis');
  return db.probe([sql], { timeoutMs: 15_000 });
}
