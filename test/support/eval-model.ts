/**
 * A scripted model for the eval harness tests: it finds the benchmark question in the SQL prompt
 * and replies with whatever the test decides for it (usually the gold SQL).
 */
import { SQL_PROMPT_MARKER } from '../../src/agent/prompts.js';
import type { DefogQuestion } from '../../src/eval/gold.js';
import { expandGoldQuery, splitGoldQueries } from '../../src/eval/gold.js';
import type { ScriptedChatRequest, ScriptedOllama, ScriptedReply } from './scripted/server.js';
import { startScriptedOllama } from './scripted/server.js';

/** The gold SQL a perfect model writes: the first query, first `{}` alternative. */
export function firstGold(q: DefogQuestion): string {
  return expandGoldQuery(splitGoldQueries(q.query)[0]!, 'first')[0]!;
}

/** What the scripted model knows when it answers an SQL request. */
export interface SqlRequestContext {
  /** Every message of the request joined (system, schema, question, memories, repairs). */
  prompt: string;
  /** True for a repair request (after a database error). */
  repair: boolean;
  request: ScriptedChatRequest;
}

/** Decides the reply for a question (or undefined: the default, gold SQL). */
export type Decide<Q extends DefogQuestion = DefogQuestion> = (
  q: Q,
  context: SqlRequestContext,
) => ScriptedReply | undefined;

/**
 * Starts a scripted Ollama whose SQL replies come from `decide` (default: gold SQL in a fence).
 * Other requests go to `other` (memory extraction, …), else get a fixed sentence. An unknown question is an HTTP 500, so a test
 * notices prompts it did not expect.
 */
export async function startEvalModel<Q extends DefogQuestion>(
  questions: readonly Q[],
  decide: Decide<Q> = () => undefined,
  other?: (request: ScriptedChatRequest) => ScriptedReply | undefined,
): Promise<ScriptedOllama> {
  // The pipeline may tidy whitespace in the question: match on collapsed whitespace.
  const squash = (text: string) => text.replace(/\s+/g, ' ').trim();
  const byQuestion = new Map(questions.map((q) => [squash(q.question), q]));
  return startScriptedOllama({
    chat: (request) => {
      const system = request.messages[0]?.content ?? '';
      if (!system.startsWith(SQL_PROMPT_MARKER)) return other?.(request) ?? 'The rows answer the question.';
      const prompt = request.messages.map((m) => m.content).join('\n');
      // The question opens the line after "Question: " (prompt mode adds instructions after it).
      const asked = squash(/^Question: (.*)$/m.exec(prompt)?.[1] ?? '');
      // Prompt mode appends instructions after the question; a question with an instruction-like
      // sentence ("Only include successful transactions.") reaches the prompt without that part.
      const q =
        byQuestion.get(asked) ??
        questions.find((c) => asked.startsWith(squash(c.question))) ??
        (asked.length > 20 ? questions.find((c) => squash(c.question).startsWith(asked)) : undefined);
      if (!q) return { status: 500, error: `no scripted SQL for: ${asked}` };
      const reply = decide(q, { prompt, repair: request.messages.length > 2, request });
      return reply ?? `\`\`\`sql\n${firstGold(q)}\n\`\`\``;
    },
  });
}
