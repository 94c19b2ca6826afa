/**
 * A scripted stand-in for Ollama: an HTTP server on 127.0.0.1 that speaks the real Ollama API
 * (`/api/chat`, `/api/generate`, `/api/embed`, `/api/tags`, `/api/show`, `/api/version`,
 * `/api/pull`) and the OpenAI-compatible one (`/v1/models`, `/v1/chat/completions`,
 * `/v1/embeddings`), so the real `ollama` and `openai` client code runs in tests while the replies
 * are programmed. Chat requests are routed by the `X-Sqlrecall-Purpose` header first, by content
 * as a fallback.
 *
 * @example
 * const server = await startScriptedOllama({ chat: (req) => req.purpose === 'sql' ? 'SELECT 1' : 'One.' });
 * server.enqueue('first reply', { text: 'cut', doneReason: 'length' });
 * const model = createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b' });
 * // … server.chatRequests()[0].options?.num_ctx …
 * await server.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { normalizeModelName } from '../../../src/core/model-names.js';
import { PURPOSE_HEADER } from '../../../src/models/purpose.js';
import {
  resolveModel,
  type ScriptedModel,
  type ScriptedModelSpec,
  showResponse,
  tagsEntry,
} from './catalog.js';
import { defaultPurposeOf, toChatRequest, toReplyObject, writeCompletion } from './completion.js';
import { DEFAULT_EMBEDDING_DIMENSIONS, hashEmbedding } from './embedding.js';
import { readBody, sendError, sendJson, sleep, startNdjson, writeLine } from './http-util.js';
import {
  sendOpenAiError,
  toV1ChatRequest,
  v1EmbeddingData,
  v1ModelEntry,
  writeV1Completion,
} from './openai.js';
import type {
  RecordedRequest,
  ScriptedEndpoint,
  ScriptedFailure,
  ScriptedOllama,
  ScriptedOptions,
  ScriptedReply,
} from './types.js';

export type { ScriptedModelSpec } from './catalog.js';
export type * from './types.js';

/**
 * Prompt tokens the scripted server reports for embedding inputs: a fixed ⌈characters / 4⌉ + 2
 * per text (a stand-in counter, not `estimateTokens`: tests only need a stable positive number).
 */
function promptTokens(texts: readonly string[]): number {
  return texts.reduce((sum, t) => sum + Math.ceil(t.length / 4) + 2, 0);
}
/** Models installed when `options.models` is not given. */
export const DEFAULT_SCRIPTED_MODELS: readonly string[] = ['qwen2.5-coder:7b', 'all-minilm'];

/** The error of a chat/generate request nothing was programmed for (HTTP 500), so tests notice. */
export const NO_REPLY_ERROR = 'scripted server: no reply programmed';

const ROUTES: Readonly<Record<string, ScriptedEndpoint>> = {
  'POST /api/chat': 'chat',
  'POST /api/generate': 'generate',
  'POST /api/embed': 'embed',
  'GET /api/tags': 'tags',
  'POST /api/show': 'show',
  'GET /api/version': 'version',
  'POST /api/pull': 'pull',
  'GET /v1/models': 'v1-models',
  'POST /v1/chat/completions': 'v1-chat',
  'POST /v1/embeddings': 'v1-embeddings',
};

const notFound = (name: string) => `model "${name}" not found, try pulling it first`;

/** Starts a scripted Ollama server on 127.0.0.1 (ephemeral port unless `options.port`). */
export async function startScriptedOllama(options: ScriptedOptions = {}): Promise<ScriptedOllama> {
  let specs: Array<string | ScriptedModelSpec> = [...(options.models ?? DEFAULT_SCRIPTED_MODELS)];
  let embeddingDimensions = options.embeddingDimensions ?? DEFAULT_EMBEDDING_DIMENSIONS;
  const purposeOf = options.purposeOf ?? defaultPurposeOf;
  let rejectResponseFormat = options.rejectResponseFormat ?? false;
  const requests: RecordedRequest[] = [];
  const queue: ScriptedReply[] = [];
  const failures = new Map<ScriptedEndpoint, ScriptedFailure[]>();
  const startedAt = new Date().toISOString();

  const installed = (): ScriptedModel[] => specs.map((spec) => resolveModel(spec, embeddingDimensions));
  const findModel = (name: unknown): ScriptedModel | undefined =>
    typeof name === 'string' && name.trim() !== ''
      ? installed().find((m) => m.name === normalizeModelName(name))
      : undefined;

  function takeFailure(endpoint: ScriptedEndpoint): ScriptedFailure | undefined {
    const list = failures.get(endpoint);
    const failure = list?.[0];
    if (!failure) return undefined;
    const remaining = (failure.count ?? 1) - 1;
    if (remaining > 0) list[0] = { ...failure, count: remaining };
    else list.shift();
    return failure;
  }

  async function nextReply(
    request: Parameters<NonNullable<ScriptedOptions['chat']>>[0],
  ): Promise<ScriptedReply> {
    if (queue.length > 0) return queue.shift()!;
    if (options.chat) return options.chat(request);
    return { status: 500, error: NO_REPLY_ERROR };
  }

  async function handleCompletion(
    endpoint: 'chat' | 'generate',
    body: Record<string, unknown>,
    res: ServerResponse,
    record: RecordedRequest,
    closed: AbortSignal,
  ): Promise<void> {
    const model = findModel(body.model);
    if (!model) return sendError(res, 404, notFound(String(body.model ?? '')));
    if (model.kind !== 'chat') return sendError(res, 400, `"${body.model}" does not support ${endpoint}`);
    const headerPurpose = record.headers[PURPOSE_HEADER];
    const request = toChatRequest(endpoint, String(body.model), body, (messages) =>
      headerPurpose ? headerPurpose.toLowerCase() : purposeOf(messages),
    );
    record.chat = request;
    let reply: ScriptedReply;
    try {
      reply = await nextReply(request);
    } catch (error) {
      return sendError(res, 500, `scripted server: reply handler failed: ${(error as Error).message}`);
    }
    await writeCompletion(res, request, toReplyObject(reply), closed);
  }

  async function handleV1Chat(
    body: Record<string, unknown>,
    res: ServerResponse,
    record: RecordedRequest,
    closed: AbortSignal,
  ): Promise<void> {
    const model = findModel(body.model);
    if (!model) return sendOpenAiError(res, 404, notFound(String(body.model ?? '')), 'model_not_found');
    if (model.kind !== 'chat')
      return sendOpenAiError(res, 400, `"${body.model}" does not support chat`, 'invalid_model');
    if (rejectResponseFormat && body.response_format !== undefined) {
      return sendOpenAiError(res, 400, "'response_format' is not supported by this server", 'unsupported');
    }
    const headerPurpose = record.headers[PURPOSE_HEADER];
    const messages = toV1ChatRequest(String(body.model), body, undefined).messages;
    const purpose = headerPurpose ? headerPurpose.toLowerCase() : purposeOf(messages);
    const request = toV1ChatRequest(String(body.model), body, purpose);
    record.chat = request;
    let reply: ScriptedReply;
    try {
      reply = await nextReply(request);
    } catch (error) {
      return sendOpenAiError(res, 500, `scripted server: reply handler failed: ${(error as Error).message}`);
    }
    const streamOptions = body.stream_options as { include_usage?: unknown } | undefined;
    await writeV1Completion(
      res,
      request,
      toReplyObject(reply),
      streamOptions?.include_usage === true,
      closed,
    );
  }

  function handleV1Embeddings(body: Record<string, unknown>, res: ServerResponse): void {
    const model = findModel(body.model);
    if (!model) {
      sendOpenAiError(res, 404, notFound(String(body.model ?? '')), 'model_not_found');
      return;
    }
    const input = body.input;
    const texts = typeof input === 'string' ? [input] : input;
    if (!Array.isArray(texts) || !texts.every((t) => typeof t === 'string')) {
      sendOpenAiError(res, 400, "'input' must be a string or a list of strings");
      return;
    }
    const embedOne = options.embed ?? ((text: string) => hashEmbedding(text, model.embeddingLength));
    const tokens = promptTokens(texts);
    sendJson(res, 200, {
      object: 'list',
      data: v1EmbeddingData(
        texts.map((text) => embedOne(text)),
        body.encoding_format === 'base64' && options.embeddingEncoding !== 'float' ? 'base64' : 'float',
      ),
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  function handleEmbed(body: Record<string, unknown>, res: ServerResponse): void {
    const model = findModel(body.model);
    if (!model) {
      sendError(res, 404, notFound(String(body.model ?? '')));
      return;
    }
    const input = body.input;
    const texts = typeof input === 'string' ? [input] : input;
    if (!Array.isArray(texts) || !texts.every((t) => typeof t === 'string')) {
      sendError(res, 400, 'invalid input type');
      return;
    }
    const embedOne = options.embed ?? ((text: string) => hashEmbedding(text, model.embeddingLength));
    sendJson(res, 200, {
      model: body.model,
      embeddings: texts.map((text) => embedOne(text)),
      total_duration: 1_000_000 * (1 + texts.length),
      load_duration: 500_000,
      prompt_eval_count: promptTokens(texts),
    });
  }

  async function handlePull(
    body: Record<string, unknown>,
    res: ServerResponse,
    closed: AbortSignal,
  ): Promise<void> {
    const raw = body.model ?? body.name;
    if (typeof raw !== 'string' || raw.trim() === '') return sendError(res, 400, 'model is required');
    const name = normalizeModelName(raw);
    const known = !options.registry || options.registry.some((r) => normalizeModelName(r) === name);
    const stream = body.stream !== false;
    if (!known) {
      const error = 'pull model manifest: file does not exist';
      if (!stream) return sendError(res, 500, error);
      startNdjson(res);
      writeLine(res, { status: 'pulling manifest' });
      writeLine(res, { error });
      res.end();
      return;
    }
    const model = resolveModel(name, embeddingDimensions);
    if (!installed().some((m) => m.name === name)) specs = [...specs, name];
    if (!stream) return sendJson(res, 200, { status: 'success' });
    startNdjson(res);
    const digest = `sha256:${model.digest}`;
    const events: object[] = [{ status: 'pulling manifest' }];
    for (const fraction of [0, 0.25, 0.5, 0.75, 1]) {
      const completed = Math.round(model.sizeBytes * fraction);
      events.push({
        status: `pulling ${model.digest.slice(0, 12)}`,
        digest,
        total: model.sizeBytes,
        completed,
      });
    }
    events.push({ status: 'verifying sha256 digest' }, { status: 'writing manifest' }, { status: 'success' });
    for (const event of events) {
      await sleep(1, closed);
      if (closed.aborted || !writeLine(res, event)) return;
    }
    res.end();
  }

  async function route(
    req: IncomingMessage,
    res: ServerResponse,
    closed: AbortSignal,
    arrivedAt: number,
  ): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const method = req.method ?? 'GET';
    const endpoint = ROUTES[`${method} ${path}`] ?? 'other';
    const text = method === 'GET' || method === 'HEAD' ? '' : await readBody(req);
    let body: unknown;
    let bodyError: string | undefined;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch (error) {
        body = text;
        bodyError = `invalid character in request body: ${(error as Error).message}`;
      }
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(', ') : (value ?? ''),
      ]),
    );
    const record: RecordedRequest = {
      endpoint,
      method,
      path,
      body,
      headers,
      time: Date.now(),
      aborted: false,
    };
    requests.push(record);
    closed.addEventListener('abort', () => {
      record.aborted = true;
    });
    if (options.onResponseEnd) {
      const onEnd = options.onResponseEnd;
      res.once('close', () => onEnd(record, arrivedAt, performance.now()));
    }

    const extra = options.routes?.[`${method} ${path}`];
    if (extra) {
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = text;
      }
      const answer = extra(parsed);
      return sendJson(res, answer.status ?? 200, answer.body);
    }
    if (endpoint === 'other') {
      if (method === 'GET' && path === '/') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('Ollama is running');
        return;
      }
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('404 page not found');
      return;
    }
    const v1 = endpoint.startsWith('v1-');
    const fail = v1 ? sendOpenAiError : sendError;
    const failure = takeFailure(endpoint);
    if (failure) return fail(res, failure.status ?? 500, failure.error);
    if (bodyError) return fail(res, 400, bodyError);
    const fields =
      typeof body === 'object' && body !== null && !Array.isArray(body)
        ? (body as Record<string, unknown>)
        : {};
    if (method === 'POST' && body === undefined) return fail(res, 400, 'missing request body');

    switch (endpoint) {
      case 'chat':
      case 'generate':
        return handleCompletion(endpoint, fields, res, record, closed);
      case 'embed':
        return handleEmbed(fields, res);
      case 'tags':
        return sendJson(res, 200, { models: installed().map((m) => tagsEntry(m, startedAt)) });
      case 'show': {
        const model = findModel(fields.model ?? fields.name);
        if (!model) return sendError(res, 404, notFound(String(fields.model ?? fields.name ?? '')));
        return sendJson(res, 200, showResponse(model, startedAt));
      }
      case 'version':
        return sendJson(res, 200, { version: options.version ?? '0.12.6' });
      case 'pull':
        return handlePull(fields, res, closed);
      case 'v1-models': {
        const created = Math.floor(Date.parse(startedAt) / 1000);
        const withContext = options.reportContextLength ?? true;
        return sendJson(res, 200, {
          object: 'list',
          data: installed().map((m) => {
            const entry = v1ModelEntry(m, created, withContext) as Record<string, unknown>;
            return options.v1ModelEntry ? options.v1ModelEntry(m, entry) : entry;
          }),
        });
      }
      case 'v1-chat':
        return handleV1Chat(fields, res, record, closed);
      case 'v1-embeddings':
        return handleV1Embeddings(fields, res);
    }
  }

  const server = createServer((req, res) => {
    const arrivedAt = performance.now();
    const closed = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) closed.abort();
    });
    route(req, res, closed.signal, arrivedAt).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, `scripted server: ${(error as Error).message}`);
      else res.destroy();
    });
  });
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    chatRequests: () => requests.flatMap((r) => (r.chat ? [r.chat] : [])),
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    get pendingReplies() {
      return queue.length;
    },
    failNext(endpoint, failure) {
      failures.set(endpoint, [...(failures.get(endpoint) ?? []), failure]);
    },
    setModels(models) {
      specs = [...models];
    },
    models: () => installed().map((m) => m.name),
    setRejectResponseFormat(reject) {
      rejectResponseFormat = reject;
    },
    setEmbeddingDimensions(dimensions) {
      if (!Number.isInteger(dimensions) || dimensions < 1)
        throw new RangeError('dimensions must be a positive integer');
      embeddingDimensions = dimensions;
    },
    reset() {
      requests.length = 0;
      queue.length = 0;
      failures.clear();
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
