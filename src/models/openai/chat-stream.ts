/**
 * Reads an OpenAI-compatible `/v1/chat/completions` event stream (server-sent events) into a reply,
 * trusting nothing the server did not confirm: the reply is complete only when a choice carried a
 * `finish_reason` or the stream sent `data: [DONE]`. An error in any form local servers use (an
 * `{"error":…}` data line, an `event: error` event, llama.cpp's older `error:` field) or a stream
 * that closes before its completion signal fails the call, so a half statement is never taken for
 * a whole one. Reading stops at `[DONE]`: a server that keeps the connection open afterwards does
 * not delay the answer.
 */
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import type { ChatPart, ChatToolCall } from '../../core/ports.js';
import { serverErrorMessage, serverErrorMessageOfText } from '../server-error.js';

/** Token counts a server reported (`usage`, when `stream_options.include_usage` was honoured). */
export interface StreamUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** What a complete stream held. */
export interface ChatStreamReply {
  /** Content text, in order. */
  text: string;
  /** Reasoning text (`reasoning_content` or `reasoning` deltas), kept apart from `text`. */
  thinking: string;
  /** `finish_reason` of the first choice, when the server sent one. */
  finish?: string;
  usage?: StreamUsage;
  /** Structured `tool_calls` deltas, joined per index. */
  toolCalls: ChatToolCall[];
}

/** The innermost message of a dropped connection (`other side closed`), for the cut's reason. */
export function closeReason(error: unknown): string {
  let current: unknown = error;
  let message = 'connection error';
  for (let depth = 0; depth < 6 && current instanceof Error; depth += 1) {
    message = current.message;
    current = (current as Error & { cause?: unknown }).cause;
  }
  return message.replace(/\s+/g, ' ').trim().slice(0, 200);
}

/** Why a stream did not yield a complete reply. */
export class ChatStreamError extends Error {
  constructor(
    message: string,
    /** `error`: the server reported an error; `cut`: the stream ended before its completion signal. */
    readonly kind: 'error' | 'cut',
    /** The partial content received before the failure (never to be used as an answer). */
    readonly partial: string,
  ) {
    super(message);
    this.name = 'ChatStreamError';
  }
}

/** The parts {@link readChatStream} yields while it reads: pieces of text, reasoning and tool calls. */
export type ChatDeltaPart = Exclude<ChatPart, { type: 'finish' }>;

interface Delta {
  content?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: unknown;
}

function errorText(value: string): string {
  return serverErrorMessageOfText(value) ?? 'the server reported an error without a message';
}

/**
 * Reads `body` to its completion signal, yielding each piece of text, reasoning and tool call as
 * it arrives; returns the whole reply. Stopping the iteration early cancels the body.
 * @throws ChatStreamError when the server reports an error or the stream ends early; the abort
 *   error of the request when it was cancelled.
 */
export async function* readChatStream(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<ChatDeltaPart, ChatStreamReply> {
  const reply: ChatStreamReply = { text: '', thinking: '', toolCalls: [] };
  const calls: Array<{ name: string; arguments: string }> = [];
  // Parts of the events one `feed` parsed, yielded after it (the parser reports events by callback).
  const pending: ChatDeltaPart[] = [];
  let done = false;
  let failure: string | undefined;

  const onChunk = (chunk: Record<string, unknown>) => {
    const usage = chunk.usage;
    if (usage && typeof usage === 'object') reply.usage = usage as StreamUsage;
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    const choice = choices.find((c) => (c as { index?: unknown })?.index === 0 || choices.length === 1) as
      | { delta?: Delta; message?: Delta; finish_reason?: unknown }
      | undefined;
    if (!choice) return;
    const delta = choice.delta ?? choice.message ?? {};
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '') {
      reply.thinking += reasoning;
      pending.push({ type: 'reasoning-delta', text: reasoning });
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      reply.text += delta.content;
      pending.push({ type: 'text-delta', text: delta.content });
    }
    if (Array.isArray(delta.tool_calls)) {
      for (const [position, raw] of delta.tool_calls.entries()) {
        const call = raw as { index?: unknown; function?: { name?: unknown; arguments?: unknown } };
        const index = typeof call.index === 'number' ? call.index : position;
        calls[index] ??= { name: '', arguments: '' };
        const name = typeof call.function?.name === 'string' ? call.function.name : '';
        const args = typeof call.function?.arguments === 'string' ? call.function.arguments : '';
        calls[index].name += name;
        calls[index].arguments += args;
        if (name !== '' || args !== '')
          pending.push({ type: 'tool-call-delta', index, name, arguments: args });
      }
    }
    if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') {
      reply.finish = choice.finish_reason;
    }
  };

  const parser = createParser({
    onEvent(event: EventSourceMessage) {
      if (done || failure) return;
      const data = event.data.trim();
      if (data === '[DONE]') {
        done = true;
        return;
      }
      if (event.event === 'error') {
        failure = errorText(data);
        return;
      }
      if (data === '') return;
      let chunk: unknown;
      try {
        chunk = JSON.parse(data);
      } catch {
        failure = `an unreadable event: ${data.slice(0, 120)}`;
        return;
      }
      if (!chunk || typeof chunk !== 'object') return;
      if (
        (chunk as { error?: unknown }).error !== undefined &&
        (chunk as { error?: unknown }).error !== null
      ) {
        failure = serverErrorMessage(chunk) ?? 'the server reported an error without a message';
        return;
      }
      onChunk(chunk as Record<string, unknown>);
    },
    onError(error: ParseError) {
      // llama.cpp (before late 2024) ended a failed stream with an `error: {…}` field line.
      if (error.type === 'unknown-field' && error.field === 'error' && !failure && !done) {
        failure = errorText(error.value ?? '');
      }
    },
  });

  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { value, done: ended } = await reader.read().catch((error: unknown) => {
        // The connection dropped mid-reply (a crashed or restarted server): a cut reply, not an
        // unreachable server. An abort is the caller's own and passes unchanged.
        if ((error as { name?: unknown } | null)?.name === 'AbortError') throw error;
        throw new ChatStreamError(
          `the connection closed mid-reply (${closeReason(error)})`,
          'cut',
          reply.text,
        );
      });
      if (ended) break;
      parser.feed(decoder.decode(value, { stream: true }));
      if (failure) break;
      yield* pending.splice(0);
      if (done) break;
      // The reply is whole once it has a finish_reason and, when the server counts them, usage:
      // what may follow is `[DONE]` only.
      if (reply.finish && reply.usage) break;
    }
    if (!failure && !done) {
      parser.feed('\n\n'); // a last event without its blank line still counts
      if (!failure) yield* pending.splice(0);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  reply.toolCalls = calls.filter((c) => c && (c.name !== '' || c.arguments !== ''));
  if (failure) throw new ChatStreamError(failure, 'error', reply.text);
  if (!done && !reply.finish) {
    throw new ChatStreamError(
      'the reply stream ended before the server said it was complete (no finish_reason, no [DONE])',
      'cut',
      reply.text,
    );
  }
  return reply;
}
