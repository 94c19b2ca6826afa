/**
 * Builders of raw reply transcripts (`ScriptedRawReply`) in the wire formats of real model servers,
 * for conformance tests: OpenAI-compatible server-sent events (llama.cpp `llama-server`, vLLM,
 * LM Studio, LocalAI, Ollama's `/v1`) and Ollama's native NDJSON. Each builder writes what that
 * family's server sends; the field names per family follow their public API descriptions and bug
 * reports, not captures of real servers.
 */
import type { ScriptedRawReply } from './types.js';

/** One `data:` event. */
export const sseData = (value: unknown): string =>
  `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`;

/** The OpenAI-compatible server families the conformance suite covers. */
export type OpenAiFamily = 'llama.cpp' | 'vllm' | 'lmstudio' | 'localai' | 'ollama-v1';

/** The delta field a family streams reasoning in. */
export function reasoningField(family: OpenAiFamily): 'reasoning_content' | 'reasoning' {
  return family === 'llama.cpp' || family === 'vllm' ? 'reasoning_content' : 'reasoning';
}

/** A `chat.completion.chunk` with one choice. */
export function chunk(delta: Record<string, unknown>, finish: string | null = null, extra: object = {}) {
  return {
    id: 'chatcmpl-transcript',
    object: 'chat.completion.chunk',
    created: 1_764_000_000,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  };
}

/** What a reply transcript holds. */
export interface SseReplyParts {
  /** Content pieces, streamed in order. */
  content?: string[];
  /** Reasoning pieces, streamed before the content. */
  reasoning?: string[];
  /** Structured tool-call deltas (OpenAI `tool_calls` entries). */
  toolCalls?: Array<Record<string, unknown>>;
  /** Whether the reply ends with finish_reason + usage + `[DONE]`; default true. */
  complete?: boolean;
  /** `finish_reason` of the last chunk; default `stop`. */
  finish?: string;
  /** Pause between events, in milliseconds. */
  delayMs?: number;
  /** What ends the transcript after its events (see `ScriptedRawReply.after`). */
  after?: ScriptedRawReply['after'];
  /** Events appended after the content (an error event, a trailing comment). */
  tail?: string[];
}

/** A streamed OpenAI-compatible reply in `family`'s shape. */
export function sseReply(family: OpenAiFamily, parts: SseReplyParts): ScriptedRawReply {
  const events: string[] = [sseData(chunk({ role: 'assistant', content: '' }))];
  const field = reasoningField(family);
  for (const piece of parts.reasoning ?? [])
    events.push(
      sseData(chunk(family === 'ollama-v1' ? { content: '', [field]: piece } : { [field]: piece })),
    );
  for (const piece of parts.content ?? []) events.push(sseData(chunk({ content: piece })));
  for (const call of parts.toolCalls ?? []) events.push(sseData(chunk({ tool_calls: [call] })));
  events.push(...(parts.tail ?? []));
  if (parts.complete ?? true) {
    const usage = { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 };
    // llama.cpp sends usage in the finishing chunk; the others in a separate last chunk.
    if (family === 'llama.cpp') events.push(sseData(chunk({}, parts.finish ?? 'stop', { usage })));
    else {
      events.push(sseData(chunk({}, parts.finish ?? 'stop')));
      events.push(
        sseData({ id: 'chatcmpl-transcript', object: 'chat.completion.chunk', choices: [], usage }),
      );
    }
    events.push(sseData('[DONE]'));
  }
  const delay = parts.delayMs ?? 0;
  const out: ScriptedRawReply['parts'] = [];
  for (const event of events) {
    if (delay > 0 && out.length > 0) out.push({ delayMs: delay });
    out.push(event);
  }
  return { parts: out, ...(parts.after ? { after: parts.after } : {}) };
}

/** The error event each family ends a failed stream with. */
export function sseErrorEvent(family: OpenAiFamily, message: string): string {
  switch (family) {
    case 'llama.cpp': // before late 2024: an `error:` field, not `data:`
      return `error: ${JSON.stringify({ code: 500, message, type: 'server_error' })}\n\n`;
    case 'vllm':
      return sseData({
        object: 'error',
        message,
        type: 'InternalServerError',
        code: 500,
        error: { message },
      });
    case 'lmstudio':
      return sseData({ error: message });
    case 'localai':
      return `event: error\ndata: ${JSON.stringify({ message })}\n\n`;
    case 'ollama-v1':
      return sseData({ error: { message, type: 'api_error', param: null, code: null } });
  }
}

/** An HTTP error response with `body` as JSON. */
export function jsonError(status: number, body: unknown): ScriptedRawReply {
  return { status, headers: { 'Content-Type': 'application/json' }, parts: [JSON.stringify(body)] };
}

/** What an Ollama native reply transcript holds. */
export interface NdjsonReplyParts {
  content?: string[];
  /** `message.thinking` pieces, streamed before the content. */
  thinking?: string[];
  /** Whether the last line has `done: true`; default true. */
  complete?: boolean;
  /** Lines appended after the content (an `{"error":…}` line). */
  tail?: unknown[];
  delayMs?: number;
  after?: ScriptedRawReply['after'];
}

/** A streamed Ollama `/api/chat` reply. */
export function ndjsonReply(parts: NdjsonReplyParts): ScriptedRawReply {
  const line = (value: unknown) => `${JSON.stringify(value)}\n`;
  const base = { model: 'm', created_at: '2026-01-01T00:00:00Z' };
  const lines: string[] = [];
  for (const thinking of parts.thinking ?? [])
    lines.push(line({ ...base, message: { role: 'assistant', content: '', thinking }, done: false }));
  for (const content of parts.content ?? [])
    lines.push(line({ ...base, message: { role: 'assistant', content }, done: false }));
  for (const extra of parts.tail ?? []) lines.push(line(extra));
  if (parts.complete ?? true)
    lines.push(
      line({
        ...base,
        message: { role: 'assistant', content: '' },
        done: true,
        done_reason: 'stop',
        prompt_eval_count: 50,
        eval_count: 10,
      }),
    );
  const out: ScriptedRawReply['parts'] = [];
  for (const l of lines) {
    if ((parts.delayMs ?? 0) > 0 && out.length > 0) out.push({ delayMs: parts.delayMs! });
    out.push(l);
  }
  return { parts: out, ...(parts.after ? { after: parts.after } : {}) };
}
