/**
 * The memory side of one question turn: the reply to a message that needs no SQL, the memories
 * listed as recalled but not applied, and finishing the turn (recording it, applying the message's
 * pending write) once the answer was shown.
 */

import type { AppliedMemory, AskOutcome, Step } from '../core/steps.js';
import type { RecalledMemory } from '../memory/recall.js';
import type { MemoryTurn } from './memory-hook.js';

/**
 * The memories that reached the prompt but are neither applied (verified in the SQL) nor set aside
 * for this question, in recall order, as `{id, kind, text}`.
 */
export function recalledOnly(
  recalled: RecalledMemory[],
  applied: readonly { id: string }[],
  setAside: readonly { id: string }[] = [],
): AppliedMemory[] {
  const listed = new Set([...applied, ...setAside].map((m) => m.id));
  return recalled
    .filter((r) => !listed.has(r.memory.id))
    .map((r) => ({ id: r.memory.id, kind: r.memory.kind, text: r.memory.text }));
}

/** A message that needs no SQL (instruction, memory command, greeting): its reply, then `done`. */
export async function* replyWithoutSql(message: string, turn: MemoryTurn): AsyncGenerator<Step, AskOutcome> {
  const reply = turn.reply!;
  if (reply.changes.length > 0 || reply.problems.length > 0) {
    yield { type: 'remembered', changes: reply.changes, problems: reply.problems };
  }
  yield { type: 'reply', text: reply.text };
  const outcome: AskOutcome = {
    question: message,
    sql: null,
    result: null,
    answer: reply.text,
    attempts: [],
    appliedMemories: [],
    recalledMemories: [],
    kind: turn.classification.kind,
    remembered: reply.changes,
    memoryProblems: reply.problems,
    conversationId: turn.conversationId,
  };
  yield { type: 'done', outcome };
  return outcome;
}

/**
 * After the answer was shown: records the turn and applies the message's pending write. A failed
 * write stays queued (applied at the next start) and is reported, never fatal to the answer.
 */
export async function* finishTurn(
  turn: MemoryTurn,
  outcome: AskOutcome,
  transient: string[],
): AsyncGenerator<Step, void> {
  outcome.kind = turn.classification.kind;
  outcome.conversationId = turn.conversationId;
  let learned: Awaited<ReturnType<MemoryTurn['finish']>> = null;
  try {
    learned = await turn.finish({
      sql: outcome.sql,
      rowCount: outcome.result?.rowCount ?? null,
      answer: outcome.answer,
      appliedMemories: outcome.appliedMemories,
      recalledMemories: outcome.recalledMemories,
    });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    learned = {
      text: '',
      changes: [],
      problems: [`Could not store it now (${why}); it will be stored at the next start.`],
    };
  }
  if (!learned) return;
  outcome.remembered = learned.changes;
  outcome.memoryProblems = [...(outcome.memoryProblems ?? []), ...learned.problems];
  // The instruction applied to this answer is now a stored memory: list it by its id.
  const listed = new Set(outcome.appliedMemories.map((m) => m.id));
  const stored = learned.changes.filter((c) => c.id !== null && c.action !== 'DELETE' && !listed.has(c.id));
  if (transient.length > 0 && stored.length > 0) {
    outcome.appliedMemories.push(...stored.map((c) => ({ id: c.id!, kind: c.kind, text: c.text })));
    const applied = new Set(outcome.appliedMemories.map((m) => m.id));
    outcome.recalledMemories = outcome.recalledMemories.filter((m) => !applied.has(m.id));
  }
  yield { type: 'remembered', changes: learned.changes, problems: learned.problems };
}
