/**
 * The policy file's use cases: `policy check` (is the file valid, and does every table, column and
 * user it names exist?), `policy explain` (what one user may read, and why) and `policy export
 * --postgres` (the same rules as PostgreSQL row-level security and column grants, for those who
 * prefer the database to enforce them).
 */
import { existsSync } from 'node:fs';
import { SqlrecallError, toSqlrecallError } from '../core/errors.js';
import type { Schema, Table } from '../core/schema.js';
import {
  canonicalTable,
  filterReads,
  type PolicyDocument,
  type PolicyProblem,
  type PolicyRules,
} from '../policy/file.js';
import {
  effectivePolicy,
  type PolicyUserContext,
  UNREADABLE_FILTER,
  unreadableTables,
} from '../policy/resolve.js';
import { readPolicyFile } from '../policy/source.js';
import { type EffectivePolicy, namedRelations, policyEngineProblem, policyLabel } from '../policy/types.js';
import type { Runtime } from '../runtime/runtime.js';
import { closest } from '../sql/identifiers.js';
import { scanTokens } from '../sql/parse-tree.js';
import { userNameKey } from './user-names.js';
import { type Principal, UserDirectory } from './users.js';

/** What `policy check` needs besides the file: each part is checked only when given. */
export interface PolicyCheckInputs {
  /** The database's catalog: tables and columns the file names must exist in it. */
  catalog?: Schema;
  /**
   * Runs a row filter once on its table, with every attribute as NULL and no row returned, to
   * find names that do not exist or types that do not fit; throws the database's error.
   */
  tryFilter?: (sql: string) => Promise<void>;
  /** The registered users (`users add`): users the file names must be among them. */
  registeredUsers?: readonly string[];
}

/** The result of `policy check`. */
export interface PolicyCheckDocument {
  /** Absolute path of the file. */
  file: string;
  /** True when there are no problems (warnings do not count). */
  ok: boolean;
  /** What makes the file wrong: invalid, or naming a table, column or user that does not exist. */
  problems: PolicyProblem[];
  /** What is allowed but likely a mistake, and what could not be checked. */
  warnings: PolicyProblem[];
  users: number;
  teams: number;
}

/**
 * Checks a policy file: its shape and row filters, then — as far as `inputs` allow — that every
 * table and column it names exists (with the closest real names), that each row filter runs on
 * its table, and that every user it names is registered.
 * @throws nothing for a bad file: every problem is in the document
 */
export async function checkPolicy(
  path: string,
  inputs: PolicyCheckInputs = {},
): Promise<PolicyCheckDocument> {
  const parsed = await readPolicyFile(path);
  if (!parsed.ok)
    return { file: path, ok: false, problems: parsed.problems, warnings: [], users: 0, teams: 0 };
  const document = parsed.document;
  const problems: PolicyProblem[] = [];
  const warnings: PolicyProblem[] = [];
  const entries = ruleEntries(document);

  const engine = inputs.catalog ? policyEngineProblem(inputs.catalog.dialect) : undefined;
  if (engine && entries.some(({ rules }) => restrictsAnything(rules)))
    problems.push({ path: '(file)', message: engine });
  if (inputs.catalog) {
    const tables = new Map(inputs.catalog.tables.map((t) => [`${t.schema}.${t.name}`, t]));
    const pool = [...tables.keys()].map((k) => ({ key: k, text: k }));
    // Closest by the table's own name first (a typo is rarely in the schema), else by the whole.
    const unknownTable = (where: string, name: string) => {
      const bare = name.slice(name.indexOf('.') + 1);
      let near = closest(
        bare,
        [...tables.values()].map((t) => ({ key: t.name, text: `${t.schema}.${t.name}` })),
      );
      if (near.length === 0) near = closest(name, pool);
      problems.push({ path: where, message: `no table or view ${name}${didYouMean(near)}` });
    };
    for (const { path: at, rules } of entries) {
      for (const name of rules.tables ?? []) if (!tables.has(name)) unknownTable(`${at}.tables`, name);
      for (const [name, columns] of rules.denyColumns) {
        const table = tables.get(name);
        if (!table) {
          unknownTable(`${at}.deny_columns`, name);
          continue;
        }
        for (const column of columns) {
          if (table.columns.some((c) => c.name === column)) continue;
          const near = closest(
            column,
            table.columns.map((c) => ({ key: c.name, text: c.name })),
          );
          problems.push({
            path: `${at}.deny_columns`,
            message: `${name} has no column ${column}${didYouMean(near.map((c) => `${name}.${c}`))}`,
          });
        }
      }
      for (const [name, filter] of rules.rows) {
        if (!tables.has(name)) {
          unknownTable(`${at}.rows`, name);
          continue;
        }
        // The filter is PostgreSQL: on another engine it is not run (the problem above says why).
        if (!inputs.tryFilter || engine) continue;
        try {
          await inputs.tryFilter(
            `SELECT 1 FROM ${quoteQualified(tables.get(name)!)} WHERE (${bindAll(filter.expression, () => 'NULL')}) LIMIT 0`,
          );
        } catch (error) {
          problems.push({
            path: `${at}.rows.${name}`,
            message: `the filter does not run on ${name}: ${error instanceof Error ? error.message : String(error)}`,
          });
        }
      }
    }
  } else {
    warnings.push({
      path: '(file)',
      message: 'tables and columns were not checked: no database is configured',
    });
  }

  if (inputs.registeredUsers && inputs.registeredUsers.length > 0) {
    const pool = inputs.registeredUsers.map((u) => ({ key: u, text: u }));
    const known = new Set(inputs.registeredUsers.map(userNameKey));
    for (const [key, user] of document.users) {
      if (known.has(key)) continue;
      problems.push({
        path: `users.${user.name}`,
        message: `no registered user ${user.name}${didYouMean(closest(user.name, pool))}`,
      });
    }
  } else {
    warnings.push({
      path: '(file)',
      message: 'user names were not checked: no users are registered (`sqlrecall users add NAME`)',
    });
  }

  warnings.push(...readsOutsideAllowList(document, entries));
  for (const [, user] of document.users) {
    const policy = effectivePolicy(document, user.name);
    for (const [table, reason] of unreadableTables(policy))
      warnings.push({
        path: `users.${user.name}`,
        message: `${table} is unreadable for ${user.name}: ${reason}`,
      });
  }
  return {
    file: path,
    ok: problems.length === 0,
    problems,
    warnings,
    users: document.users.size,
    teams: document.teams.size,
  };
}

/**
 * Row filters whose subquery reads a table outside the allow-list that applies with them: the
 * entry's own list, and for each user of the file the list their teams leave (the intersection).
 * The filter reads that table for users who may not read it themselves: allowed (a mapping table
 * kept out of sight), but likely a mistake, so `policy check` says so. An unqualified name is
 * outside when no allowed table has that name.
 */
function readsOutsideAllowList(
  document: PolicyDocument,
  entries: readonly { path: string; source: string; rules: PolicyRules }[],
): PolicyProblem[] {
  const out: PolicyProblem[] = [];
  // Once per filter and table read: a user's finding repeats none of the entry that wrote it.
  const seen = new Set<string>();
  const flag = (
    path: string,
    table: string,
    expression: string,
    allowed: ReadonlySet<string>,
    whose: string,
    writer = whose,
  ) => {
    const bare = new Set([...allowed].map((t) => t.slice(t.indexOf('.') + 1)));
    for (const read of filterReads(expression)) {
      const inside = read.includes('.') ? allowed.has(canonicalTable(read)) : bare.has(read);
      const key = `${writer}|${table}|${read}`;
      if (inside || seen.has(key)) continue;
      seen.add(key);
      out.push({
        path: `${path}.rows.${table}`,
        message: `the row filter reads ${read}, which is outside the allow-list of ${whose}: it reads that table for users who may not read it themselves`,
      });
    }
  };
  for (const { path, source, rules } of entries) {
    if (!rules.tables) continue;
    const allowed = new Set(rules.tables);
    for (const [table, filter] of rules.rows) flag(path, table, filter.expression, allowed, source);
  }
  for (const [, user] of document.users) {
    const policy = effectivePolicy(document, user.name);
    if (!policy.tables) continue;
    for (const [table, filters] of policy.rowFilters)
      for (const filter of filters)
        if (filter.expression !== UNREADABLE_FILTER)
          flag(
            `users.${user.name}`,
            table,
            filter.expression,
            policy.tables,
            `user ${user.name} (${policyLabel(policy)})`,
            filter.policy,
          );
  }
  return out;
}

/** True when `rules` restrict tables, columns or rows (privacy mode alone restricts none). */
function restrictsAnything(rules: PolicyRules): boolean {
  return rules.tables !== undefined || rules.denyColumns.size > 0 || rules.rows.size > 0;
}

/** Every entry of the document that carries rules, with its place in the file. */
function ruleEntries(document: PolicyDocument): { path: string; source: string; rules: PolicyRules }[] {
  return [
    ...[...document.users.values()].map((u) => ({
      path: `users.${u.name}`,
      source: `user ${u.name}`,
      rules: u.rules,
    })),
    ...[...document.teams].map(([name, rules]) => ({ path: `teams.${name}`, source: `team ${name}`, rules })),
    { path: 'defaults', source: 'defaults', rules: document.defaults },
  ];
}

function didYouMean(names: readonly string[]): string {
  return names.length > 0 ? ` (did you mean ${names.join(', ')}?)` : '';
}

/** A PostgreSQL identifier, quoted. */
function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `"schema"."table"`. */
function quoteQualified(table: { schema: string; name: string }): string {
  return `${ident(table.schema)}.${ident(table.name)}`;
}

/** A PostgreSQL string literal (standard-conforming strings). */
function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * `expression` with each `$n` bind parameter replaced by `value(n)` (found with PostgreSQL's
 * scanner, so `'$1'` in a string literal stays). Expects the SQL parser loaded.
 */
function bindAll(expression: string, value: (n: number) => string): string {
  const bytes = Buffer.from(expression, 'utf8');
  const out: string[] = [];
  let at = 0;
  for (const token of scanTokens(expression)) {
    if (token.tokenName !== 'PARAM') continue;
    out.push(bytes.subarray(at, token.start).toString('utf8'), value(Number(token.text.slice(1))));
    at = token.end;
  }
  out.push(bytes.subarray(at).toString('utf8'));
  return out.join('');
}

/** The answer of `policy explain` for one table. */
export interface TableExplanation {
  /** Canonical name. */
  table: string;
  readable: boolean;
  /** Why not, naming the policy. */
  reason?: string;
  /** Columns that do not exist for the user, each with its policy. */
  deniedColumns: { column: string; policy: string }[];
  /** Row filters AND-ed on the table, with the values bound to `$1`, `$2`, …. */
  rowFilters: { expression: string; params: readonly string[]; policy: string }[];
}

/** The result of `policy explain`. */
export interface PolicyExplanation {
  file: string | null;
  user: string;
  /** The entries that apply, most specific first; empty when no policy file is configured. */
  sources: readonly string[];
  /** The allow-list, or null for every table the connection role can read. */
  tables: string[] | null;
  deniedColumns: { table: string; column: string; policy: string }[];
  rowFilters: { table: string; expression: string; params: readonly string[]; policy: string }[];
  /** Tables a row filter makes unreadable (an attribute the user lacks). */
  unreadable: { table: string; reason: string }[];
  /** False: privacy mode (no result value reaches the model). */
  rowsToModel: boolean;
  /** The one table asked about, when one was. */
  table?: TableExplanation;
}

/** `policy explain`: what `policy` lets its user read, as one document; `table` narrows it to one. */
export function explainPolicy(
  file: string | null,
  policy: EffectivePolicy,
  table?: string,
): PolicyExplanation {
  const unreadable = unreadableTables(policy);
  const doc: PolicyExplanation = {
    file,
    user: policy.user,
    sources: policy.sources,
    tables: policy.tables ? [...policy.tables] : null,
    deniedColumns: [...policy.deniedColumns].flatMap(([t, columns]) =>
      [...columns].map(([column, source]) => ({ table: t, column, policy: source })),
    ),
    rowFilters: [...policy.rowFilters].flatMap(([t, filters]) =>
      filters.map((f) => ({ table: t, expression: f.expression, params: f.params, policy: f.policy })),
    ),
    unreadable: [...unreadable].map(([t, reason]) => ({ table: t, reason })),
    rowsToModel: policy.rowsToModel,
  };
  if (table !== undefined) {
    const name = canonicalTable(table);
    const outside = policy.tables !== undefined && !policy.tables.has(name);
    const dead = unreadable.get(name);
    doc.table = {
      table: name,
      readable: !outside && dead === undefined,
      ...(outside
        ? { reason: `not in the allow-list of ${listSources(policy)}` }
        : dead
          ? { reason: dead }
          : {}),
      deniedColumns: [...(policy.deniedColumns.get(name) ?? [])].map(([column, source]) => ({
        column,
        policy: source,
      })),
      rowFilters: (policy.rowFilters.get(name) ?? []).map((f) => ({
        expression: f.expression,
        params: f.params,
        policy: f.policy,
      })),
    };
  }
  return doc;
}

function listSources(policy: EffectivePolicy): string {
  return policy.sources.join(', ') || 'the policy';
}

/** One explanation as text lines (the CLI's rendering, also used by `doctor`). */
export function explanationText(doc: PolicyExplanation): string {
  const lines: string[] = [];
  if (!doc.file)
    return `No policy file is configured: ${doc.user} may read every table the connection role can read.`;
  lines.push(`Policy of ${doc.user} from ${doc.sources.join(', ')} (${doc.file})`);
  const shownFilter = (f: { expression: string; params: readonly string[] }) =>
    f.params.length
      ? `${f.expression}  [${f.params.map((p, i) => `$${i + 1} = ${literal(p)}`).join(', ')}]`
      : f.expression;
  if (doc.table) {
    const t = doc.table;
    if (!t.readable) {
      lines.push(`${t.table}: not readable (${t.reason})`);
      return lines.join('\n');
    }
    lines.push(`${t.table}: readable`);
    lines.push(
      t.deniedColumns.length
        ? `  columns that do not exist for ${doc.user}: ${t.deniedColumns.map((c) => `${c.column} (${c.policy})`).join(', ')}`
        : '  every column',
    );
    lines.push(
      ...(t.rowFilters.length
        ? t.rowFilters.map((f) => `  rows where ${shownFilter(f)} (${f.policy})`)
        : ['  every row']),
    );
    return lines.join('\n');
  }
  lines.push(
    `tables: ${doc.tables ? doc.tables.join(', ') || 'none' : 'every table the connection role can read'}`,
  );
  if (doc.deniedColumns.length)
    lines.push('denied columns:', ...doc.deniedColumns.map((c) => `  ${c.table}.${c.column} (${c.policy})`));
  const filters = doc.rowFilters.filter((f) => !doc.unreadable.some((u) => u.table === f.table));
  if (filters.length)
    lines.push('row filters:', ...filters.map((f) => `  ${f.table}: ${shownFilter(f)} (${f.policy})`));
  if (doc.unreadable.length)
    lines.push('unreadable:', ...doc.unreadable.map((u) => `  ${u.table}: ${u.reason}`));
  lines.push(
    doc.rowsToModel
      ? 'result values may reach the model'
      : 'privacy mode: answers are written without showing the data to the model',
  );
  return lines.join('\n');
}

/** Name of the role `policy export --postgres` gives the rules of users without an entry. */
export const DEFAULT_ROLE = 'sqlrecall_default';

/**
 * The policy as PostgreSQL statements, for each user of the file (a role of the same name) and
 * for {@link DEFAULT_ROLE} (anyone else): `REVOKE ALL` on every relation of `catalog`, `GRANT
 * SELECT` on the readable ones (a column list when columns are denied), row-level security on the
 * tables with a row filter and one policy per role on each (the user's attributes written in as
 * literals; `true` for a role without a filter there). One transaction; re-runnable.
 */
export function exportPostgres(document: PolicyDocument, catalog: Schema, file: string): string {
  const relations = catalog.tables;
  const filtered = new Set<string>();
  for (const { rules } of ruleEntries(document)) for (const table of rules.rows.keys()) filtered.add(table);
  const rlsTables = relations.filter((t) => filtered.has(`${t.schema}.${t.name}`) && isPlainTable(t));
  const lines = [
    `-- PostgreSQL row-level security and column grants equivalent to the sqlrecall policy ${file}.`,
    '-- One role per user of the file, named like the user, and the role sqlrecall_default for everyone',
    '-- else: create them (and grant them USAGE on the schemas) before running this.',
    '-- Superusers, roles with BYPASSRLS and the owners of the tables are not held by row-level security.',
    "-- Views run with their owner's rights unless created WITH (security_invoker = true): a view is",
    '-- granted only to roles whose policy names it, as sqlrecall reads it only for them.',
    '-- PUBLIC loses its rights on these relations: a grant to PUBLIC would hold every denied column.',
    'BEGIN;',
  ];
  if (relations.length > 0)
    lines.push(`REVOKE ALL ON ${relations.map(quoteQualified).join(', ')} FROM PUBLIC;`);
  for (const t of rlsTables) lines.push(`ALTER TABLE ${quoteQualified(t)} ENABLE ROW LEVEL SECURITY;`);
  const roles: { role: string; policy: EffectivePolicy }[] = [
    ...[...document.users.values()].map((u) => ({ role: u.name, policy: effectivePolicy(document, u.name) })),
    { role: DEFAULT_ROLE, policy: effectivePolicy(document, DEFAULT_ROLE) },
  ];
  for (const { role, policy } of roles) {
    const unreadable = unreadableTables(policy);
    lines.push('', `-- ${role}: ${policy.sources.join(', ')}`);
    if (relations.length > 0)
      lines.push(`REVOKE ALL ON ${relations.map(quoteQualified).join(', ')} FROM ${ident(role)};`);
    for (const t of relations) {
      const name = `${t.schema}.${t.name}`;
      const policyName = ident(`sqlrecall ${role}`);
      if (rlsTables.includes(t)) lines.push(`DROP POLICY IF EXISTS ${policyName} ON ${quoteQualified(t)};`);
      if ((policy.tables && !policy.tables.has(name)) || unreadable.has(name)) continue;
      if (!isPlainTable(t) && !namedRelations(policy).has(name)) continue;
      const denied = policy.deniedColumns.get(name);
      const columns = t.columns.filter((c) => !denied?.has(c.name));
      if (columns.length === 0) continue;
      lines.push(
        denied && denied.size > 0
          ? `GRANT SELECT (${columns.map((c) => ident(c.name)).join(', ')}) ON ${quoteQualified(t)} TO ${ident(role)};`
          : `GRANT SELECT ON ${quoteQualified(t)} TO ${ident(role)};`,
      );
      if (!rlsTables.includes(t)) continue;
      const filters = (policy.rowFilters.get(name) ?? []).filter((f) => f.expression !== UNREADABLE_FILTER);
      const using = filters.length
        ? filters
            .map((f) => `(${bindAll(f.expression, (n) => literal(f.params[n - 1] ?? ''))})`)
            .join(' AND ')
        : 'true';
      lines.push(
        `CREATE POLICY ${policyName} ON ${quoteQualified(t)} FOR SELECT TO ${ident(role)} USING (${using});`,
      );
    }
  }
  lines.push('COMMIT;');
  return `${lines.join('\n')}\n`;
}

function isPlainTable(table: Table): boolean {
  return table.kind === 'table' || table.kind === 'partitioned_table';
}

/**
 * The policy of `user` under the file at `path`, read now (for `policy explain` with a file given
 * on the command line).
 * @throws SqlrecallError `config` when the file is invalid
 */
export async function policyFromFile(
  path: string,
  user: string,
  context: PolicyUserContext = {},
): Promise<{ document: PolicyDocument; policy: EffectivePolicy }> {
  const parsed = await readPolicyFile(path);
  if (!parsed.ok)
    throw new SqlrecallError(
      'config',
      `The policy file ${path} is invalid: ${parsed.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}.`,
      { details: { setting: 'SQLRECALL_POLICY', hint: 'Run `sqlrecall policy check` for every problem.' } },
    );
  return { document: parsed.document, policy: effectivePolicy(parsed.document, user, context) };
}

/**
 * The configured policy file's path.
 * @throws SqlrecallError `usage` when none is configured
 */
export function configuredPolicyPath(runtime: Runtime): string {
  const path = runtime.config.policy;
  if (!path)
    throw new SqlrecallError(
      'usage',
      'No policy file is configured: pass --policy FILE or set SQLRECALL_POLICY.',
    );
  return path;
}

/**
 * The registered users (`users add`), or undefined when there is no user directory to read (no
 * memory store yet: nothing is created to find out) or it cannot be read.
 */
export async function registeredPrincipals(runtime: Runtime): Promise<Principal[] | undefined> {
  const { memoryClient, memoryStoreOptions } = await import('../runtime/memory-runtime.js');
  const options = memoryStoreOptions(runtime.config);
  if ('dataDir' in options && options.dataDir && !existsSync(options.dataDir)) return undefined;
  const client = memoryClient(runtime.config);
  try {
    return await new UserDirectory(client).list();
  } catch {
    return undefined;
  } finally {
    await client.close().catch(() => {});
  }
}

/**
 * `policy check` on the configured file (or `path`): against the configured database's catalog
 * when one answers, and the registered users when there are any.
 * @throws SqlrecallError `usage` when no file is given or configured
 */
export async function checkConfiguredPolicy(runtime: Runtime, path?: string): Promise<PolicyCheckDocument> {
  const file = path ?? configuredPolicyPath(runtime);
  const inputs: PolicyCheckInputs = {};
  const unchecked: PolicyProblem[] = [];
  if (runtime.config.databaseUrl) {
    try {
      const db = await runtime.database();
      inputs.catalog = await runtime.catalog();
      inputs.tryFilter = async (sql) => {
        await db.execute(sql, { maxRows: 1, timeoutMs: 10_000 });
      };
    } catch (error) {
      unchecked.push({
        path: '(file)',
        message: `tables and columns were not checked: ${toSqlrecallError(error).message}`,
      });
    }
  }
  const principals = await registeredPrincipals(runtime);
  if (principals) inputs.registeredUsers = principals.map((p) => p.user);
  const doc = await checkPolicy(file, inputs);
  if (unchecked.length > 0)
    doc.warnings = [
      ...unchecked,
      ...doc.warnings.filter((w) => !/no database is configured/.test(w.message)),
    ];
  return doc;
}

/**
 * `policy explain`: what `user` may read under the configured policy file, as one document.
 * The user's registered team (or `team`) applies when the file has no entry for them.
 * @throws SqlrecallError `config` when the configured file is invalid
 */
export async function explainConfiguredPolicy(
  runtime: Runtime,
  user: string,
  options: { team?: string; table?: string } = {},
): Promise<PolicyExplanation> {
  const path = runtime.config.policy;
  let team = options.team;
  if (path && team === undefined) {
    const principals = await registeredPrincipals(runtime);
    team = principals?.find((p) => userNameKey(p.user) === userNameKey(user))?.team;
  }
  const policy = path
    ? (await policyFromFile(path, user, team !== undefined ? { team } : {})).policy
    : await runtime.policyFor(user);
  return explainPolicy(path ?? null, policy, options.table);
}

/**
 * `policy export --postgres`: the configured policy as PostgreSQL statements over the configured
 * database's catalog.
 * @throws SqlrecallError `usage` (no file), `config` (invalid file, no database), `db_*`
 */
export async function exportConfiguredPolicy(runtime: Runtime): Promise<string> {
  const path = configuredPolicyPath(runtime);
  const { document } = await policyFromFile(path, DEFAULT_ROLE);
  return exportPostgres(document, await runtime.catalog(), path);
}
