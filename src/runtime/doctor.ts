/**
 * Health checks shared by `sqlrecall doctor`, `demo` and (later) `GET /api/health`: each check says
 * what is wrong in one sentence and the exact command that fixes it.
 */
import { type ErrorCode, isSqlrecallError, toSqlrecallError } from '../core/errors.js';
import { maskUrl } from '../core/redact.js';
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

/** Checks the model server and the configured models. */
export async function checkModels(runtime: Runtime): Promise<Check[]> {
  const { config } = runtime;
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
          ? { name: role, ok: true, level: 'ok', message: `${role} ${model} is pulled` }
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
