/**
 * The answer once a question's SQL ran: the model's unanswerable reason, the empty-result
 * explanation, or the answer model's words streamed piece by piece; then the notes on standing
 * preferences set aside for the question, or enforced because that decision failed.
 */
import { SqlrecallError } from '../core/errors.js';
import type { ChatMessage, ChatModel, FinishReason } from '../core/ports.js';
import type { Step } from '../core/steps.js';
import { emptyResultAnswer } from './empty-check.js';
import { type GenerateOutcome, unanswerableAnswer } from './generate.js';
import { buildAnswerMessages, buildPrivateAnswerMessages, NO_DATA_ANSWER } from './prompts.js';
import { type SetAsideMemory, setAsideText, type UndecidedMemory, undecidedText } from './set-aside.js';

/** Inputs of {@link writeAnswer}. */
export interface AnswerInput {
  chat: ChatModel;
  /** The question as the SQL answered it. */
  question: string;
  /** What the generation loop produced. */
  generated: GenerateOutcome;
  /** Standing preferences the question overrode (named in the answer). */
  setAside: SetAsideMemory[];
  /** Preferences enforced because the set-aside decision failed (named unless also set aside). */
  undecided: UndecidedMemory[];
  /** Most tokens of the answer model's reply. */
  maxTokens: number;
  /** No answer model call (`--no-answer`): the answer is then null, unless the question is unanswerable. */
  skipAnswer?: boolean;
  /**
   * Privacy mode (a data policy's `rows_to_model: false`): the answer model sees the result's
   * column names, types and row count, never its values. Default false.
   */
  privacy?: boolean;
  signal?: AbortSignal;
}

/**
 * Yields the answer as `answer_token` steps and then one `answer` step; returns the whole answer,
 * or null when none is given (no SQL, or `skipAnswer`).
 * @throws SqlrecallError `model_*` when the answer model fails
 */
export async function* writeAnswer(input: AnswerInput): AsyncGenerator<Step, string | null> {
  const { chat, question, setAside, undecided, maxTokens, skipAnswer, signal } = input;
  const { sql, result, unanswerable, emptyFilters } = input.generated;
  let answer: string | null = null;
  if (unanswerable !== undefined) {
    // The model said the schema has no data for this: an honest answer, no invented SQL.
    answer = unanswerableAnswer(unanswerable);
    yield { type: 'answer_token', text: answer };
    yield { type: 'answer', text: answer };
  } else if (sql !== null && !skipAnswer) {
    if (result.rowCount === 0) {
      answer = emptyResultAnswer(emptyFilters ?? []) ?? NO_DATA_ANSWER;
      yield { type: 'answer_token', text: answer };
    } else {
      const messages = input.privacy
        ? buildPrivateAnswerMessages(question, sql, result)
        : buildAnswerMessages(question, sql, result);
      const reply = yield* streamAnswer(chat, messages, {
        maxTokens,
        ...(signal ? { signal } : {}),
      });
      answer = reply.trim();
    }
    if (setAside.length > 0) {
      // The question won over a standing preference: say so in the answer itself.
      const note = `\n${setAsideText(setAside)}`;
      yield { type: 'answer_token', text: note };
      answer = `${answer}${note}`;
    }
    const kept = undecided.filter((u) => !setAside.some((s) => s.id === u.id));
    if (kept.length > 0) {
      // The set-aside model call failed: the preference was enforced, and the answer says so.
      const note = `\n${undecidedText(kept)}`;
      yield { type: 'answer_token', text: note };
      answer = `${answer}${note}`;
    }
    yield { type: 'answer', text: answer };
  }
  return answer;
}

/**
 * Streams the answer model's reply: an `answer_token` step per piece as the model produces it;
 * returns the whole text.
 * A reply cut by the token limit is marked with a trailing ellipsis rather than passed off as whole.
 */
async function* streamAnswer(
  chat: ChatModel,
  messages: ChatMessage[],
  opts: { maxTokens: number; signal?: AbortSignal },
): AsyncGenerator<Step, string> {
  let text = '';
  let finish: FinishReason | undefined;
  const request = { messages, maxTokens: opts.maxTokens, purpose: 'answer' };
  for await (const part of chat.stream(request, opts.signal ? { signal: opts.signal } : {})) {
    if (part.type === 'text-delta') {
      text += part.text;
      yield { type: 'answer_token', text: part.text };
    } else if (part.type === 'finish') {
      finish = part.finishReason;
    }
  }
  if (!finish)
    throw new SqlrecallError(
      'model_output',
      'The answer ended before the model server said it was complete.',
    );
  return finish === 'length' ? `${text.trim()} …` : text;
}
