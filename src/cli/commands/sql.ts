/**
 * `sqlrecall sql "<SQL>"`: one statement through the same guard and read-only execution as `ask`,
 * without a model. `-` reads the statement from stdin; a statement may begin with a `--` or `/*`
 * comment. `--json` streams one JSON document (row by row, never one giant string). Ctrl-C
 * cancels the statement on the server and exits 130 once the cancel is confirmed.
 */
import { MAX_SQL_CHARS, sqlTooLong } from '../../agent/run-sql.js';
import { runSql as runSqlUseCase, sqlDocument, sqlFailureDocument, sqlRuntimeOf } from '../../app/run-sql.js';
import type { AuditLog } from '../../audit/log.js';
import type { Config } from '../../config/config.js';
import { toSqlrecallError } from '../../core/errors.js';
import { emptySql } from '../../core/refusal.js';
import { auditLogFor, Runtime } from '../../runtime/runtime.js';
import { configFrom } from '../config-from.js';
import { EXIT_INTERRUPTED, onInterrupt } from '../interrupt.js';
import type { CliIO } from '../io.js';
import { printError, printJson, printResult, writeJsonStreaming } from '../output.js';
import type { GlobalOptions } from '../program.js';

/**
 * Reads the statement from stdin, at most {@link MAX_SQL_CHARS} characters: reading stops as soon
 * as the input cannot fit (4 bytes per character at most in UTF-8), so a huge input is never held.
 * @throws SqlrecallError `usage` when it is longer
 */
async function readStdin(io: CliIO): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of io.stdin) {
    const buffer = Buffer.from(chunk as Buffer);
    bytes += buffer.length;
    if (bytes > MAX_SQL_CHARS * 4) throw sqlTooLong('on standard input ');
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.length > MAX_SQL_CHARS) throw sqlTooLong('on standard input ');
  return text;
}

/** Runs `sql`. */
export async function runSql(io: CliIO, opts: GlobalOptions, given: string): Promise<number> {
  const json = Boolean(opts.json);
  let runtime: Runtime | undefined;
  let audit: AuditLog | undefined;
  let config: Config | undefined;
  let sql = given;
  const interrupt = onInterrupt(io);
  try {
    config = configFrom(io, opts, { demoDefault: true });
    if (sql.trim() === '-') sql = await readStdin(io);
    if (sql.trim() === '') throw emptySql();
    // The database opens only for a statement the guard accepts (or to resolve an allowlist).
    const settings = config;
    // Recorded in the audit journal even when no database opens (a refused statement).
    audit = auditLogFor(settings);
    const run = await runSqlUseCase(
      {
        sql,
        signal: interrupt.signal,
        user: settings.user,
        ...(settings.team !== undefined ? { team: settings.team } : {}),
        onStatement: audit.listener({ user: settings.user, frontEnd: 'cli' }),
      },
      sqlRuntimeOf({
        config: settings,
        database: () => {
          runtime ??= new Runtime(settings);
          return runtime.database();
        },
        databaseFor: (user, options) => {
          runtime ??= new Runtime(settings);
          return runtime.databaseFor(user, options);
        },
      }),
    );
    if (json) await writeJsonStreaming(io, sqlDocument(run));
    else printResult(io, run.result, config.maxRows, config.maxResultBytes, { sql: run.sql });
    return 0;
  } catch (error) {
    const err = toSqlrecallError(error);
    printError(io, err);
    if (json) printJson(io, sqlFailureDocument(sql, err));
    return interrupt.interrupted ? EXIT_INTERRUPTED : err.exitCode;
  } finally {
    interrupt.dispose();
    await runtime?.close();
    await audit?.close();
    // With SQLRECALL_KEEP_WARM, the embedded database this run started stays open in the background.
    if (runtime && config && config.keepWarmSeconds > 0)
      (await import('../keep-warm.js')).startKeepWarmHolder(io, config);
  }
}
