/**
 * `sqlrecall schema context "<question>" [--json]`: the tables and columns the model would see for
 * a question, why each was chosen, and the estimated prompt tokens. Builds or refreshes
 * the schema index first (progress bar on stderr for big databases).
 */

import type { Runtime } from '../../runtime/runtime.js';
import { createSchemaLinking } from '../../runtime/schema-linking.js';
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
    const db = await runtime.database();
    const schema = await db.introspect({ schemas: config.schemas.length ? config.schemas : undefined });
    const warnings: string[] = [];
    const bar = progressBar(io, 'Indexing schema', (done, total) => `${done}/${total} tables`);
    let showed = false;
    // The index lives beside the memories, as for `ask`, so a second run reuses it;
    // without a memory store it is kept in process memory for this run only.
    let memory: Awaited<ReturnType<Runtime['memory']>> | undefined;
    if (config.memoryEnabled) {
      try {
        memory = await runtime.memory();
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        warnings.push(`The schema index is not kept for the next run: ${reason}`);
        io.stderr.write(`${pc.yellow('warning:')} ${warnings.at(-1)}\n`);
      }
    }
    const linking = createSchemaLinking({
      config,
      db,
      admin: runtime.provider(),
      sql: memory ? await memory.store.sql() : undefined,
      ...(memory ? { embedding: memory.canEmbed ? memory.embedder : null } : {}),
      onProgress: (done, total) => {
        if (total < PROGRESS_MIN_TABLES) return;
        showed = true;
        bar.update(done, total);
      },
      onWarning: (message) => {
        warnings.push(message);
        io.stderr.write(`${pc.yellow('warning:')} ${message}\n`);
      },
    });
    const context = await linking.plan(question, schema);
    if (showed) bar.done();
    if (json) {
      printJson(io, {
        question,
        mode: context.mode,
        estimatedTokens: context.estimatedTokens,
        wholeSchemaTokens: context.wholeSchemaTokens,
        budget: context.budget,
        tables: context.choices,
        degradations: context.degradations,
        index: {
          indexed: context.index.indexed.length,
          reembedded: context.index.reembedded.length,
          removed: context.index.removed.length,
          unchanged: context.index.unchanged,
          durationMs: Math.round(context.index.durationMs),
        },
        warnings,
        schemaText: context.schemaText,
      });
    } else {
      for (const choice of context.choices) {
        const hidden = choice.omittedColumns > 0 ? pc.dim(` (+${choice.omittedColumns} hidden)`) : '';
        io.stdout.write(`${pc.bold(choice.table)} ${pc.dim(choice.kind)}${hidden}\n`);
        for (const reason of choice.reasons) io.stdout.write(`  - ${reason}\n`);
      }
      io.stdout.write(
        `\n${context.tables.length} of ${schema.tables.length} tables, ~${context.estimatedTokens} tokens ` +
          `(whole schema ~${context.wholeSchemaTokens}; schema budget ${context.budget.schemaTokens} of num_ctx ${context.budget.contextTokens})\n`,
      );
      if (context.degradations.length > 0)
        io.stdout.write(`degraded to fit: ${context.degradations.join(', ')}\n`);
    }
    return 0;
  });
}
