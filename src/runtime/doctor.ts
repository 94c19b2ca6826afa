/**
 * Health checks shared by `sqlrecall doctor`, `demo` and (later) `GET /api/health`: each check says
 * what is wrong in one sentence and the exact command that fixes it.
 */

import { accessSync, constants, existsSync } from 'node:fs';
import { type ErrorCode, isSqlrecallError, toSqlrecallError } from '../core/errors.js';
import type { DatabaseConnector, DatabaseDialectName } from '../core/ports.js';
import {
  describeGrants,
  MYSQL_GRANTS_SQL,
  MYSQL_IDENTITY_SQL,
  readOnlyUserSql,
  writingGrants,
} from '../databases/mysql/grants.js';
import { resolveContextTokens } from '../linking/budget.js';
import type { ContextWindow, StructuredOutputSupport } from '../models/provider.js';
import type { Runtime } from './runtime.js';

/** Result of one check. */
export interface Check {
  name: string;
  ok: boolean;
  /** `warn` checks do not fail the run (e.g. no database configured yet). */
  level: 'ok' | 'warn' | 'fail';
  message: string;
  /** The exact command or step that fixes the problem. */
  fix?: string;
  /** Error code behind a failure (selects the exit code). */
  code?: ErrorCode;
}

/** The most `doctor` waits for the structured-output probe, in milliseconds (a cold model loads first). */
const PROBE_TIMEOUT_MS = 60_000;

/**
 * Checks the configured model server: it answers (with the exact fix when not), the chat and
 * embedding models are there, the context window prompts are sized for and where it was read,
 * whether replies can be held to a JSON schema, and the embedding model's vectors
 * ({@link checkEmbeddings}). Every message names the backend and address in use.
 */
export async function checkModels(runtime: Runtime): Promise<Check[]> {
  const { config } = runtime;
  const provider = runtime.provider();
  const checks: Check[] = [];
  let listed: string[];
  try {
    const status = await provider.status();
    listed = status.models;
    checks.push({ name: 'model server', ok: true, level: 'ok', message: status.summary });
  } catch (error) {
    const err = toSqlrecallError(error);
    checks.push({
      name: 'model server',
      ok: false,
      level: 'fail',
      message: err.message,
      fix:
        typeof err.details.hint === 'string' && /API_KEY/.test(err.details.hint)
          ? 'Set SQLRECALL_API_KEY to the key the server expects.'
          : provider.hints.unreachable,
      code: isSqlrecallError(error) ? err.code : 'model_unreachable',
    });
    return checks;
  }
  let embeddingPresent = false;
  for (const [role, model, setting] of [
    ['chat model', config.model, 'SQLRECALL_MODEL'],
    ['embedding model', config.embedModel, 'SQLRECALL_EMBED_MODEL'],
  ] as const) {
    let present: boolean;
    try {
      present = await provider.hasModel(model);
    } catch (error) {
      const err = toSqlrecallError(error);
      checks.push({ name: role, ok: false, level: 'fail', message: err.message, code: err.code });
      continue;
    }
    if (!present) {
      const missing = provider.hints.missingModel({ role, model, setting, listed });
      checks.push({ name: role, ok: false, level: 'fail', ...missing, code: 'model_missing' });
      continue;
    }
    checks.push({
      name: role,
      ok: true,
      level: 'ok',
      message: `${role} ${model} is ${provider.hints.presentVerb}`,
    });
    if (role === 'chat model')
      checks.push(await checkContextWindow(runtime), await checkStructuredOutput(runtime));
    else embeddingPresent = true;
  }
  if (embeddingPresent) checks.push(...(await checkEmbeddings(runtime)));
  return checks;
}

/**
 * The context window prompts for the chat model are sized for, and where it was read
 * (SQLRECALL_CONTEXT_LENGTH, the server's running window, the model's trained size), so a user can
 * see why; a warning with the setting to use when the server reports none.
 */
export async function checkContextWindow(runtime: Runtime): Promise<Check> {
  const { config } = runtime;
  let window: ContextWindow | undefined;
  try {
    window = await runtime.provider().contextWindow(config.model);
  } catch (error) {
    return {
      name: 'context window',
      ok: true,
      level: 'warn',
      message: `Could not read the context window of ${config.model}: ${toSqlrecallError(error).message}`,
    };
  }
  const budget = resolveContextTokens(config.numCtx, window?.tokens);
  if (!window)
    return {
      name: 'context window',
      ok: true,
      level: 'warn',
      message: `The server reports no context window for ${config.model}; prompts are sized for ${budget} tokens.`,
      fix: 'Set SQLRECALL_CONTEXT_LENGTH to the window the server runs the model with.',
    };
  const sized = budget === window.tokens ? '' : `; prompts are sized for ${budget} tokens`;
  return {
    name: 'context window',
    ok: true,
    level: 'ok',
    message: `context window of ${config.model}: ${window.tokens} tokens (from ${window.source})${sized}`,
  };
}

/**
 * Whether the server holds replies to a JSON schema (memory extraction and teaching ask for one):
 * `ok` when it does, a warning when it does not (sqlrecall then writes the schema into the prompt,
 * which small models follow less reliably) or when that could not be found out.
 */
export async function checkStructuredOutput(runtime: Runtime): Promise<Check> {
  const { config } = runtime;
  let support: StructuredOutputSupport;
  try {
    support = await runtime.provider().structuredOutput(config.model, {
      signal: AbortSignal.timeout(Math.min(config.modelTimeoutMs, PROBE_TIMEOUT_MS)),
    });
  } catch (error) {
    support = { supported: undefined, how: toSqlrecallError(error).message };
  }
  const verdict =
    support.supported === true ? 'supported' : support.supported === false ? 'not supported' : 'unknown';
  return {
    name: 'structured output',
    ok: true,
    level: support.supported === true ? 'ok' : 'warn',
    message: `JSON-schema replies from ${config.model}: ${verdict} (${support.how})`,
  };
}

/** The text `doctor` embeds: a question as users ask them, so the vector is a real one. */
const PROBE_TEXT = 'How many orders were shipped to customers in India last month?';

/**
 * Embeds a probe text and checks the vector: finite, not all zeros, as long as the model's declared
 * size (Ollama's `/api/show`) and as the vectors the memory store already holds. A degenerate
 * vector fails (memory search would find nothing); a store of another dimension fails with the
 * re-embedding fix.
 */
export async function checkEmbeddings(runtime: Runtime): Promise<Check[]> {
  const { config } = runtime;
  const provider = runtime.provider();
  const server = provider.embeddingsUrl;
  const embedder = provider.embeddingModel();
  let declared: number;
  let vector: number[];
  try {
    declared = await embedder.dimensions();
    [vector = []] = await embedder.embed([PROBE_TEXT]);
  } catch (error) {
    const err = toSqlrecallError(error);
    return [
      {
        name: 'embeddings',
        ok: false,
        level: 'fail',
        message: err.message,
        fix: provider.hints.embeddingFix(config.embedModel),
        code: err.code,
      },
    ];
  }
  if (vector.length !== declared) {
    return [
      {
        name: 'embeddings',
        ok: false,
        level: 'fail',
        message: `The embedding model ${config.embedModel} at ${server} declares ${declared} dimensions but returned a ${vector.length}-dimensional vector.`,
        fix: `Check the model behind the name ${config.embedModel} on the server.`,
        code: 'model_output',
      },
    ];
  }
  const checks: Check[] = [
    {
      name: 'embeddings',
      ok: true,
      level: 'ok',
      message: `embedding model ${config.embedModel} returns ${vector.length}-dimensional vectors (checked: finite, not all zero)`,
    },
  ];
  // An embedded store is read only when it exists: doctor creates nothing.
  const storeOptions = (await import('./memory-runtime.js')).memoryStoreOptions(config);
  if (
    !config.memoryEnabled ||
    ('dataDir' in storeOptions && storeOptions.dataDir && !existsSync(storeOptions.dataDir))
  )
    return checks;
  let recorded: { model: string; dimensions: number } | null;
  try {
    const memory = await runtime.memory({ allowWithoutEmbeddings: true, skipInit: true });
    recorded = await memory.store.embeddingInfo();
  } catch (error) {
    checks.push({
      name: 'memory store',
      ok: true,
      level: 'warn',
      message: `Could not read the memory store's embedding size: ${toSqlrecallError(error).message}`,
    });
    return checks;
  }
  if (!recorded) return checks; // a new store takes the size of the first vectors
  if (recorded.dimensions !== vector.length || recorded.model !== config.embedModel) {
    checks.push({
      name: 'memory store',
      ok: false,
      level: 'fail',
      message: `The memory store holds ${recorded.dimensions}-dimensional vectors of ${recorded.model}; ${config.embedModel} makes ${vector.length}-dimensional ones, so memory search cannot compare them.`,
      fix: `sqlrecall memory reembed (re-embeds every memory with ${config.embedModel}), or set SQLRECALL_EMBED_MODEL=${recorded.model}`,
      code: 'memory_embedding_mismatch',
    });
  } else {
    checks.push({
      name: 'memory store',
      ok: true,
      level: 'ok',
      message: `memory store vectors match: ${recorded.dimensions} dimensions of ${recorded.model}`,
    });
  }
  return checks;
}

/** Checks the configured database (a warning when none is configured). */
export async function checkDatabase(runtime: Runtime): Promise<Check> {
  if (!runtime.config.databaseUrl) {
    return {
      name: 'database',
      ok: true,
      level: 'warn',
      message: 'No database is configured.',
      fix: 'Set DATABASE_URL=postgres://user@host:5432/dbname (or pass --db), or try `sqlrecall demo`.',
    };
  }
  try {
    const db = await runtime.database();
    await db.ping();
    return { name: 'database', ok: true, level: 'ok', message: `database ${db.displayName} answers` };
  } catch (error) {
    const err = toSqlrecallError(error);
    return {
      name: 'database',
      ok: false,
      level: 'fail',
      message: err.message,
      fix:
        typeof err.details.hint === 'string'
          ? err.details.hint
          : 'Check DATABASE_URL (host, port, database name, user) and that the server is running.',
      code: err.code,
    };
  }
}

/**
 * The recommended read-only role (docs/safety.md): log in as this role so that even a statement
 * that got past every check could not write. `database` and `schemas` are quoted as identifiers.
 */
export function readOnlyRoleSql(database: string, schemas: string[] = ['public']): string {
  const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`;
  const lines = [
    "CREATE ROLE sqlrecall_reader LOGIN PASSWORD 'choose-a-password';",
    `GRANT CONNECT ON DATABASE ${ident(database)} TO sqlrecall_reader;`,
  ];
  for (const schema of schemas) {
    lines.push(
      `GRANT USAGE ON SCHEMA ${ident(schema)} TO sqlrecall_reader;`,
      `GRANT SELECT ON ALL TABLES IN SCHEMA ${ident(schema)} TO sqlrecall_reader;`,
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${ident(schema)} GRANT SELECT ON TABLES TO sqlrecall_reader;`,
    );
  }
  lines.push('ALTER ROLE sqlrecall_reader SET default_transaction_read_only = on;');
  return lines.join('\n');
}

/**
 * What the connected role may do, in one catalog query: superuser, BYPASSRLS, CREATEROLE/CREATEDB,
 * write privileges (INSERT, UPDATE, DELETE, TRUNCATE via `has_table_privilege`) on user tables,
 * and CREATE on user schemas.
 */
export const ROLE_PRIVILEGES_SQL = `SELECT current_user::text AS role, current_database()::text AS database,
  r.rolsuper AS superuser, r.rolbypassrls AS bypassrls, (r.rolcreaterole OR r.rolcreatedb) AS creates,
  (SELECT count(*)::int4 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p') AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
      AND (has_table_privilege(c.oid, 'INSERT') OR has_table_privilege(c.oid, 'UPDATE')
        OR has_table_privilege(c.oid, 'DELETE') OR has_table_privilege(c.oid, 'TRUNCATE'))) AS writable_tables,
  (SELECT array_agg(n.nspname::text ORDER BY n.nspname) FROM pg_catalog.pg_namespace n
    WHERE n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
      AND has_schema_privilege(n.oid, 'CREATE')) AS create_schemas,
  (SELECT array_agg(n.nspname::text ORDER BY n.nspname) FROM pg_catalog.pg_namespace n
    WHERE n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
      AND has_schema_privilege(n.oid, 'USAGE')) AS usable_schemas
FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`;

/**
 * Warns when the connected role can write (superuser, BYPASSRLS, CREATEROLE/CREATEDB, write
 * privileges on a table, CREATE on a schema), with the read-only role setup as the fix; on
 * MySQL/MariaDB the same from the user's grants. Embedded PGlite has no roles worth checking.
 * Runs through the connector's read-only execution.
 */
export async function checkDatabaseRole(runtime: Runtime): Promise<Check | undefined> {
  const url = runtime.config.databaseUrl;
  if (!url || /^pglite:/i.test(url)) return undefined;
  try {
    const db = await runtime.database();
    if (db.dialect === 'sqlite' || db.dialect === 'duckdb') return await checkFileWritable(url);
    const other = ROLE_CHECKS[db.dialect];
    if (other) return await other(db);
    const result = await db.execute(ROLE_PRIVILEGES_SQL, { maxRows: 1, timeoutMs: 10_000 });
    const [role, database, superuser, bypassrls, creates, writable, createSchemas, usable] =
      result.rows[0] ?? [];
    const powers: string[] = [];
    if (superuser === true) powers.push('it is a superuser');
    if (bypassrls === true) powers.push('it bypasses row-level security');
    if (creates === true) powers.push('it can create roles or databases');
    if (typeof writable === 'number' && writable > 0)
      powers.push(`it can INSERT, UPDATE, DELETE or TRUNCATE ${writable} table${writable === 1 ? '' : 's'}`);
    if (Array.isArray(createSchemas) && createSchemas.length > 0)
      powers.push(`it can create objects in schema ${createSchemas.join(', ')}`);
    if (powers.length === 0)
      return { name: 'database role', ok: true, level: 'ok', message: `role ${String(role)} cannot write` };
    const schemas = Array.isArray(usable) && usable.length > 0 ? usable.map(String) : ['public'];
    // A superuser can read credential catalogs, call any function (dblink, file
    // access) and so reach beyond the read-only transaction: say so loudly.
    const superuserNote =
      superuser === true
        ? ` SUPERUSER CONNECTION: a superuser can read every catalog and reach every database and file on the server, so only sqlrecall's guard and function policy stand in the way.`
        : '';
    return {
      name: 'database role',
      ok: true,
      level: 'warn',
      message: `The role ${String(role)} can write (${powers.join('; ')}).${superuserNote} sqlrecall only reads, but a read-only role is the last line of defence.`,
      fix: `connect as a read-only role, created once by an administrator:\n${readOnlyRoleSql(String(database), schemas)}`,
    };
  } catch (error) {
    const err = toSqlrecallError(error);
    return {
      name: 'database role',
      ok: true,
      level: 'warn',
      message: `Could not check the role's privileges: ${err.message}`,
    };
  }
}

/**
 * A file engine has no role: sqlrecall opens the file read-only, and the last line of defence is a
 * file (or folder of files) this process's user cannot write. Warns when it can, with the fix.
 */
async function checkFileWritable(url: string): Promise<Check> {
  const { parseDatabaseUrl } = await import('../databases/open.js');
  const target = parseDatabaseUrl(url);
  const path =
    target.engine === 'sqlite'
      ? (await import('../databases/sqlite/url.js')).sqlitePathOf(target.url)
      : target.engine === 'duckdb'
        ? target.path
        : undefined;
  if (path === undefined || !existsSync(path))
    return { name: 'database file', ok: true, level: 'ok', message: 'no file to check' };
  let writable = true;
  try {
    accessSync(path, constants.W_OK);
  } catch {
    writable = false;
  }
  if (!writable)
    return { name: 'database file', ok: true, level: 'ok', message: `${path} is read-only for this user` };
  return {
    name: 'database file',
    ok: true,
    level: 'warn',
    message: `${path} is writable by this user. sqlrecall opens it read-only, but a file this user cannot write is the last line of defence.`,
    fix: `let this user only read it, e.g. chmod a-w ${path} (or give the file to another owner with group read)`,
  };
}

/** The user check of each engine that is not PostgreSQL's role check above. */
const ROLE_CHECKS: Partial<Record<DatabaseDialectName, (db: DatabaseConnector) => Promise<Check>>> = {
  mysql: checkMysqlUser,
};

/**
 * Warns when the connected MySQL/MariaDB user can write (any privilege of `SHOW GRANTS` that
 * changes data, schema, routines, files or users, or `WITH GRANT OPTION`), with the statements
 * that create a read-only user (SELECT, SHOW VIEW) as the fix. Runs through the connector's
 * read-only execution.
 * @throws SqlrecallError from the database (the caller turns it into a warning)
 */
async function checkMysqlUser(db: DatabaseConnector): Promise<Check> {
  const run = { maxRows: 1_000, timeoutMs: 10_000 };
  const [user, database] = (await db.execute(MYSQL_IDENTITY_SQL, run)).rows[0] ?? [];
  const grants = writingGrants((await db.execute(MYSQL_GRANTS_SQL, run)).rows.map((row) => String(row[0])));
  if (grants.length === 0)
    return { name: 'database role', ok: true, level: 'ok', message: `user ${String(user)} cannot write` };
  const global = grants.some((g) => g.on === '*.*' && /^(ALL|ALL PRIVILEGES|SUPER)$/.test(g.privilege));
  const note = global
    ? " ADMINISTRATOR CONNECTION: this user can read and change every database on the server, so only sqlrecall's guard stands in the way."
    : '';
  return {
    name: 'database role',
    ok: true,
    level: 'warn',
    message: `The user ${String(user)} can write (${describeGrants(grants)}).${note} sqlrecall only reads, but a read-only user is the last line of defence.`,
    fix: `connect as a read-only user, created once by an administrator:\n${readOnlyUserSql(typeof database === 'string' ? database : undefined)}`,
  };
}

/**
 * The prominent start-up warning of `serve` for a role check that warned
 * (superuser or a role that can write), or undefined when the role is read-only or unchecked.
 * Plain text; the caller colours it.
 */
export function roleWarning(check: Check | undefined): string | undefined {
  if (check?.level !== 'warn' || !/can write|superuser/i.test(check.message)) return undefined;
  return `${check.message} Run \`sqlrecall doctor\` for the statements that create a read-only role.`;
}

/**
 * The policy file (when one is configured): valid, or invalid with its problems; and which entries
 * of it apply to the configured user (`--user`, `--team`), so a user can see why they see what
 * they see. Reads the file now.
 */
export async function checkPolicyFile(runtime: Runtime): Promise<Check | undefined> {
  const source = await runtime.policySource();
  if (!source) return undefined;
  await source.reload().catch(() => {});
  const status = source.status();
  if (status.state !== 'valid') {
    const { problemsText } = await import('../policy/source.js');
    return {
      name: 'policy',
      ok: false,
      level: 'fail',
      message: `The policy file ${status.path} is invalid: ${problemsText(status.problems)}.`,
      fix: 'sqlrecall policy check (every problem, with the closest real names)',
      code: 'config',
    };
  }
  const { user, team } = runtime.config;
  const policy = await runtime.policyFor(user, team !== undefined ? { team } : {});
  const mode = policy.rowsToModel ? '' : '; privacy mode (no result value reaches the model)';
  const [{ dialectOfUrl }, { policyEngineProblem, restrictsData }] = await Promise.all([
    import('../databases/open.js'),
    import('../policy/types.js'),
  ]);
  const engine = runtime.config.databaseUrl
    ? policyEngineProblem(dialectOfUrl(runtime.config.databaseUrl))
    : undefined;
  if (engine && restrictsData(policy))
    return {
      name: 'policy',
      ok: false,
      level: 'fail',
      message: `The policy file ${status.path} restricts what ${user} reads, but ${engine}.`,
      fix: 'point DATABASE_URL at PostgreSQL for users under a data policy, or drop their tables, deny_columns and rows rules',
      code: 'config',
    };
  return {
    name: 'policy',
    ok: true,
    level: 'ok',
    message: `policy file ${status.path}: ${status.users} user(s), ${status.teams} team(s); ${user} gets ${policy.sources.join(', ')}${mode} (sqlrecall policy explain --user ${user})`,
  };
}
