/**
 * Memories in the SQL step: the delimited `<memories>` block of the prompt, the
 * check that each standing preference's predicate made it into the generated SQL (one retry with a
 * reminder when it did not), and which memories count as applied to the final SQL.
 *
 * The check wraps `generateAndRun` instead of changing it: the database connector handed to it is
 * a proxy whose `execute` refuses, once, a statement that reads a preference's table without its
 * predicate — before anything runs — and the wrapper then calls `generateAndRun` again with a
 * reminder appended to the prompt.
 */

import { SqlrecallError } from '../core/errors.js';
import type { MemoryKind } from '../core/memory.js';
import type { DatabaseConnector } from '../core/ports.js';
import type { AppliedMemory, Step } from '../core/steps.js';
import type { RecalledMemory } from '../memory/recall.js';
import {
  type PredicateParts,
  predicateIn,
  predicateParts,
  type StatementParts,
  statementParts,
} from '../memory/sql-fragment.js';
import { type GenerateInput, type GenerateOutcome, generateAndRun } from './generate.js';
import { decideSetAside, type SetAsideMemory, type UndecidedMemory } from './set-aside.js';

/** First line of the reminder sent when a standing preference is missing from the SQL. */
export const PREFERENCE_REMINDER_MARKER = "The query does not apply the user's standing preferences.";

/** A standing preference whose predicate must appear in SQL that reads its tables. */
export interface RequiredPredicate {
  memory: { id: string; kind: MemoryKind; text: string; sql: string };
  /** Lower-case table names (no schema) the preference touches. */
  tables: string[];
  parts: PredicateParts;
}

/** Keeps prompt text from closing its own block. */
function escapeBlock(text: string, tag: string): string {
  return text.replace(new RegExp(`<(/?)${tag}>`, 'gi'), `‹$1${tag}›`);
}

/**
 * The `<memories>` block: what this user taught, numbered, each with its compiled SQL; plus the
 * instruction part of this very message (`transient`), not yet stored. Empty string when empty.
 */
export function renderMemoriesBlock(recalled: RecalledMemory[], transient: string[] = []): string {
  if (recalled.length === 0 && transient.length === 0) return '';
  const lines = ['<memories>'];
  let n = 0;
  for (const r of recalled) {
    n += 1;
    const label = r.memory.kind === 'preference' ? 'preference, standing filter' : r.memory.kind;
    const owner = r.owner === 'team' ? ', from the team' : '';
    lines.push(`${n}. [${label}${owner}] ${escapeBlock(r.memory.text, 'memories')}`);
    if (r.memory.sql) lines.push(`   SQL: ${escapeBlock(r.memory.sql, 'memories')}`);
  }
  for (const text of transient) {
    n += 1;
    lines.push(`${n}. [preference, said in this message] ${escapeBlock(text, 'memories')}`);
  }
  lines.push('</memories>');
  return lines.join('\n');
}

/** The `<conversation>` block around rendered conversation text (empty string when empty). */
export function renderConversationBlock(text: string): string {
  return text ? ['<conversation>', escapeBlock(text, 'conversation'), '</conversation>'].join('\n') : '';
}

/** The standing preferences among `recalled` that have SQL, ready for checking. */
export async function requiredPredicates(recalled: RecalledMemory[]): Promise<RequiredPredicate[]> {
  const out: RequiredPredicate[] = [];
  for (const r of recalled) {
    const { memory } = r;
    if (memory.kind !== 'preference' || !memory.sql || r.why !== 'standing') continue;
    const parts = await predicateParts(memory.sql);
    if (!parts || (parts.columns.length === 0 && parts.literals.length === 0)) continue;
    out.push({
      memory: { id: memory.id, kind: memory.kind, text: memory.text, sql: memory.sql },
      tables: memory.tables.map((t) => t.slice(t.lastIndexOf('.') + 1).toLowerCase()),
      parts,
    });
  }
  return out;
}

/** Preferences that `statement` needs (it reads their table) but does not apply. */
export function missingPredicates(
  statement: StatementParts | undefined,
  required: RequiredPredicate[],
): RequiredPredicate[] {
  if (!statement) return [];
  return required.filter(
    (r) => r.tables.some((t) => statement.tables.includes(t)) && !predicateIn(r.parts, statement),
  );
}

/** Thrown by the checking connector before a statement without a required predicate runs. */
class MissingPreferenceError extends SqlrecallError {
  constructor(
    readonly sql: string,
    readonly missing: RequiredPredicate[],
  ) {
    super('internal', `The query does not apply: ${missing.map((m) => m.memory.text).join('; ')}`);
  }
}

/** The reminder appended to the prompt for the one retry. */
export function reminderText(missing: RequiredPredicate[]): string {
  return [
    PREFERENCE_REMINDER_MARKER,
    'Include these conditions (from the <memories> block) in the WHERE clause, joining their tables if needed:',
    ...missing.map((m) => `- ${m.memory.sql}   (${m.memory.text})`),
    'Reply with the corrected query in a ```sql fenced block, nothing else.',
  ].join('\n');
}

/**
 * `generateAndRun`, checking standing preferences: a statement that reads a preference's table
 * without its predicate is not executed; the model is asked once more with a reminder. The second
 * answer runs whatever it is (the preference then simply does not count as applied).
 *
 * With `turn.question`, a missing preference that the question explicitly
 * overrides is set aside instead (see `set-aside.ts`): the statement runs as written and the
 * memory is pushed onto `turn.setAside` (never enforced again in this turn). A preference enforced
 * because the set-aside model call failed is pushed onto `turn.undecided`.
 */
export async function* generateApplyingPreferences(
  input: GenerateInput,
  required: RequiredPredicate[],
  turn: { question?: string; setAside?: SetAsideMemory[]; undecided?: UndecidedMemory[] } = {},
): AsyncGenerator<Step, GenerateOutcome> {
  if (required.length === 0) return yield* generateAndRun(input);
  const db = input.db;
  let enforced = required;
  const checked = new Proxy(db, {
    get(target, property) {
      if (property === 'execute') {
        return async (sql: string, options: Parameters<DatabaseConnector['execute']>[1]) => {
          const statement = await statementParts(sql);
          let missing = missingPredicates(statement, enforced);
          if (missing.length > 0 && turn.question !== undefined) {
            const decided = await decideSetAside({
              question: turn.question,
              missing,
              statement,
              chat: input.chat,
              signal: input.signal,
            });
            if (decided.setAside.length > 0) {
              const ids = new Set(decided.setAside.map((m) => m.id));
              enforced = enforced.filter((r) => !ids.has(r.memory.id));
              turn.setAside?.push(
                ...decided.setAside.filter((m) => !turn.setAside?.some((s) => s.id === m.id)),
              );
            }
            turn.undecided?.push(
              ...decided.undecided.filter((u) => !turn.undecided?.some((x) => x.id === u.id)),
            );
            missing = decided.enforce;
          }
          if (missing.length > 0) throw new MissingPreferenceError(sql, missing);
          return target.execute(sql, options);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  try {
    return yield* generateAndRun({ ...input, db: checked });
  } catch (error) {
    if (!(error instanceof MissingPreferenceError)) throw error;
    const earlier = Array.isArray(error.details.attempts)
      ? (error.details.attempts as GenerateOutcome['attempts'])
      : [];
    yield { type: 'retried', attempt: earlier.length + 1, error: error.message };
    const messages = [
      ...input.messages,
      { role: 'assistant' as const, content: `\`\`\`sql\n${error.sql}\n\`\`\`` },
      { role: 'user' as const, content: reminderText(error.missing) },
    ];
    const second = yield* generateAndRun({ ...input, messages, db });
    return { ...second, attempts: [...earlier, ...second.attempts] };
  }
}

/**
 * The memories that count as **applied** to `sql`: those with SQL whose predicate is verified in
 * the statement (every column and constant of it among the statement's filters, see
 * {@link predicateIn}). A memory without SQL (a definition, or a preference the extractor could not
 * compile) has nothing to verify: it was recalled (the `recalled` step lists it) but is never
 * reported as applied.
 */
export async function appliedMemories(
  recalled: RecalledMemory[],
  sql: string | null,
): Promise<AppliedMemory[]> {
  if (!sql) return [];
  const statement = await statementParts(sql);
  if (!statement) return [];
  const out: AppliedMemory[] = [];
  for (const { memory } of recalled) {
    if (!memory.sql) continue;
    const parts = await predicateParts(memory.sql);
    if (parts && predicateIn(parts, statement))
      out.push({ id: memory.id, kind: memory.kind, text: memory.text });
  }
  return out;
}
