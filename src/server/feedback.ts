/**
 * Feedback on an answer: thumbs up stores the question and its SQL as an `example`
 * memory (recalled as a few-shot example for similar questions); thumbs down with a corrected SQL
 * stores the correction instead. The SQL must pass the read-only guard. An example for the same
 * question is updated in place rather than duplicated.
 */
import { storeConfirmedExample } from '../app/memory.js';
import type { MemoryScope } from '../core/memory.js';
import type { Schema } from '../core/schema.js';
import type { MemoryChange } from '../core/steps.js';
import { checkFact } from '../memory/extract.js';
import { guardSqlOffThread } from '../sql/check-pool.js';
import { apiError } from './context.js';
import type { ServerMemory } from './deps.js';

/** A feedback call. */
export interface Feedback {
  rating: 'up' | 'down';
  question: string;
  sql?: string;
  correctedSql?: string;
}

/**
 * Applies feedback to `scope`; returns the stored change, or null when nothing is stored (thumbs
 * down without a correction).
 * @throws SqlrecallError `usage` (thumbs up without SQL), `guard_refused` (SQL not a read)
 */
export async function applyFeedback(
  memory: ServerMemory,
  scope: MemoryScope,
  feedback: Feedback,
  schema?: Schema,
): Promise<MemoryChange | null> {
  const given = feedback.rating === 'up' ? feedback.sql : feedback.correctedSql;
  if (!given?.trim()) {
    if (feedback.rating === 'up') throw apiError('usage', 'Thumbs up needs the SQL of the answer.');
    return null;
  }
  const verdict = await guardSqlOffThread(given);
  if (!verdict.ok)
    throw apiError('guard_refused', `The SQL cannot be stored as an example: ${verdict.reason}.`);
  const fact = await checkFact({ kind: 'example', text: feedback.question }, schema);
  const reason = feedback.rating === 'up' ? 'thumbs up' : 'thumbs down with a correction';
  return storeConfirmedExample(memory, scope, {
    question: fact.text,
    sql: verdict.sql,
    tables: fact.tables ?? [],
    columns: fact.columns ?? [],
    reason,
  });
}
