/**
 * The OpenAI-compatible routes of the scripted server (`/v1/models`, `/v1/chat/completions`,
 * `/v1/embeddings`), shaped like the OpenAI API so the real `openai` client runs against them:
 * streamed replies as server-sent events (`data: {…}\n\n` … `data: [DONE]\n\n`) with
 * `finish_reason` and, with `stream_options.include_usage`, a last chunk carrying `usage`.
 */
import type { ServerResponse } from 'node:http';
import { estimateTokens } from '../../../src/models/tokens.js';
import type { ScriptedModel } from './catalog.js';
import { splitIntoChunks } from './completion.js';
import { sendJson, sleep, writeRaw } from './http-util.js';
import type { ScriptedChatRequest, ScriptedMessage, ScriptedReplyObject } from './types.js';

/** Sends an OpenAI-style error `{ "error": { message, type, code } }`. */
export function sendOpenAiError(res: ServerResponse, status: number, message: string, code?: string): void {
  const type = status >= 500 ? 'server_error' : status === 404 ? 'not_found_error' : 'invalid_request_error';
  sendJson(res, status, { error: { message, type, param: null, code: code ?? null } });
}

/** One `/v1/models` entry. `withContext` adds `context_length` (as LM Studio and OpenRouter-style servers report it). */
export function v1ModelEntry(model: ScriptedModel, created: number, withContext: boolean): object {
  return {
    id: model.name,
    object: 'model',
    created,
    owned_by: 'library',
    ...(withContext && model.kind === 'chat' ? { context_length: model.contextLength } : {}),
  };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
      )
      .join('');
  }
  return '';
}

/**
 * The handler's view of a `/v1/chat/completions` body: `max_tokens`/`max_completion_tokens`,
 * `temperature` and `seed` land in `options` (as `num_predict`, …, like Ollama's), a
 * `response_format` of type `json_schema` in `format` (its schema) and `json_object` as `'json'`.
 */
export function toV1ChatRequest(
  model: string,
  body: Record<string, unknown>,
  purpose: string | undefined,
): ScriptedChatRequest {
  const messages: ScriptedMessage[] = Array.isArray(body.messages)
    ? body.messages
        .filter((m): m is Record<string, unknown> => typeof m === 'object' && m !== null)
        .map((m) => ({ role: String(m.role ?? ''), content: contentText(m.content) }))
    : [];
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const options: Record<string, unknown> = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === 'number') options.num_predict = maxTokens;
  if (typeof body.temperature === 'number') options.temperature = body.temperature;
  if (typeof body.seed === 'number') options.seed = body.seed;
  let format: unknown;
  const responseFormat = body.response_format as Record<string, unknown> | undefined;
  if (responseFormat && typeof responseFormat === 'object') {
    if (responseFormat.type === 'json_schema') {
      format = (responseFormat.json_schema as { schema?: unknown } | undefined)?.schema ?? 'json';
    } else if (responseFormat.type === 'json_object') {
      format = 'json';
    }
  }
  return {
    endpoint: 'v1-chat',
    model,
    messages,
    lastUserMessage: lastUser?.content ?? '',
    ...(format === undefined ? {} : { format }),
    ...(responseFormat === undefined ? {} : { responseFormat }),
    options,
    stream: body.stream === true,
    ...(purpose ? { purpose } : {}),
  };
}

/**
 * Writes the reply for one `/v1/chat/completions` request: one `chat.completion` object, or an
 * SSE stream of `chat.completion.chunk`s. `includeUsage` adds the usage-only last chunk.
 */
export async function writeV1Completion(
  res: ServerResponse,
  request: ScriptedChatRequest,
  reply: ScriptedReplyObject,
  includeUsage: boolean,
  closed: AbortSignal,
): Promise<void> {
  await sleep(reply.delayMs ?? 0, closed);
  if (closed.aborted) return;
  if (reply.raw) return writeRaw(res, reply.raw, 'text/event-stream; charset=utf-8', closed);
  const status = reply.status ?? (reply.error ? 500 : 200);
  if (status >= 400) return sendOpenAiError(res, status, reply.error ?? `scripted server: HTTP ${status}`);

  const text = reply.text ?? '';
  const chunks = splitIntoChunks(text);
  const promptTokens = request.messages.reduce((sum, m) => sum + estimateTokens(m.content) + 4, 0);
  const numPredict =
    typeof request.options?.num_predict === 'number' ? request.options.num_predict : undefined;
  const finishReason = reply.doneReason ?? 'stop';
  const completionTokens =
    finishReason === 'length' && numPredict ? numPredict : Math.max(chunks.length, estimateTokens(text));
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  const id = `chatcmpl-${Math.random().toString(36).slice(2, 12)}`;
  const created = Math.floor(Date.now() / 1000);
  const base = { id, created, model: request.model, system_fingerprint: 'scripted' };

  if (!request.stream) {
    if (reply.error) return sendOpenAiError(res, 500, reply.error);
    return sendJson(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: text, refusal: null },
          logprobs: null,
          finish_reason: finishReason,
        },
      ],
      usage,
    });
  }

  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
  });
  const send = (value: unknown): boolean => {
    if (res.destroyed || res.writableEnded) return false;
    res.write(`data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`);
    return true;
  };
  const chunk = (delta: object, finish: string | null) => ({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  if (!send(chunk({ role: 'assistant', content: '' }, null))) return;
  for (const [index, content] of chunks.entries()) {
    if (index > 0) await sleep(reply.chunkDelayMs ?? 0, closed);
    if (closed.aborted || !send(chunk({ content }, null))) return;
  }
  if (reply.error) {
    send({ error: { message: reply.error, type: 'server_error', param: null, code: null } });
    res.end();
    return;
  }
  send(chunk({}, finishReason));
  if (includeUsage) send({ ...base, object: 'chat.completion.chunk', choices: [], usage });
  send('[DONE]');
  res.end();
}

/** `/v1/embeddings` data entries; `base64` packs each vector as little-endian float32, as OpenAI does. */
export function v1EmbeddingData(vectors: number[][], encoding: 'float' | 'base64'): object[] {
  return vectors.map((vector, index) => ({
    object: 'embedding',
    index,
    embedding:
      encoding === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
  }));
}
