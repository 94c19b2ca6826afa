/**
 * `sqlrecall demo`: the newcomer's first run. Checks the model server (exit 5 with install steps when
 * none answers), offers to pull a missing chat or embedding model (Ollama; other servers are told
 * which model to load), creates the embedded demo shop on first run, then
 * opens `chat` on it.
 */
import { createInterface } from 'node:readline/promises';
import { SqlrecallError, toSqlrecallError } from '../../core/errors.js';
import { createDemoDatabase } from '../../demo/load.js';
import { demoDatabaseDir, Runtime } from '../../runtime/runtime.js';
import { pc } from '../colors.js';
import { configFrom } from '../config-from.js';
import type { CliIO } from '../io.js';
import type { GlobalOptions } from '../program.js';
import { formatBytes, progressBar } from '../progress.js';
import { reportError } from '../report.js';
import { runChat } from './chat.js';

/** Asks a yes/no question on the terminal; Enter means yes. */
async function confirm(io: CliIO, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: io.interactive });
  try {
    const answer = (await rl.question(`${question} [Y/n] `)).trim().toLowerCase();
    return answer === '' || answer === 'y' || answer === 'yes';
  } finally {
    rl.close();
  }
}

/**
 * Makes sure a model is on the model server, pulling it with a progress bar if the backend can and
 * the user allows; a backend that cannot pull (an OpenAI-compatible server) gets the how-to.
 */
async function ensureModel(
  io: CliIO,
  runtime: Runtime,
  model: string,
  setting: string,
  yes: boolean,
): Promise<void> {
  const provider = runtime.provider();
  if (await provider.hasModel(model)) return;
  if (!provider.pull) {
    const listed = (await provider.status()).models;
    const missing = provider.hints.missingModel({ role: 'model', model, setting, listed });
    throw new SqlrecallError('model_missing', missing.message, { details: { hint: missing.fix } });
  }
  const allowed =
    yes || (io.interactive && (await confirm(io, `The model ${model} is not pulled yet. Pull it now?`)));
  if (!allowed) {
    throw new SqlrecallError('model_missing', `The model ${model} is not pulled on the Ollama server.`, {
      details: { hint: `Run \`ollama pull ${model}\`, or rerun \`sqlrecall demo --yes\` to pull it now.` },
    });
  }
  const bar = progressBar(io, `pulling ${model}`, (d, t) => `${formatBytes(d)} / ${formatBytes(t)}`);
  await provider.pull(model, (p) => {
    if (p.total && p.completed !== undefined) bar.update(p.completed, p.total);
  });
  bar.done(`pulled ${model}`);
}

/** Runs `demo`. */
export async function runDemo(
  io: CliIO,
  opts: GlobalOptions & { yes?: boolean; chat?: boolean },
): Promise<number> {
  let runtime: Runtime | undefined;
  try {
    const base = configFrom(io, opts);
    const dir = demoDatabaseDir(base);
    const dbUrl = `pglite:${dir}`;
    runtime = new Runtime({ ...base, databaseUrl: dbUrl });
    const provider = runtime.provider();
    try {
      await provider.status();
    } catch (error) {
      const err = toSqlrecallError(error);
      throw new SqlrecallError(
        'model_unreachable',
        `No model server answers at ${provider.url}: sqlrecall needs ${provider.label} there.`,
        { cause: error, details: { hint: provider.hints.unreachable, reason: err.message } },
      );
    }
    // The chat model answers; the embedding model (small) gives the demo its long-term memory.
    await ensureModel(io, runtime, base.model, 'SQLRECALL_MODEL', Boolean(opts.yes));
    if (base.memoryEnabled)
      await ensureModel(io, runtime, base.embedModel, 'SQLRECALL_EMBED_MODEL', Boolean(opts.yes));

    const bar = progressBar(io, 'creating the demo shop');
    const started = Date.now();
    const made = await createDemoDatabase(dir, { onProgress: (done, total) => bar.update(done, total) });
    if (made.created) {
      const counts = Object.entries(made.counts)
        .map(([t, n]) => `${n} ${t}`)
        .join(', ');
      bar.done(`demo shop ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${counts} (${dir})`);
    } else {
      bar.done();
    }
    if (made.range)
      io.stderr.write(
        `Demo orders run from ${made.range.firstDay} to ${made.range.lastDay} (the two years up to the day before it was created).\n`,
      );
    if (!base.databaseUrl)
      io.stderr.write(
        `Every command uses the demo shop while no database is configured, e.g. sqlrecall ask "how many customers are there?" (the same as --db ${dbUrl}).\n`,
      );
    await runtime.close();
    runtime = undefined;
    if (opts.chat === false) {
      io.stdout.write(`Demo database: ${dbUrl}\n`);
      return 0;
    }
    return await runChat(
      io,
      { ...opts, db: dbUrl },
      `${pc.dim('Try: "how many customers are from India?" or "top 5 products by revenue last month"')}\n`,
    );
  } catch (error) {
    return reportError(io, Boolean(opts.json), error);
  } finally {
    await runtime?.close();
  }
}
