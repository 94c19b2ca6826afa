/**
 * Answers without the model: when the chat model is unreachable or `ask --no-model`
 * asks for it, a question is answered only from the user's saved examples (see
 * `example-reuse.ts`) or from a rule for the simplest shapes (see `fallback-rules.ts`). When
 * neither fits with certainty, the answer is an error that says the model is needed and how to
 * start it (exit 5). Nothing here guesses.
 */
import type { StatementListener } from '../core/audit.js';
import { SqlrecallError } from '../core/errors.js';
import type { Memory, MemoryScope } from '../core/memory.js';
import type { DatabaseConnector, QueryResult } from '../core/ports.js';
import type { Schema, Table } from '../core/schema.js';
import type { ValueHint } from '../linking/documents.js';
import {
  confirmValueSql,
  type ExampleReuseOptions,
  matchExamples,
  substituteSlots,
} from './example-reuse.js';
import {
  coveredByLinkedTables,
  type ExampleSource,
  type SimilarExample,
  wordSimilarity,
} from './example-similarity.js';
import { type PreferenceSource, unmetPreferences } from './fallback-preferences.js';
import { type RuleAnswer, ruleSql, ruleSqlWithFilter } from './fallback-rules.js';
import { runCheckedSql } from './run-sql.js';

export type { ExampleSource } from './example-similarity.js';

/** Which path produced an answer: the model, a saved example, or a rule. */
export type AnswerPath = 'model' | 'example' | 'rules';

/** Inputs of {@link answerWithoutModel}. */
export interface FallbackInput {
  question: string;
  user: string;
  /** The user's team, whose shared examples also apply (after the user's own). */
  team?: string;
  schema: Schema;
  db: DatabaseConnector;
  examples?: ExampleSource;
  allowTables?: readonly string[];
  maxRows: number;
  timeoutMs: number;
  signal?: AbortSignal;
  reuse?: ExampleReuseOptions;
  /**
   * The tables (`schema.name`) the schema linker chose for the question: an example is reused only
   * when every table its SQL reads is among them. Absent: every table of `schema`.
   */
  linkedTables?: readonly string[];
  /** Standing preferences (the memory store); an answer that does not apply one is refused. */
  preferences?: PreferenceSource;
  /** Memory ids (or prefixes) not to apply to this message (`--without`). */
  without?: readonly string[];
  /** Value hints per table (enum labels, sampled values): the rules' filters are confirmed by them. */
  valueHints?: (table: Table) => Promise<ValueHint[]>;
  /** Told of every statement run or refused (the audit trail); see `RunSqlInput.onStatement`. */
  onStatement?: StatementListener;
  /** Use saved examples (default true) and rules (default true). */
  useExamples?: boolean;
  useRules?: boolean;
}

/** An answer produced without the model. */
export interface FallbackAnswer {
  path: 'example' | 'rules';
  sql: string;
  result: QueryResult;
  /** The example reused (path `example`). */
  exampleId?: string;
  /** One sentence saying how the answer was made (shown as the answer text). */
  explanation: string;
}

/**
 * No answer without the model because standing preferences apply to the tables the example or
 * rule reads and its SQL does not already apply them (see `fallback-preferences.ts`).
 */
export interface FallbackBlocked {
  path: 'blocked';
  preferences: { id: string; text: string }[];
}

/**
 * The sentence saying which preferences stopped an answer without the model, by short id only: an
 * error message reaches logs and other front ends, so it never carries what a memory says
 * (`sqlrecall memory show ID` does, to its owner).
 */
export function blockedText(blocked: FallbackBlocked): string {
  const many = blocked.preferences.length > 1;
  const ids = blocked.preferences.map((p) => `[${p.id.slice(0, 8)}]`).join(', ');
  const first = blocked.preferences[0]?.id.slice(0, 8) ?? 'ID';
  return `your standing preference${many ? 's' : ''} ${ids} appl${many ? 'y' : 'ies'} to this question, and an answer without the model cannot apply ${many ? 'them' : 'it'} (\`sqlrecall memory show ${first}\` shows ${many ? 'each' : 'it'})`;
}

/** The hint shown when the model is needed (exit 5). */
export const MODEL_NEEDED_HINT = 'ollama serve (or set OLLAMA_HOST to the address of your Ollama server)';

/**
 * The error for a question that neither an example nor a rule answers with certainty: the model's
 * own error (code, message, details) extended by that sentence, or, for `--no-model`, code
 * `model_unreachable` (exit 5) so scripts see the same "model needed" class as a down server.
 * `startHint` says how to start the configured model server (default: Ollama's).
 */
export function modelNeededError(
  reason: string,
  cause?: unknown,
  blocked?: FallbackBlocked,
  startHint: string = MODEL_NEEDED_HINT,
): SqlrecallError {
  const why = blocked
    ? `: ${blockedText(blocked)}.`
    : ': no saved example or simple rule answers it with certainty.';
  if (cause instanceof SqlrecallError) {
    // Keep the model error's own words (which server, why) and say that nothing else could answer.
    return new SqlrecallError(cause.code, `${cause.message} This question needs the model${why}`, {
      cause,
      details: {
        ...cause.details,
        ...(blocked ? { preferences: blocked.preferences.map((p) => ({ id: p.id })) } : {}),
        // Always say how to start the model, whichever model call failed first.
        hint:
          typeof cause.details.hint === 'string' && cause.details.hint.includes(startHint.split(' (')[0]!)
            ? cause.details.hint
            : `${startHint}${cause.details.hint ? `; ${cause.details.hint}` : ''}`,
      },
    });
  }
  return new SqlrecallError(
    'model_unreachable',
    `This question needs the model (${reason})${why} ${startHint.startsWith('ollama serve') ? 'Start Ollama with `ollama serve`.' : `To start it: ${startHint}.`}`,
    {
      cause,
      details: {
        hint: startHint,
        retryable: true,
        ...(blocked ? { preferences: blocked.preferences.map((p) => ({ id: p.id })) } : {}),
      },
    },
  );
}

/**
 * The user's active examples, then the team's (never another user's), each scope ranked by word
 * similarity to the question (most recent first on ties), keeping only those whose SQL reads tables
 * the schema linker chose. Every example of the scope is a candidate: the close-match test is the
 * word-for-word alignment in `matchExamples`, which a similarity floor could only narrow.
 */
async function loadExamples(input: FallbackInput): Promise<Memory[]> {
  if (!input.examples) return [];
  const query = { kinds: ['example'] as ['example'], statuses: ['active'] as ['active'] };
  const source = input.examples;
  const read = async (scope: MemoryScope) =>
    (await (source.isEnabled?.(scope) ?? true)) ? source.list(scope, query) : [];
  const own = await read({ user: input.user });
  if (own.length === 0 && source.isEnabled && !(await source.isEnabled({ user: input.user }))) return [];
  const team = input.team !== undefined ? await read({ team: input.team }) : [];
  const rank = (memories: Memory[], owner: SimilarExample['owner']): SimilarExample[] =>
    memories
      .map((memory) => ({
        memory,
        similarity: wordSimilarity(input.question, memory.text),
        measure: 'words' as const,
        owner,
      }))
      .sort((a, b) => b.similarity - a.similarity || b.memory.updatedAt.localeCompare(a.memory.updatedAt));
  const linked = input.linkedTables ?? input.schema.tables.map((t) => `${t.schema}.${t.name}`);
  const kept = await coveredByLinkedTables(
    [...rank(own, 'user'), ...rank(team, 'team')],
    linked,
    input.schema,
    input.db.dialect,
  );
  return kept.map((c) => c.memory);
}

/**
 * Tries saved examples, then rules. Returns null when neither fits with certainty.
 * @throws SqlrecallError `guard_refused`, `db_*` from running the chosen SQL
 */
export async function answerWithoutModel(
  input: FallbackInput,
): Promise<FallbackAnswer | FallbackBlocked | null> {
  const blockedBy = async (sql: string): Promise<FallbackBlocked | null> => {
    const unmet = await unmetPreferences({
      sql,
      schema: input.schema,
      user: input.user,
      ...(input.team !== undefined ? { team: input.team } : {}),
      ...(input.preferences ? { source: input.preferences } : {}),
      ...(input.without ? { without: input.without } : {}),
    });
    return unmet.length === 0
      ? null
      : { path: 'blocked', preferences: unmet.map((m) => ({ id: m.id, text: m.text })) };
  };
  const run = (sql: string) =>
    runCheckedSql({
      db: input.db,
      sql,
      schema: input.schema,
      allowTables: input.allowTables,
      maxRows: input.maxRows,
      timeoutMs: input.timeoutMs,
      signal: input.signal,
      onStatement: input.onStatement,
      origin: 'fallback',
    });
  if (input.useExamples !== false) {
    const examples = await loadExamples(input);
    const matches = await matchExamples(
      input.question,
      examples,
      input.schema,
      input.reuse,
      input.db.dialect,
    );
    for (const match of matches) {
      const changes: { slot: (typeof match.slots)[number]['slot']; newValue: string }[] = [];
      let ok = true;
      for (const { slot, newValue } of match.slots) {
        if (slot.kind === 'number' || newValue === slot.value.toLowerCase()) {
          changes.push({ slot, newValue: slot.kind === 'number' ? newValue : slot.value });
          continue;
        }
        // A new text value must exist in the compared column; its stored spelling is used.
        if (!slot.column) {
          ok = false;
          break;
        }
        const found = await run(confirmValueSql(slot.column, newValue, input.db.dialect)).catch(() => null);
        const values = found?.result.rows.map((r) => r[0]).filter((v): v is string => typeof v === 'string');
        if (values?.length !== 1) {
          ok = false;
          break;
        }
        changes.push({ slot, newValue: values[0]! });
      }
      if (!ok) continue;
      let sql: string;
      try {
        sql = substituteSlots(match.example.sql!, changes);
      } catch {
        continue;
      }
      const blocked = await blockedBy(sql);
      if (blocked) return blocked;
      const { sql: checked, result } = await run(sql);
      const replaced = changes
        .filter((c) => c.newValue !== c.slot.value)
        .map((c) => `${c.slot.value} → ${c.newValue}`);
      return {
        path: 'example',
        sql: checked,
        result,
        exampleId: match.example.id,
        explanation: `Answered without the model: reused example [${match.example.id.slice(0, 8)}] ("${match.example.text}")${replaced.length > 0 ? ` with ${replaced.join(', ')}` : ''}; ${result.rowCount} row(s).`,
      };
    }
  }
  if (input.useRules !== false) {
    const rule: RuleAnswer | null = input.valueHints
      ? await ruleSqlWithFilter(input.question, input.schema, input.valueHints)
      : ruleSql(input.question, input.schema);
    if (rule) {
      const blocked = await blockedBy(rule.sql);
      if (blocked) return blocked;
      const { sql, result } = await run(rule.sql);
      return {
        path: 'rules',
        sql,
        result,
        explanation: `Answered without the model by the rule "${rule.rule}" (${rule.reading}); ${result.rowCount} row(s).`,
      };
    }
  }
  return null;
}
