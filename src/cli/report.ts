/**
 * The CLI's error path: one message the user can act on (and a JSON error document with
 * `--json`), and the exit code of the error. Its own module so that `program.ts` loads the output
 * helpers only when something failed (to keep process start short).
 */
import { isSqlrecallError, toSqlrecallError } from '../core/errors.js';
import type { CliIO } from './io.js';
import { errorJson, printError, printJson } from './output.js';

/** Prints an error the user can act on and returns its exit code. */
export function reportError(
  io: CliIO,
  json: boolean,
  error: unknown,
  extra: Record<string, unknown> = {},
): number {
  const err = toSqlrecallError(error);
  if (!isSqlrecallError(error) && io.env.SQLRECALL_DEBUG)
    io.stderr.write(`${(error as Error)?.stack ?? error}\n`);
  printError(io, err);
  if (json) printJson(io, { ...extra, error: errorJson(err) });
  return err.exitCode;
}
