/**
 * `taught` mode: a simulated user says each instruction sentence to the assistant as a chat
 * message, in a conversation of its own, through the normal message path (classify → extract →
 * reconcile → store). What was stored is read from the turns' `remembered` changes.
 */
import { randomUUID } from 'node:crypto';
import { SqlrecallError, toSqlrecallError } from '../core/errors.js';
import type { AskOutcome } from '../core/steps.js';
import type { AskPipeline, TaughtMemory, TeachReport } from './run.js';

/** Errors that end the teaching (and the run) instead of skipping one sentence. */
const FATAL = new Set([
  'model_unreachable',
  'model_missing',
  'memory_embedding_mismatch',
  'memory_store',
  'memory_unavailable',
]);

/** Phrases that already make a sentence an instruction to remember. */
const INSTRUCTION_OPENING = /^(?:remember|always|never|from now on|note that|keep in mind)\b/i;

/**
 * The chat message for one instruction sentence: as a user teaching would say it, "Remember that
 * …" (unless the sentence already opens like an instruction), so it is stored, not answered.
 */
export function teachingMessage(sentence: string): string {
  const text = sentence.trim();
  if (INSTRUCTION_OPENING.test(text)) return text;
  // "To get …" → "to get …", but acronyms and names keep their case ("TPV = …", "Toyota …" stays).
  const lower = /^[A-Z][a-z]+\b/.test(text) && !/^[A-Z][a-z]+\s+[A-Z]/.test(text);
  return `Remember that ${lower ? text.charAt(0).toLowerCase() + text.slice(1) : text}`;
}

/** The message that says the memory feature is missing. */
export const NO_MEMORY_FEATURE =
  'The taught memory mode requires the memory feature, which this pipeline does not have; use --memory-mode none or prompt.';

/**
 * Teaches `sentences` to `pipeline` as `user`, one message each, in one fresh conversation.
 * A sentence whose turn fails (e.g. the model's extraction was unusable) is skipped: it simply
 * is not remembered, which the report shows.
 * @throws SqlrecallError `usage` when the pipeline has no memory (turns carry no `kind`);
 *   `model_unreachable`/`model_missing` as they come
 */
export async function teachSentences(
  pipeline: AskPipeline,
  user: string,
  sentences: string[],
): Promise<TeachReport> {
  const conversationId = `eval-teach-${randomUUID()}`;
  const memories = new Map<string, TaughtMemory>();
  const unstored: TeachReport['unstored'] = [];
  for (const sentence of sentences) {
    let outcome: AskOutcome | undefined;
    let classified = false;
    try {
      for await (const step of pipeline.ask({
        user,
        message: teachingMessage(sentence),
        conversationId,
        skipAnswer: true,
      })) {
        if (step.type === 'classified') classified = true;
        // A pipeline with memory classifies every message first; without it, nothing can be taught.
        if (!classified) throw new SqlrecallError('usage', NO_MEMORY_FEATURE);
        if (step.type === 'done') outcome = step.outcome;
      }
    } catch (error) {
      const err = toSqlrecallError(error);
      if (!classified || FATAL.has(err.code)) throw err;
      unstored.push({ sentence, why: err.message });
      continue;
    }
    if (!outcome) continue;
    const changes = outcome.remembered ?? [];
    for (const change of changes) {
      if (change.id === null) continue;
      if (change.action === 'DELETE') memories.delete(change.id);
      else if (change.action !== 'NOOP')
        memories.set(change.id, { id: change.id, text: change.text, sentence });
    }
    const stored = changes.some((c) => c.id !== null && c.action !== 'NOOP' && c.action !== 'DELETE');
    if (!stored) {
      const noop = changes.find((c) => c.action === 'NOOP');
      const why = noop
        ? `already remembered${noop.reason ? ` (${noop.reason})` : ''}: ${noop.text}`
        : outcome.kind !== 'instruction' && outcome.kind !== 'both'
          ? `taken as ${outcome.kind}, not as something to remember`
          : (outcome.memoryProblems?.join(' ') ?? '') || 'nothing to remember was extracted';
      unstored.push({ sentence, why });
    }
  }
  return { sentences: sentences.length, memories: [...memories.values()], unstored };
}
