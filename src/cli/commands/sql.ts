/**
 * `sqlrecall sql "<SQL>"`: one statement through the same guard and read-only execution as `ask`,
 * without a model. `-` reads the statement from stdin; a statement may begin with a `--` or `/*`
 * comment. `--json` streams one JSON document (row by row, never one giant string). Ctrl-C
 * cancels the statement on the server and exits 130 once the cancel is confirmed.
 */
import { MAX_SQL_CHARS, withNameHint } from '../../agent/run-sql.js';
import type { Config } from '../../config/config.js';
import { SqlrecallError, toSqlrecallError } from '../../core/errors.js';
import type { QueryResult } from '../../core/ports.js';
import type { Schema } from '../../core/schema.js';
import { Runtime } from '../../runtime/runtime.js';
import { guardSql } from '../../sql/guard.js';
import { configFrom } from '../config-from.js';
import { EXIT_INTERRUPTED, onInterrupt } from '../interrupt.js';
import type { CliIO } from '../io.js';
import { errorJson, printError, printJson, printResult, writeJsonStreaming } from '../output.js';
import type { GlobalOptions } from '../program.js';

/** The usage error of a statement over {@link MAX_SQL_CHARS}, the limit of `POST /api/sql` too. */
function tooLong(where: string): SqlrecallError {
  return new SqlrecallError(
    'usage',
    `The SQL ${where}is longer than ${MAX_SQL_CHARS.toLocaleString('en')} characters, the limit of one statement.`,
    { details: { hint: 'Run one statement at a time; put long value lists in a table and join it.' } },
  );
}

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
    if (bytes > MAX_SQL_CHARS * 4) throw tooLong('on standard input ');
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.length > MAX_SQL_CHARS) throw tooLong('on standard input ');
  return text;
}

/** The user-facing refusal: `Refused: pg_sleep can stall the database`. */
export function refusal(reason: string, rule: string): SqlrecallError {
  return new SqlrecallError('guard_refused', `Refused: ${reason.replace(/^refused: /, '')}`, {
    details: { rule },
  });
}

/** The `sql --json` document (docs/operations.md, "How values reach you"). */
export function sqlJson(sql: string, result: QueryResult): Record<string, unknown> {
  return {
    sql,
    columns: result.columns.map((c) => c.name),
    columnTypes: result.columns.map((c) => c.type),
    rows: result.rows,
    rowCount: result.rowCount,
    truncated: result.truncated,
    ...(result.truncatedReason !== undefined ? { truncatedReason: result.truncatedReason } : {}),
  };
}

/** Runs `sql`. */
export async function runSql(io: CliIO, opts: GlobalOptions, given: string): Promise<number> {
  const json = Boolean(opts.json);
  let runtime: Runtime | undefined;
  let config: Config | undefined;
  let sql = given;
  const interrupt = onInterrupt(io);
  try {
    config = configFrom(io, opts, { demoDefault: true });
    if (sql.trim() === '-') sql = await readStdin(io);
    else if (sql.length > MAX_SQL_CHARS) throw tooLong('');
    if (sql.trim() === '')
      throw new SqlrecallError('usage', 'There is no SQL to run.', {
        details: {
          hint: 'Give one statement, e.g. sqlrecall sql "SELECT count(*) FROM orders", or - to read it from stdin.',
        },
      });
    const allowTables = config.allowTables;
    // The allowlist resolves unqualified names through the search path: it needs the catalog.
    let schema: Schema | undefined;
    let verdict = await guardSql(sql);
    if (verdict.ok && allowTables.length > 0) {
      runtime = new Runtime(config);
      const catalog = await runtime.database();
      schema = await catalog.introspect({ schemas: config.schemas.length ? config.schemas : undefined });
      verdict = await guardSql(sql, { allowTables, schema });
    }
    if (!verdict.ok) throw refusal(verdict.reason, verdict.rule);
    runtime ??= new Runtime(config);
    const db = await runtime.database();
    const schemas = config.schemas;
    const result = await db
      .execute(verdict.sql, {
        maxRows: config.maxRows,
        timeoutMs: config.statementTimeoutMs,
        maxBytes: config.maxResultBytes,
        signal: interrupt.signal,
      })
      .catch(async (error: unknown) => {
        throw await withNameHint(
          error,
          verdict.sql,
          async () => schema ?? db.introspect({ schemas: schemas.length ? schemas : undefined }),
        );
      });
    if (json) await writeJsonStreaming(io, sqlJson(verdict.sql, result));
    else printResult(io, result, config.maxRows, config.maxResultBytes, { sql: verdict.sql });
    return 0;
  } catch (error) {
    const err = toSqlrecallError(error);
    printError(io, err);
    if (json) printJson(io, { sql, error: errorJson(err) });
    return interrupt.interrupted ? EXIT_INTERRUPTED : err.exitCode;
  } finally {
    interrupt.dispose();
    await runtime?.close();
    // With SQLRECALL_KEEP_WARM, the embedded database this run started stays open in the background.
    if (runtime && config && config.keepWarmSeconds > 0)
      (await import('../keep-warm.js')).startKeepWarmHolder(io, config);
  }
}
