/**
 * {@link ServerDeps} from a {@link Runtime}: the production wiring of `sqlrecall serve`. The memory
 * store is opened on the caller's SQL client, which also holds the users and tokens tables.
 */
import type { Assistant } from '../agent/assistant.js';
import { memoryStoreInfo } from '../app/memory.js';
import { explainPolicy } from '../app/policy.js';
import { sqlLimitsOf } from '../app/run-sql.js';
import { userNameKey } from '../app/user-names.js';
import { AuditStore } from '../audit/store.js';
import { maskUrl } from '../core/redact.js';
import type { SqlClient } from '../memory/store/index.js';
import type { Runtime } from '../runtime/runtime.js';
import type { AccessLogEntry, AuthMode, ComponentHealth, PolicyStatusReport, ServerDeps } from './deps.js';

/** Resolves within `ms` or reports that the component did not answer in time. */
async function probe(ms: number, check: () => Promise<unknown>): Promise<ComponentHealth> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
    return { ok: true };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, message: message.replace(/\.?$/, '.') };
  } finally {
    clearTimeout(timer);
  }
}

/** Options of {@link depsFromRuntime}. */
export interface RuntimeDepsOptions {
  auth: AuthMode;
  /** The client the memory store (and the users tables) use. */
  client: SqlClient;
  log?: (entry: AccessLogEntry) => void;
  webRoot?: string;
  allowedHosts?: string[];
}

/** Server dependencies over a runtime. */
export function depsFromRuntime(runtime: Runtime, options: RuntimeDepsOptions): ServerDeps {
  const config = runtime.config;
  // The model server down at start does not keep the store closed: what is taught is queued
  // (202) and applied once a later request finds the model server back.
  const memory = () => runtime.memory({ client: options.client, queueWhenDown: true });
  // The memory store must be opened on our client before the runtime opens it on its own.
  const memoryFirst = () =>
    config.memoryEnabled
      ? memory().then(
          () => undefined,
          () => undefined,
        )
      : Promise.resolve();
  let assistant: Promise<Assistant> | undefined;
  // The audit table sits beside the users: opened (pruned, earlier journals taken over) at start.
  void runtime.attachAudit(options.client);
  const deps: ServerDeps = {
    auth: options.auth,
    log: options.log,
    webRoot: options.webRoot,
    allowedHosts: options.allowedHosts,
    maxRequestsPerUser: config.maxRequestsPerUser,
    policyFor: (principal) =>
      runtime.policyFor(principal.user, principal.team !== undefined ? { team: principal.team } : {}),
    policyStatus: (user) => policyStatusReport(runtime, options.auth, user),
    memory,
    audit: {
      listener: (context) => runtime.auditListener(context),
      async list(query) {
        await runtime.attachAudit(options.client);
        await runtime.audit().flush();
        return new AuditStore(options.client).list(query);
      },
      status: () => runtime.audit().status(),
    },
    assistant() {
      if (!assistant) {
        const opening = memoryFirst().then(() => runtime.assistant());
        assistant = opening;
        opening.catch(() => {
          if (assistant === opening) assistant = undefined;
        });
      }
      return assistant;
    },
    sql: {
      database: () => runtime.database(),
      databaseFor: (user, options) => runtime.databaseFor(user, options),
      // The question pipeline's catalog (read once, renewed by a schema refresh): edited SQL and
      // questions see the same tables.
      catalog: () => deps.schema.catalog(),
      limits: sqlLimitsOf(config),
    },
    schema: {
      async catalog(options?: { refresh?: boolean }) {
        const pipeline = await deps.assistant();
        return (await (options?.refresh ? pipeline.refreshSchema() : pipeline.schema())).schema;
      },
      schemaLinking: async (hooks) => {
        await memoryFirst();
        return runtime.schemaLinking(hooks);
      },
    },
    async health() {
      const [model, database, mem] = await Promise.all([
        probe(3000, async () => {
          if (!(await runtime.provider().hasModel(config.model)))
            throw new Error(`The chat model ${config.model} is not ${runtime.provider().hints.presentVerb}`);
        }),
        probe(5000, async () => {
          const db = await runtime.database();
          await db.execute('SELECT 1', { maxRows: 1, timeoutMs: 3000 });
        }),
        probe(5000, async () => memoryStoreInfo(await memory())),
      ]);
      const policy = await policyHealth(runtime);
      // A file that was valid once keeps its last version in force: the service still answers
      // within the policy, so only a file never valid (every statement refused) makes it not ok.
      return {
        ok: model.ok && database.ok && mem.ok && (policy?.ok !== false || policy.kept === true),
        model,
        database,
        memory: mem,
        ...(policy
          ? { policy: { ok: policy.ok, ...(policy.message ? { message: policy.message } : {}) } }
          : {}),
      };
    },
    settings() {
      return {
        model: config.model,
        embedModel: config.embedModel,
        provider: runtime.provider().kind,
        providerUrl: maskUrl(runtime.provider().url),
        database: config.databaseUrl ? maskUrl(config.databaseUrl) : null,
        memoryStore: options.client.displayName,
        maxRows: config.maxRows,
        memoryEnabled: config.memoryEnabled,
      };
    },
  };
  return deps;
}

/**
 * The policy file's health: no details of the problems (this route needs no sign-in), only
 * whether the file in force is the one on disk. `kept`: a last valid version is in force.
 */
export async function policyHealth(
  runtime: Runtime,
): Promise<(ComponentHealth & { kept?: boolean }) | undefined> {
  const source = await runtime.policySource();
  if (!source) return undefined;
  const status = source.status();
  switch (status.state) {
    case 'valid':
    case 'unloaded':
      return { ok: true };
    case 'invalid-kept':
      return {
        ok: false,
        kept: true,
        message: `The policy file is invalid since ${status.failedAt}; the version loaded at ${status.loadedAt} stays in force. Run \`sqlrecall policy check\`.`,
      };
    default:
      return {
        ok: false,
        message: 'The policy file is invalid, so every statement is refused. Run `sqlrecall policy check`.',
      };
  }
}

/**
 * `GET /api/policy`: the status of the runtime's policy file and, for `user`, their effective
 * policy under the version in force (their registered team applies when the file has no entry for
 * them). Null while no version is in force (the file never valid: every statement is refused).
 * @throws the user directory's error when it cannot be read
 */
export async function policyStatusReport(
  runtime: Runtime,
  auth: AuthMode,
  user?: string,
): Promise<PolicyStatusReport> {
  const source = await runtime.policySource();
  // Read first (a watched file is current already; an unwatched one is compared with the disk), so
  // the status is the file's now, never merely "not read yet". An invalid file is in the status.
  await source?.current().catch(() => undefined);
  const status = source?.status();
  const report: PolicyStatusReport = status
    ? {
        file: status.path,
        state: status.state,
        valid: status.state === 'valid',
        loadedAt: status.loadedAt ?? null,
        failedAt: status.failedAt ?? null,
        problems: status.problems.map((p) => ({ path: p.path, message: p.message })),
        users: status.users ?? null,
        teams: status.teams ?? null,
      }
    : {
        file: null,
        state: 'none',
        valid: true,
        loadedAt: null,
        failedAt: null,
        problems: [],
        users: null,
        teams: null,
      };
  if (user === undefined) return report;
  let team: string | undefined;
  if (auth.mode === 'users') {
    const key = userNameKey(user);
    team = (await auth.users.list()).find((u) => userNameKey(u.user) === key)?.team;
  } else if (userNameKey(user) === userNameKey(auth.user)) team = auth.team;
  try {
    const policy = await runtime.policyFor(user, team !== undefined ? { team } : {});
    report.effective = explainPolicy(report.file, policy);
  } catch {
    // No version in force: the status above says why.
    report.effective = null;
  }
  return report;
}
