/**
 * `sqlrecall policy check [FILE] | explain [TABLE] | export --postgres`: the data policy file —
 * is it valid and does everything it names exist (exit 2 when not), what one user (`--user`) may
 * read and why, and the same rules as PostgreSQL row-level security and column grants.
 */
import { resolve } from 'node:path';
import {
  checkConfiguredPolicy,
  explainConfiguredPolicy,
  explanationText,
  exportConfiguredPolicy,
} from '../../app/policy.js';
import { SqlrecallError } from '../../core/errors.js';
import { pc } from '../colors.js';
import type { CliIO } from '../io.js';
import { printJson } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { withRuntime } from '../with-runtime.js';

/** Subcommands of `policy`. */
export const POLICY_SUBCOMMANDS = ['check', 'explain', 'export'] as const;

/** Runs `policy <subcommand> [arg]`. */
export async function runPolicy(
  io: CliIO,
  opts: GlobalOptions & { postgres?: boolean },
  subcommand: string,
  arg: string | undefined,
): Promise<number> {
  const json = Boolean(opts.json);
  return withRuntime(io, opts, async (runtime, config) => {
    switch (subcommand) {
      case 'check': {
        const doc = await checkConfiguredPolicy(
          runtime,
          arg === undefined ? undefined : resolve(io.cwd, arg),
        );
        if (json) printJson(io, doc);
        else {
          for (const p of doc.problems) io.stdout.write(`${pc.red('FAIL')} ${p.path}: ${p.message}\n`);
          for (const w of doc.warnings) io.stdout.write(`${pc.yellow('warn')} ${w.path}: ${w.message}\n`);
          io.stdout.write(
            doc.ok
              ? `${pc.green('ok  ')} policy file ${doc.file}: ${doc.users} user(s), ${doc.teams} team(s)\n`
              : `${doc.problems.length} problem(s) in ${doc.file}\n`,
          );
        }
        return doc.ok ? 0 : 2;
      }
      case 'explain': {
        const doc = await explainConfiguredPolicy(runtime, config.user, {
          ...(config.team !== undefined ? { team: config.team } : {}),
          ...(arg !== undefined ? { table: arg } : {}),
        });
        if (json) printJson(io, doc);
        else io.stdout.write(`${explanationText(doc)}\n`);
        return 0;
      }
      case 'export': {
        if (!opts.postgres)
          throw new SqlrecallError('usage', 'Say the target: sqlrecall policy export --postgres.');
        io.stdout.write(await exportConfiguredPolicy(runtime));
        return 0;
      }
      default:
        throw new SqlrecallError(
          'usage',
          `Unknown policy command "${subcommand}"; use one of ${POLICY_SUBCOMMANDS.join(', ')}.`,
        );
    }
  });
}
