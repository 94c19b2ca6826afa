/**
 * Issue 7, "ablation check" on instruct_advanced_postgres.csv (32 questions, broker and
 * car_dealership, embedded PGlite): the scripted model writes the gold SQL only when the question's
 * own instruction is in its prompt (pasted, or recalled as a memory taught from it), and a wrong
 * query otherwise — except every fourth question, which it answers right regardless. So:
 * none = 8/32 exactly, prompt = 32/32 exactly, and taught = 8 + the questions whose prompt carried
 * a memory taught from their own instructions: none < taught ≤ prompt.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { type EvalQuestion, loadEvalDataset, splitSentences } from '../src/eval/dataset.js';
import type { EvalSummary } from '../src/eval/report.js';
import { EXTRACT_PROMPT_MARKER, RECONCILE_PROMPT_MARKER } from '../src/memory/prompts.js';
import { runBenchmark } from '../src/runtime/eval-runtime.js';
import { startEvalModel } from './support/eval-model.js';
import type { ScriptedOllama } from './support/scripted/server.js';
import { benchmarkPath, HAS_BENCHMARKS } from './support/shared-data.js';

const CSV = benchmarkPath('defog', 'instruct_advanced_postgres.csv');
const squash = (text: string) => text.toLowerCase().replace(/\s+/g, ' ');

/** True when one of `q`'s instruction sentences is in the prompt. */
function instructionInPrompt(q: EvalQuestion, prompt: string): boolean {
  const haystack = squash(prompt);
  return splitSentences(q.instructions).some((s) => haystack.includes(squash(s)));
}

describe.skipIf(!HAS_BENCHMARKS)('memory ablation on instruct_advanced (PGlite)', () => {
  let home: string;
  let model: ScriptedOllama;
  let questions: EvalQuestion[];
  const promptsSeen = new Map<string, string[]>();
  /** Ids of the questions each mode answered right, from the JSONL predictions. */
  const rightBy = new Map<string, Set<string>>();
  const readRight = (summary: EvalSummary): void => {
    for (const line of readFileSync(summary.resultsFile!, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const r = JSON.parse(line) as { mode: string; id: string; correct: boolean };
      if (!rightBy.has(r.mode)) rightBy.set(r.mode, new Set());
      if (r.correct) rightBy.get(r.mode)!.add(r.id);
    }
  };

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-ablation-'));
    questions = await loadEvalDataset(CSV);
    const sentences = [...new Set(questions.flatMap((q) => splitSentences(q.instructions)))];
    model = await startEvalModel(
      questions,
      (q, ctx) => {
        promptsSeen.set(q.id, [...(promptsSeen.get(q.id) ?? []), ctx.prompt]);
        if (q.index % 4 === 0 || instructionInPrompt(q, ctx.prompt)) return undefined; // gold
        return "SELECT 'guessed without the definition' AS wrong";
      },
      (request) => {
        const system = request.messages[0]?.content ?? '';
        const user = request.lastUserMessage;
        if (system.startsWith(EXTRACT_PROMPT_MARKER)) {
          // The fact, in the user's words: the instruction sentence the message carries.
          const said = squash(/<message>\n([\s\S]*?)\n<\/message>/.exec(user)?.[1] ?? '');
          const sentence = sentences.find((s) => said.includes(squash(s)));
          return JSON.stringify({
            facts: sentence ? [{ kind: 'term', text: sentence, sql: null, columns: [] }] : [],
          });
        }
        if (system.startsWith(RECONCILE_PROMPT_MARKER)) return JSON.stringify({ action: 'ADD', id: null });
        return undefined;
      },
    );
  }, 60_000);
  afterAll(async () => {
    await model?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const run = (modes: ('none' | 'prompt' | 'taught')[], out: string): Promise<EvalSummary> =>
    runBenchmark({
      config: loadConfig({ env: { OLLAMA_HOST: model.url, SQLRECALL_HOME: home }, cwd: home, flags: {} }),
      dataset: CSV,
      dumpsDir: benchmarkPath('defog', 'dbs'),
      modes,
      outPath: join(home, out),
    });

  it('none scores exactly 8/32 and prompt exactly 32/32', async () => {
    expect(questions).toHaveLength(32);
    const summary = await run(['none', 'prompt'], 'none-prompt.jsonl');
    readRight(summary);
    const by = Object.fromEntries(summary.modes.map((m) => [m.mode, m.overall]));
    expect(by.none).toMatchObject({ questions: 32, correct: 8 });
    expect(by.prompt).toMatchObject({ questions: 32, correct: 32 });
    expect(summary.accuracy).toBe(40 / 64);
    // Every category holds questions from both sides of the every-fourth split.
    for (const stats of Object.values(summary.modes[0]!.byCategory)) expect(stats.accuracy).toBeLessThan(1);
  }, 300_000);

  it('taught: every sentence is stored, recalled memories reach the prompt, none < taught ≤ prompt', async () => {
    promptsSeen.clear();
    const summary = await run(['taught'], 'taught.jsonl');
    const taught = summary.modes[0]!;
    readRight(summary);
    expect(taught.mode).toBe('taught');
    const sentences = new Set(
      ['broker', 'car_dealership'].flatMap((db) => [
        ...new Set(questions.filter((q) => q.dbName === db).flatMap((q) => splitSentences(q.instructions))),
      ]),
    );
    expect(taught.memory!.sentencesTaught).toBe(42);
    // Every sentence is accounted for: stored as one memory, or listed with the reason it was not
    // (e.g. a formula whose " - " the classifier reads as a clause break and answers as a question).
    expect(taught.memory!.factsStored + taught.memory!.notStored.length).toBe(42);
    expect(taught.memory!.factsStored).toBeGreaterThan(sentences.size / 2);
    for (const n of taught.memory!.notStored) expect(n.why).not.toBe('');
    // Exactly the questions whose prompt carried their own instruction (or every fourth) are right.
    const expected = questions.filter(
      (q) => q.index % 4 === 0 || (promptsSeen.get(q.id) ?? []).some((p) => instructionInPrompt(q, p)),
    ).length;
    expect(taught.overall.correct).toBe(expected);
    // none < taught ≤ prompt as sets of questions: every question right without memory is right when
    // taught, and every question right when taught is right with the instruction pasted.
    const none = rightBy.get('none') ?? new Set<string>();
    const prompt = rightBy.get('prompt') ?? new Set<string>();
    const right = rightBy.get('taught') ?? new Set<string>();
    expect(none.size).toBe(8);
    expect(right.size).toBe(taught.overall.correct);
    expect([...none].filter((id) => !right.has(id))).toEqual([]);
    expect([...right].filter((id) => !prompt.has(id))).toEqual([]);
    expect(right.size).toBeGreaterThan(none.size);
    expect(taught.memory!.questionsWithInstructions).toBe(32);
    expect(taught.memory!.questionsWithRelevantMemory).toBeGreaterThanOrEqual(expected - 8);
    process.stderr.write(
      `taught: ${taught.overall.correct}/32 correct, ${taught.memory!.factsStored} facts, relevant memory recalled for ${taught.memory!.questionsWithRelevantMemory}/32\n`,
    );
  }, 300_000);
});
