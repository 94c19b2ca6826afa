/**
 * Structured model calls: Ollama's JSON-schema `format` (zod 4 `z.toJSONSchema`), tolerant
 * parsing (code fences, text around the object), and exactly one retry when the reply is not
 * valid JSON for the schema.
 */

import { z } from 'zod';
import { generateText } from '../core/chat.js';
import type { ChatMessage, ChatModel } from '../core/ports.js';

/** Result of {@link callJson}: the parsed value, or why there is none (with the last raw reply). */
export type JsonCallResult<T> =
  | { ok: true; value: T; raw: string }
  | { ok: false; error: string; raw: string };

/** The JSON object in a model reply: the whole text, else the outermost `{…}` (fences and prose tolerated). */
export function parseJsonReply(text: string): unknown {
  const trimmed = text.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    const start = trimmed.indexOf('{');
    const end = trimmed.lastIndexOf('}');
    if (start < 0 || end <= start) throw new SyntaxError('no JSON object in the reply');
    return JSON.parse(trimmed.slice(start, end + 1));
  }
}

/** The reminder sent with the one retry. */
export const JSON_RETRY_MESSAGE =
  'That reply was not valid JSON for the schema. Reply with only the JSON object.';

/**
 * Asks `chat` for JSON matching `schema` (sent as the Ollama `format`, unless `options.format`
 * gives a stricter one), retrying once with
 * {@link JSON_RETRY_MESSAGE} when the reply does not parse or validate. Model errors (server down,
 * model missing) are thrown, not retried.
 * @throws SqlrecallError `model_*` from the chat model
 */
export async function callJson<S extends z.ZodType>(
  chat: ChatModel,
  messages: ChatMessage[],
  schema: S,
  options: {
    purpose: string;
    maxTokens?: number;
    signal?: AbortSignal;
    /** Schema sent as `format` when it differs from the (looser) validation schema. */
    format?: z.ZodType;
  },
): Promise<JsonCallResult<z.output<S>>> {
  const format = z.toJSONSchema(options.format ?? schema) as Record<string, unknown>;
  let conversation = messages;
  let last: JsonCallResult<z.output<S>> = { ok: false, error: 'no reply', raw: '' };
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const reply = await generateText(
      chat,
      { messages: conversation, format, maxTokens: options.maxTokens ?? 512, purpose: options.purpose },
      { signal: options.signal },
    );
    const raw = reply.text;
    try {
      const parsed = schema.safeParse(parseJsonReply(raw));
      if (parsed.success) return { ok: true, value: parsed.data, raw };
      last = { ok: false, error: parsed.error.issues[0]?.message ?? 'invalid JSON', raw };
    } catch (error) {
      last = { ok: false, error: (error as Error).message, raw };
    }
    conversation = [
      ...messages,
      { role: 'assistant', content: raw },
      { role: 'user', content: JSON_RETRY_MESSAGE },
    ];
  }
  return last;
}
