/**
 * `sqlrecall doctor`: checks the model server, the models and the database, and prints the exact
 * command that fixes each problem. Exit code: 0 when nothing failed, else the first failure's code.
 */

import { ERROR_TABLE, toSqlrecallError } from '../../core/errors.js';
import {
  type Check,
  checkDatabase,
  checkDatabaseRole,
  checkModels,
  checkPolicyFile,
} from '../../runtime/doctor.js';
import { pc } from '../colors.js';
import type { CliIO } from '../io.js';
import { printJson } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { reportError } from '../report.js';
import { withRuntime } from '../with-runtime.js';

/** Runs `doctor`. */
export async function runDoctor(io: CliIO, opts: GlobalOptions): Promise<number> {
  const json = Boolean(opts.json);
  return withRuntime(
    io,
    opts,
    async (runtime, _config) => {
      const database = await checkDatabase(runtime);
      const checks: Check[] = [...(await checkModels(runtime)), database];
      if (database.level === 'ok') {
        const role = await checkDatabaseRole(runtime);
        if (role) checks.push(role);
      }
      const policy = await checkPolicyFile(runtime);
      if (policy) checks.push(policy);
      const failed = checks.find((c) => c.level === 'fail');
      const code = failed ? ERROR_TABLE[failed.code ?? 'internal'].exitCode : 0;
      if (json) {
        printJson(io, { ok: !failed, checks });
      } else {
        for (const check of checks) {
          const mark =
            check.level === 'ok'
              ? pc.green('ok  ')
              : check.level === 'warn'
                ? pc.yellow('warn')
                : pc.red('FAIL');
          io.stdout.write(`${mark} ${check.message}\n`);
          if (check.fix && check.level !== 'ok')
            io.stdout.write(`     fix: ${check.fix.replaceAll('\n', '\n          ')}\n`);
        }
      }
      return code;
    },
    { onError: (error) => reportError(io, json, toSqlrecallError(error)) },
  );
}
