/**
 * `sqlrecall sql "<SQL>"`: one statement through the same guard and read-only execution as `ask`,
 * without a model. `-` reads the statement from stdin.
 */
import { SqlrecallError, toSqlrecallError } from '../../core/errors.js';
import { Runtime } from '../../runtime/runtime.js';
import { guardSql } from '../../sql/guard.js';
import type { CliIO } from '../io.js';
import { errorJson, printError, printJson, printResult } from '../output.js';
import { configFrom, type GlobalOptions } from '../program.js';

async function readStdin(io: CliIO): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs `sql`. */
export async function runSql(io: CliIO, opts: GlobalOptions, given: string): Promise<number> {
  const json = Boolean(opts.json);
  let runtime: Runtime | undefined;
  let sql = given;
  try {
    const config = configFrom(io, opts);
    if (sql.trim() === '-') sql = await readStdin(io);
    const verdict = await guardSql(sql);
    if (!verdict.ok) {
      throw new SqlrecallError('guard_refused', `Refused: ${verdict.reason}`, {
        details: { rule: verdict.rule },
      });
    }
    runtime = new Runtime(config);
    const db = await runtime.database();
    const result = await db.execute(verdict.sql, {
      maxRows: config.maxRows,
      timeoutMs: config.statementTimeoutMs,
    });
    if (json) {
      printJson(io, {
        sql: verdict.sql,
        columns: result.columns.map((c) => c.name),
        rows: result.rows,
        rowCount: result.rowCount,
        truncated: result.truncated,
      });
    } else {
      printResult(io, result, config.maxRows);
    }
    return 0;
  } catch (error) {
    const err = toSqlrecallError(error);
    printError(io, err);
    if (json) printJson(io, { sql, error: errorJson(err) });
    return err.exitCode;
  } finally {
    await runtime?.close();
  }
}
