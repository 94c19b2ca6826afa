/**
 * What the question pipeline reports while it works. The same steps stream to the CLI, HTTP/SSE
 * and the web UI.
 */
import type { QueryResult } from './ports.js';

/** One attempt at SQL for a question (the first try, then repairs). */
export interface Attempt {
  sql: string;
  /** Why the attempt failed (guard refusal or database error); absent on success. */
  error?: string;
}

/** A pipeline step. */
export type Step =
  | { type: 'schema'; tables: number; promptTokens: number }
  | { type: 'sql'; sql: string; attempt: number }
  | { type: 'refused'; sql: string; reason: string }
  | { type: 'retried'; attempt: number; error: string }
  | { type: 'rows'; result: QueryResult }
  | { type: 'answer_token'; text: string }
  | { type: 'answer'; text: string }
  | { type: 'done'; outcome: AskOutcome };

/** Final outcome of one question (the `ask --json` document minus the question). */
export interface AskOutcome {
  question: string;
  sql: string | null;
  result: QueryResult | null;
  answer: string | null;
  attempts: Attempt[];
  appliedMemories: { id: string; kind: string; text: string }[];
}
