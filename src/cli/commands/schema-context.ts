/**
 * `sqlrecall schema context "<question>" [--json]`: the tables and columns the model would see for
 * a question, why each was chosen, and the estimated prompt tokens (the `schemaContext` use case).
 * Builds or refreshes the schema index first (progress bar on stderr for big databases).
 */

import { schemaContext } from '../../app/schema-context.js';
import { pc } from '../colors.js';
import type { CliIO } from '../io.js';
import { printJson } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { progressBar } from '../progress.js';
import { withRuntime } from '../with-runtime.js';

/** Index builds with more tables than this show a progress bar. */
const PROGRESS_MIN_TABLES = 50;

/** Runs `schema context`. */
export async function runSchemaContext(io: CliIO, opts: GlobalOptions, question: string): Promise<number> {
  const json = Boolean(opts.json);
  return withRuntime(io, opts, async (runtime, config) => {
    const policy = await runtime.policyFor(
      config.user,
      config.team !== undefined ? { team: config.team } : {},
    );
    const bar = progressBar(io, 'Indexing schema', (done, total) => `${done}/${total} tables`);
    let showed = false;
    const doc = await schemaContext(
      runtime,
      question,
      {
        onProgress: (done, total) => {
          if (total < PROGRESS_MIN_TABLES) return;
          showed = true;
          bar.update(done, total);
        },
        onWarning: (message) => io.stderr.write(`${pc.yellow('warning:')} ${message}\n`),
      },
      { policy },
    );
    if (showed) bar.done();
    if (json) {
      printJson(io, doc);
      return 0;
    }
    for (const choice of doc.tables) {
      const hidden = choice.omittedColumns > 0 ? pc.dim(` (+${choice.omittedColumns} hidden)`) : '';
      io.stdout.write(`${pc.bold(choice.table)} ${pc.dim(choice.kind)}${hidden}\n`);
      for (const reason of choice.reasons) io.stdout.write(`  - ${reason}\n`);
    }
    io.stdout.write(
      `\n${doc.tables.length} of ${doc.catalogTables} tables, ~${doc.estimatedTokens} tokens ` +
        `(whole schema ~${doc.wholeSchemaTokens}; schema budget ${doc.budget.schemaTokens} of num_ctx ${doc.budget.contextTokens})\n`,
    );
    if (doc.degradations.length > 0) io.stdout.write(`degraded to fit: ${doc.degradations.join(', ')}\n`);
    return 0;
  });
}
