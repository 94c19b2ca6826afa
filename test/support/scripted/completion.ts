/**
 * `/api/chat` and `/api/generate` of the scripted server: streamed NDJSON (the default) or one JSON
 * object (`stream: false`), with the same fields and final statistics as Ollama.
 */
import type { ServerResponse } from 'node:http';
import { estimateTokens } from '../../../src/models/tokens.js';
import { sendError, sendJson, sleep, startNdjson, writeLine, writeRaw } from './http-util.js';
import type { ScriptedChatRequest, ScriptedMessage, ScriptedReply, ScriptedReplyObject } from './types.js';

/** Most chunks a reply is streamed in; longer replies put several words in a chunk. */
const MAX_CHUNKS = 64;

const PURPOSE_LINE = /^[\s<![#-]*purpose\s*[:=]\s*([A-Za-z][\w.-]*)/im;

/** Default purpose recognition: a `purpose: <label>` line in a system message (lower-cased label). */
export function defaultPurposeOf(messages: ScriptedMessage[]): string | undefined {
  for (const message of messages) {
    if (message.role !== 'system') continue;
    const match = PURPOSE_LINE.exec(message.content);
    if (match) return match[1]!.toLowerCase();
  }
  return undefined;
}

function asMessages(value: unknown): ScriptedMessage[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((m): m is Record<string, unknown> => typeof m === 'object' && m !== null)
    .map((m) => ({ role: String(m.role ?? ''), content: typeof m.content === 'string' ? m.content : '' }));
}

/** Builds the handler's view of a chat or generate body. */
export function toChatRequest(
  endpoint: 'chat' | 'generate',
  model: string,
  body: Record<string, unknown>,
  purposeOf: (messages: ScriptedMessage[]) => string | undefined,
): ScriptedChatRequest {
  let messages: ScriptedMessage[];
  const request: Partial<ScriptedChatRequest> = {};
  if (endpoint === 'chat') {
    messages = asMessages(body.messages);
  } else {
    const prompt = typeof body.prompt === 'string' ? body.prompt : '';
    const system = typeof body.system === 'string' ? body.system : undefined;
    messages = [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content: prompt }];
    request.prompt = prompt;
    if (system !== undefined) request.system = system;
  }
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const options =
    typeof body.options === 'object' && body.options !== null
      ? (body.options as Record<string, unknown>)
      : undefined;
  const purpose = purposeOf(messages);
  return {
    endpoint,
    model,
    messages,
    lastUserMessage: lastUser?.content ?? '',
    ...request,
    ...(body.format === undefined ? {} : { format: body.format }),
    ...(options ? { options } : {}),
    stream: body.stream !== false,
    ...(typeof body.keep_alive === 'string' || typeof body.keep_alive === 'number'
      ? { keepAlive: body.keep_alive }
      : {}),
    ...(purpose ? { purpose } : {}),
  };
}

/** Splits text into word-sized pieces whose concatenation is the text (about one token each). */
export function splitIntoChunks(text: string): string[] {
  const pieces = text.match(/\S+\s*|\s+/g) ?? [];
  if (pieces.length <= MAX_CHUNKS) return pieces;
  const perChunk = Math.ceil(pieces.length / MAX_CHUNKS);
  const chunks: string[] = [];
  for (let i = 0; i < pieces.length; i += perChunk) chunks.push(pieces.slice(i, i + perChunk).join(''));
  return chunks;
}

/** Normalises a reply to its object form. */
export function toReplyObject(reply: ScriptedReply): ScriptedReplyObject {
  return typeof reply === 'string' ? { text: reply } : reply;
}

/**
 * Writes the reply for one chat/generate request. `closed` aborts when the client goes away; the
 * function then stops writing and returns.
 */
export async function writeCompletion(
  res: ServerResponse,
  request: ScriptedChatRequest,
  reply: ScriptedReplyObject,
  closed: AbortSignal,
): Promise<void> {
  const started = process.hrtime.bigint();
  await sleep(reply.delayMs ?? 0, closed);
  if (closed.aborted) return;
  if (reply.raw) return writeRaw(res, reply.raw, 'application/x-ndjson', closed);
  const status = reply.status ?? (reply.error ? 500 : 200);
  if (reply.error && status >= 400) return sendError(res, status, reply.error);
  if (status >= 400) return sendError(res, status, `scripted server: HTTP ${status}`);

  const text = reply.text ?? '';
  const chunks = splitIntoChunks(text);
  const promptTokens = request.messages.reduce((sum, m) => sum + estimateTokens(m.content) + 4, 0);
  const numPredict =
    typeof request.options?.num_predict === 'number' ? request.options.num_predict : undefined;
  const doneReason = reply.doneReason ?? 'stop';
  const evalCount =
    doneReason === 'length' && numPredict ? numPredict : Math.max(chunks.length, estimateTokens(text));
  const createdAt = () => new Date().toISOString();
  const piece = (content: string) =>
    request.endpoint === 'chat' ? { message: { role: 'assistant', content } } : { response: content };
  const final = () => {
    const totalNs = Number(process.hrtime.bigint() - started) + 1_000_000;
    return {
      model: request.model,
      created_at: createdAt(),
      ...piece(request.stream ? '' : text),
      done: true,
      done_reason: doneReason,
      ...(request.endpoint === 'generate' ? { context: [151644, 872, 198, 151645] } : {}),
      total_duration: totalNs,
      load_duration: 1_000_000,
      prompt_eval_count: promptTokens,
      prompt_eval_duration: Math.round(totalNs * 0.3),
      eval_count: evalCount,
      eval_duration: Math.round(totalNs * 0.6),
    };
  };

  if (!request.stream) {
    if (reply.error) return sendError(res, 500, reply.error);
    return sendJson(res, 200, final());
  }

  startNdjson(res);
  for (const [index, content] of chunks.entries()) {
    if (index > 0) await sleep(reply.chunkDelayMs ?? 0, closed);
    if (
      closed.aborted ||
      !writeLine(res, { model: request.model, created_at: createdAt(), ...piece(content), done: false })
    ) {
      return;
    }
  }
  if (reply.error) writeLine(res, { error: reply.error });
  else writeLine(res, final());
  res.end();
}
