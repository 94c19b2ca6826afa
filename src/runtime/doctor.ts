/**
 * Health checks shared by `sqlrecall doctor`, `demo` and (later) `GET /api/health`: each check says
 * what is wrong in one sentence and the exact command that fixes it.
 */

import { existsSync } from 'node:fs';
import { type ErrorCode, isSqlrecallError, toSqlrecallError } from '../core/errors.js';
import { maskUrl } from '../core/redact.js';
import { createOpenAiClient, listOpenAiModels } from '../models/openai/client.js';
import { assumedContextWindow, contextLengthSourceFor, createEmbeddingModelFor } from './models.js';
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

/** What to install when no Ollama server answers. */
export function ollamaInstallHint(host: string, model: string): string {
  return [
    'Install Ollama from https://ollama.com/download (Linux: curl -fsSL https://ollama.com/install.sh | sh),',
    `start it with \`ollama serve\`, pull the model with \`ollama pull ${model}\`,`,
    `or point OLLAMA_HOST at a running server (now ${maskUrl(host)}).`,
  ].join(' ');
}

/** What to do when no OpenAI-compatible server answers at `baseUrl`. */
export function openAiServerHint(baseUrl: string): string {
  return [
    `Start your OpenAI-compatible model server (e.g. \`llama-server -m model.gguf --port 8080\`, LM Studio's server, \`vllm serve\`, LocalAI, Jan, or Ollama's /v1),`,
    `or set SQLRECALL_BASE_URL (or --base-url) to its address including /v1 (now ${maskUrl(baseUrl)});`,
    'set SQLRECALL_API_KEY if it wants a key.',
  ].join(' ');
}

/** True when `/v1/models` lists `model` (exactly, or as Ollama's `name:latest`). */
function listsModel(ids: string[], model: string): boolean {
  return ids.includes(model) || (!model.includes(':') && ids.includes(`${model}:latest`));
}

/**
 * Checks an OpenAI-compatible server (`provider: 'openai'`): reachable, the chat and embedding
 * models listed by `/v1/models`, and the embedding model's vectors ({@link checkEmbeddings}).
 */
export async function checkOpenAiModels(runtime: Runtime): Promise<Check[]> {
  const { config } = runtime;
  const url = maskUrl(config.baseUrl);
  const checks: Check[] = [];
  let ids: string[];
  try {
    const client = createOpenAiClient({ baseUrl: config.baseUrl, apiKey: config.apiKey });
    ids = (await listOpenAiModels(client, config.baseUrl)).map((m) => m.id);
  } catch (error) {
    const err = toSqlrecallError(error);
    checks.push({
      name: 'model server',
      ok: false,
      level: 'fail',
      message: err.message,
      fix:
        err.code === 'model_unreachable' &&
        typeof err.details.hint === 'string' &&
        /API_KEY/.test(err.details.hint)
          ? 'Set SQLRECALL_API_KEY to the key the server expects.'
          : openAiServerHint(config.baseUrl),
      code: isSqlrecallError(error) ? err.code : 'model_unreachable',
    });
    return checks;
  }
  checks.push({
    name: 'model server',
    ok: true,
    level: 'ok',
    message: `OpenAI-compatible server at ${url} lists ${ids.length} model(s)`,
  });
  for (const [role, model, setting] of [
    ['chat model', config.model, 'SQLRECALL_MODEL'],
    ['embedding model', config.embedModel, 'SQLRECALL_EMBED_MODEL'],
  ] as const) {
    if (listsModel(ids, model)) {
      checks.push({
        name: role,
        ok: true,
        level: 'ok',
        message: `${role} ${model} is served${role === 'chat model' ? await contextNote(runtime) : ''}`,
      });
      continue;
    }
    checks.push({
      name: role,
      ok: false,
      level: 'fail',
      message: `The ${role} ${model} is not listed by ${url}/models (it lists: ${ids.slice(0, 10).join(', ') || 'nothing'}).`,
      fix: `Load ${model} in the server, or set ${setting} to one of the listed names.`,
      code: 'model_missing',
    });
  }
  if (listsModel(ids, config.embedModel)) checks.push(...(await checkEmbeddings(runtime)));
  return checks;
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
  const server =
    config.provider === 'openai' ? `${maskUrl(config.baseUrl)}/embeddings` : maskUrl(config.ollamaHost);
  const embedder = createEmbeddingModelFor(config);
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
        fix:
          config.provider === 'openai'
            ? `Make sure ${config.embedModel} is an embedding model the server serves at ${server} (llama-server needs --embeddings).`
            : `Make sure ${config.embedModel} is an embedding model (\`ollama show ${config.embedModel}\`), or set SQLRECALL_EMBED_MODEL to one (e.g. all-minilm).`,
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

/**
 * What sqlrecall sizes prompts for: `; context window N tokens (from …)`, so a user can see why
 * (and set SQLRECALL_CONTEXT_LENGTH when the server runs with another window). '' when unknown.
 */
async function contextNote(runtime: Runtime): Promise<string> {
  const { config } = runtime;
  try {
    await contextLengthSourceFor(config).contextLength(config.model);
  } catch {
    return '';
  }
  const window = assumedContextWindow(config, config.model);
  return window
    ? `; context window ${window.tokens} tokens (from ${window.source})`
    : '; the server reports no context window (set SQLRECALL_CONTEXT_LENGTH to its size)';
}

/** Checks the model server and the configured models. */
export async function checkModels(runtime: Runtime): Promise<Check[]> {
  const { config } = runtime;
  if (config.provider === 'openai') return checkOpenAiModels(runtime);
  const admin = runtime.admin();
  const checks: Check[] = [];
  let version: string;
  try {
    version = await admin.version();
  } catch (error) {
    const err = toSqlrecallError(error);
    checks.push({
      name: 'ollama',
      ok: false,
      level: 'fail',
      message: err.message,
      fix: ollamaInstallHint(config.ollamaHost, config.model),
      code: isSqlrecallError(error) ? err.code : 'model_unreachable',
    });
    return checks;
  }
  checks.push({
    name: 'ollama',
    ok: true,
    level: 'ok',
    message: `Ollama ${version} at ${maskUrl(config.ollamaHost)}`,
  });
  for (const [role, model] of [
    ['chat model', config.model],
    ['embedding model', config.embedModel],
  ] as const) {
    try {
      const present = await admin.hasModel(model);
      checks.push(
        present
          ? {
              name: role,
              ok: true,
              level: 'ok',
              message: `${role} ${model} is pulled${role === 'chat model' ? await contextNote(runtime) : ''}`,
            }
          : {
              name: role,
              ok: false,
              level: 'fail',
              message: `The ${role} ${model} is not pulled on this Ollama server.`,
              fix: `ollama pull ${model}`,
              code: 'model_missing',
            },
      );
    } catch (error) {
      const err = toSqlrecallError(error);
      checks.push({ name: role, ok: false, level: 'fail', message: err.message, code: err.code });
    }
  }
  if (checks.at(-1)?.ok) checks.push(...(await checkEmbeddings(runtime)));
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
 * privileges on a table, CREATE on a schema), with the read-only role setup as the fix. Embedded
 * PGlite has no roles worth checking. Runs through the connector's read-only execution.
 */
export async function checkDatabaseRole(runtime: Runtime): Promise<Check | undefined> {
  const url = runtime.config.databaseUrl;
  if (!url || /^pglite:/i.test(url)) return undefined;
  try {
    const db = await runtime.database();
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
 * The prominent start-up warning of `serve` for a role check that warned
 * (superuser or a role that can write), or undefined when the role is read-only or unchecked.
 * Plain text; the caller colours it.
 */
export function roleWarning(check: Check | undefined): string | undefined {
  if (check?.level !== 'warn' || !/can write|superuser/i.test(check.message)) return undefined;
  return `${check.message} Run \`sqlrecall doctor\` for the statements that create a read-only role.`;
}
