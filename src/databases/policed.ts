/**
 * A user's view of a database under a data policy: a {@link DatabaseConnector} decorator that
 * rewrites every statement for that user's {@link EffectivePolicy} (`sql/policy-rewrite.ts`),
 * checks the rewritten text with the read-only guard again, and runs it with the policy's
 * attribute values as bind parameters; `introspect()` returns only what the user may see (no
 * column the policy denies, no relation outside the allow-list or reading a restricted one
 * without its own policy, no row estimate of a filtered table). Whoever wrote the statement (the
 * model, a person, a saved example, a fallback rule), it passes here when the runtime hands the
 * user this connector.
 */
import { SqlrecallError } from '../core/errors.js';
import type { DatabaseConnector, ExecuteOptions, IntrospectOptions, QueryResult } from '../core/ports.js';
import { guardRefusal } from '../core/refusal.js';
import type { Schema } from '../core/schema.js';
import { type EffectivePolicy, policyEngineProblem, policyLabel, restrictsData } from '../policy/types.js';
import { attachPolicyCatalog, visibleSchema as visibleToPolicy } from '../policy/visibility.js';
import {
  guardParsedSync,
  guardSql,
  loadGuardParser,
  type ParsedText,
  takeGuardedParse,
} from '../sql/guard.js';
import {
  type PolicyCatalog,
  type PolicyRelation,
  relationKey,
  rewriteForPolicy,
} from '../sql/policy-rewrite.js';
import { judgeAnalysed } from './policy-analysis.js';

/** How long the catalog facts of one database are reused before they are read again (ms). */
export const POLICY_CATALOG_MS = 60_000;

/** Relations with their columns, kinds, view definitions and parents (one round trip). */
const RELATIONS_SQL = `SELECT n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS kind,
  CASE WHEN c.relkind IN ('v', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
       THEN pg_catalog.pg_get_viewdef(c.oid) END AS def,
  CASE WHEN n.nspname NOT IN ('pg_catalog', 'information_schema') THEN
    (SELECT pg_catalog.json_agg(a.attname::text ORDER BY a.attnum) FROM pg_catalog.pg_attribute a
      WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)::text END AS columns,
  (SELECT pg_catalog.json_agg(pn.nspname::text || '.' || p.relname::text)
     FROM pg_catalog.pg_inherits i
     JOIN pg_catalog.pg_class p ON p.oid = i.inhparent
     JOIN pg_catalog.pg_namespace pn ON pn.oid = p.relnamespace
    WHERE i.inhrelid = c.oid)::text AS parents
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
   AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%'`;

/** Bodies of user-defined SQL and PL/pgSQL functions. */
const FUNCTIONS_SQL = `SELECT n.nspname::text AS schema, p.proname::text AS name,
  coalesce(nullif(p.prosrc, ''), pg_catalog.pg_get_functiondef(p.oid)) AS body
  FROM pg_catalog.pg_proc p
  JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
  JOIN pg_catalog.pg_language l ON l.oid = p.prolang
 WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND p.prokind = 'f'
   AND l.lanname IN ('sql', 'plpgsql')`;

const SEARCH_PATH_SQL = 'SELECT pg_catalog.array_to_json(pg_catalog.current_schemas(false))::text AS path';

/** Row cap of a catalog read; a larger answer fails the read (and so every policed statement). */
const CATALOG_MAX_ROWS = 200_000;

/**
 * Reads the facts {@link rewriteForPolicy} needs from `db` (through its own read-only path).
 * @throws SqlrecallError from the database, or `internal` when an answer is too large
 */
export async function readPolicyCatalog(db: DatabaseConnector): Promise<PolicyCatalog> {
  const read = async (sql: string): Promise<Record<string, string | null>[]> => {
    const result = await db.execute(sql, { maxRows: CATALOG_MAX_ROWS, timeoutMs: 30_000 });
    if (result.truncated)
      throw new SqlrecallError(
        'internal',
        'The catalog is too large to check statements against the data policy.',
      );
    const names = result.columns.map((column) => column.name);
    return result.rows.map((row) =>
      Object.fromEntries(
        names.map((name, i) => [name, row[i] === null || row[i] === undefined ? null : String(row[i])]),
      ),
    );
  };
  const [relationRows, functionRows, pathRows] = [
    await read(RELATIONS_SQL),
    await read(FUNCTIONS_SQL),
    await read(SEARCH_PATH_SQL),
  ];
  const relations = new Map<string, PolicyRelation>();
  const definitions = new Map<string, string>();
  const parents = new Map<string, string[]>();
  for (const row of relationRows) {
    const schema = row.schema ?? '';
    const name = row.name ?? '';
    const key = relationKey(schema, name);
    relations.set(key, { schema, name, kind: row.kind ?? '', columns: jsonStrings(row.columns) });
    if (row.def !== null && row.def !== undefined) definitions.set(key, row.def);
    const up = jsonStrings(row.parents);
    if (up.length > 0) parents.set(key, up);
  }
  return {
    relations,
    definitions,
    parents,
    functions: functionRows.map((row) => ({
      schema: row.schema ?? '',
      name: row.name ?? '',
      body: row.body ?? '',
    })),
    searchPath: jsonStrings(pathRows[0]?.path ?? null),
  };
}

function jsonStrings(text: string | null | undefined): string[] {
  if (!text) return [];
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.map(String) : [];
}

/** One database's catalog facts, read at most once per {@link POLICY_CATALOG_MS}. */
export interface PolicyCatalogCache {
  get(): Promise<PolicyCatalog>;
}

/**
 * A cache of {@link readPolicyCatalog} for `db`, shared by every user of that database (the
 * facts do not depend on the user). A failed read is not kept.
 * @param now clock in ms (tests); default `Date.now`
 */
export function policyCatalogCache(db: DatabaseConnector, now: () => number = Date.now): PolicyCatalogCache {
  let entry: { at: number; value: Promise<PolicyCatalog> } | undefined;
  return {
    get() {
      if (entry && now() - entry.at < POLICY_CATALOG_MS) return entry.value;
      const value = readPolicyCatalog(db);
      const current = { at: now(), value };
      entry = current;
      value.catch(() => {
        if (entry === current) entry = undefined;
      });
      return value;
    },
  };
}

/**
 * Attaches the catalog facts of `catalog`'s database to `schema` (read from that database), so
 * that every user's view of it (`policy/visibility.ts`) hides what enforcement refuses.
 * @throws SqlrecallError from the database, as {@link readPolicyCatalog}
 */
export async function attachPolicyFacts(schema: Schema, catalog: PolicyCatalogCache): Promise<void> {
  await loadGuardParser();
  attachPolicyCatalog(schema, await catalog.get());
}

/**
 * The refusal of a statement by a data policy (`policy_refused`: exit 3, HTTP 403).
 * @param reason why, naming the policy (a leading `refused: ` is dropped)
 */
export function policyRefusal(
  reason: string,
  rule: string,
  policy?: string,
): SqlrecallError<'policy_refused'> {
  return new SqlrecallError('policy_refused', `Refused: ${reason.replace(/^refused: /, '')}`, {
    details: { rule, ...(policy !== undefined ? { policy } : {}) },
  });
}

/**
 * Wraps `db` so that every statement runs as `policy` allows (see the module comment). With a
 * policy that restricts nothing, statements and the catalog pass through unchanged.
 * @param catalog the catalog cache of `db` (share one per database); default a new one
 * @throws from `execute`: SqlrecallError `policy_refused` (rule and policy in `details`),
 *   `guard_refused` when the rewritten text fails the guard, and whatever `db` throws
 */
export function withDataPolicy(
  db: DatabaseConnector,
  policy: EffectivePolicy,
  catalog: PolicyCatalogCache = policyCatalogCache(db),
): DatabaseConnector {
  const restricted = restrictsData(policy);
  if (restricted && db.dialect !== 'postgres') return refusingEveryStatement(db, policy);
  return {
    dialect: db.dialect,
    get displayName() {
      return db.displayName;
    },
    ping: () => db.ping(),
    close: () => db.close(),
    async introspect(options?: IntrospectOptions): Promise<Schema> {
      const schema = await db.introspect(options);
      if (!restricted) return schema;
      return visibleSchema(schema, policy, await catalog.get());
    },
    async execute(sql: string, options: ExecuteOptions): Promise<QueryResult> {
      if (!restricted) return db.execute(sql, options);
      await loadGuardParser();
      const policyCatalog = await catalog.get();
      // The parse the guard made of this very text, when it has just accepted it: not parsed again.
      const rewritten = rewriteForPolicy(sql, policy, policyCatalog, takeGuardedParse(sql));
      if (!rewritten.ok) throw policyRefusal(rewritten.reason, rewritten.rule, rewritten.policy);
      // The guard checks the text that will run, on the parse the rewrite made of that same text;
      // its parse and scan of that text serve the server's analysis below.
      let checked: ParsedText | undefined;
      const verdict = rewritten.parsed
        ? guardParsedSync(rewritten.parsed, {}, (parts) => {
            checked = parts;
          })
        : await guardSql(rewritten.sql);
      if (!verdict.ok) throw guardRefusal(verdict.reason, verdict.rule);
      // What the names showed is checked again on what the server resolved (functions, operators,
      // views by OID), so no spelling or definition hides a read of data the policy denies.
      const refused = await judgeAnalysed(db, verdict.sql, policy, checked);
      if (refused) throw policyRefusal(refused.reason, refused.rule, refused.policy);
      if (rewritten.params.length === 0 && rewritten.sql === sql) {
        const result = await db.execute(sql, options);
        return rewritten.applied.length > 0 ? { ...result, policies: rewritten.applied } : result;
      }
      const result = await db.execute(verdict.sql, { ...options, params: rewritten.params });
      return { ...result, policies: rewritten.applied };
    },
  };
}

/**
 * `db` for a user whose policy restricts data on an engine where it cannot be enforced: every
 * statement is refused before it reaches the database (fail closed, never unfiltered), and the
 * catalog shows what the policy lets the user see by name (allow-list, denied columns).
 */
function refusingEveryStatement(db: DatabaseConnector, policy: EffectivePolicy): DatabaseConnector {
  const reason = policyEngineProblem(db.dialect)!;
  return {
    dialect: db.dialect,
    get displayName() {
      return db.displayName;
    },
    ping: () => db.ping(),
    close: () => db.close(),
    async introspect(options?: IntrospectOptions): Promise<Schema> {
      return visibleToPolicy(await db.introspect(options), policy);
    },
    async execute(): Promise<QueryResult> {
      throw policyRefusal(`${reason}; nothing ran`, 'policy-engine', policyLabel(policy));
    },
  };
}

/**
 * The part of `schema` that `policy` lets its user see, by the same rule every other view of the
 * schema uses (`policy/visibility.ts`, with `catalog`'s facts attached to `schema`): relations the
 * user may read, without denied columns (and the keys and indexes over them), and no row estimate
 * where rows are filtered.
 */
export function visibleSchema(schema: Schema, policy: EffectivePolicy, catalog: PolicyCatalog): Schema {
  attachPolicyCatalog(schema, catalog);
  return visibleToPolicy(schema, policy);
}
