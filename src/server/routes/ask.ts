/**
 * `POST /api/ask`: one question through the pipeline. Streams the steps as Server-Sent Events
 * (default, or `Accept: text/event-stream`), or returns one JSON document with
 * `Accept: application/json`. SSE events, in order: `classified`, `recalled`, `schema`, `sql`,
 * `refused`/`retried`, `rows`, `answer_token`…, `answer`, `remembered`, `applied`, `chart`, `done`
 * (or `reply` for a message answered without SQL; `fallback` before `sql` when a saved example or
 * a rule answered without the model); a failure ends the stream with `error`.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { AskProgress, type AskRequest, askDocument, askSteps, askToEnd } from '../../app/ask.js';
import { NO_STATEMENT, policyOrRecordedRefusal } from '../../audit/policy-refusal.js';
import { checkQuestion } from '../../core/limits.js';
import type { Step } from '../../core/steps.js';
import { type AppEnv, errorBody } from '../context.js';
import type { ServerDeps } from '../deps.js';
import { streamJsonResponse } from '../json-stream.js';
import { AskBodySchema, AskResponseSchema, errorResponses } from '../schemas.js';
import { TIME_ZONE_HEADER, timeZoneOf } from './shared.js';

const route = createRoute({
  method: 'post',
  path: '/api/ask',
  summary: 'Ask a question (SSE stream of steps, or one JSON document)',
  request: { body: { required: true, content: { 'application/json': { schema: AskBodySchema } } } },
  responses: {
    200: {
      description: 'the steps as Server-Sent Events, or the outcome as JSON',
      content: {
        'text/event-stream': { schema: z.string() },
        'application/json': { schema: AskResponseSchema },
      },
    },
    ...errorResponses,
    422: {
      description: 'refused by the SQL guard or a database error',
      content: errorResponses[400].content,
    },
    502: { description: 'unusable model output', content: errorResponses[400].content },
    503: { description: 'model or database unavailable', content: errorResponses[400].content },
  },
});

/**
 * The SSE events of one step: `done` becomes `applied`, `chart`, then `done` without the rows
 * (they came with `rows`); other steps keep their type as the event name.
 */
export function eventsOf(step: Step): { event: string; data: unknown }[] {
  switch (step.type) {
    case 'rows':
      return [
        { event: 'rows', data: { ...step.result, columnTypes: step.result.columns.map((c) => c.type) } },
      ];
    case 'done': {
      const doc = askDocument(step.outcome);
      const { rows: _rows, ...withoutRows } = doc;
      // A message answered without SQL (an instruction, a memory command) has no chips or chart.
      if (doc.sql === null && step.outcome.result === null) return [{ event: 'done', data: withoutRows }];
      return [
        // `memories`: applied (verified in the SQL); `recalled`: shown to the model, not verified.
        { event: 'applied', data: { memories: doc.appliedMemories, recalled: doc.recalledMemories } },
        { event: 'chart', data: doc.chart },
        { event: 'done', data: withoutRows },
      ];
    }
    default: {
      const { type, ...data } = step;
      return [{ event: type, data }];
    }
  }
}

/** Registers `POST /api/ask`. */
export function registerAsk(app: OpenAPIHono<AppEnv>, deps: ServerDeps): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    const principal = c.get('principal');
    const accept = c.req.header('accept') ?? '';
    const onStatement = deps.audit?.listener({
      user: principal.user,
      frontEnd: 'http',
      question: body.question,
    });
    // A policy that cannot be decided (an invalid file) refuses the question: recorded too.
    const policyFor = deps.policyFor;
    const policy = policyFor
      ? await policyOrRecordedRefusal(() => policyFor(principal), onStatement, {
          sql: NO_STATEMENT,
          origin: 'model',
        })
      : undefined;
    const request: AskRequest = {
      user: principal.user,
      ...(principal.team !== undefined ? { team: principal.team } : {}),
      question: body.question,
      ...(body.conversationId !== undefined ? { conversationId: body.conversationId } : {}),
      ...(body.without !== undefined ? { without: body.without } : {}),
      ...(body.skipAnswer ? { skipAnswer: true } : {}),
      // The browser's zone: days a message names ("until Friday") are the user's days.
      ...timeZoneOf(c.req.header(TIME_ZONE_HEADER)),
      ...(policy ? { policy } : {}),
      ...(onStatement ? { onStatement } : {}),
    };
    if (accept.includes('application/json') && !accept.includes('text/event-stream')) {
      const controller = new AbortController();
      c.req.raw.signal?.addEventListener('abort', () => controller.abort());
      const end = await askToEnd(() => deps.assistant(), { ...request, signal: controller.signal });
      if (end.ok) {
        // The published schema describes exactly the ask document (checked here at compile time).
        const doc: z.infer<typeof AskResponseSchema> = end.doc;
        // Streamed row by row: a result near the byte budget is never one giant string.
        return streamJsonResponse(doc);
      }
      // A failed question: the same document as `ask --json` and the MCP tool give, with the
      // error's status (its error part masked as every API error is).
      const { body: errBody, status } = errorBody(end.error);
      c.set('errorCode', errBody.error.code);
      return streamJsonResponse({ ...end.doc, error: errBody.error }, status);
    }
    // Refused before anything opens, worded as on every surface.
    checkQuestion(body.question);
    const assistant = await deps.assistant();
    const response = streamSSE(c, async (stream) => {
      const controller = new AbortController();
      // Closing the request (or the stream) cancels the running statement on the database.
      stream.onAbort(() => controller.abort());
      c.req.raw.signal?.addEventListener('abort', () => controller.abort(), { once: true });
      if (c.req.raw.signal?.aborted) controller.abort();
      let id = 0;
      const progress = new AskProgress(request.question);
      try {
        for await (const step of askSteps(assistant, { ...request, signal: controller.signal })) {
          progress.see(step);
          for (const e of eventsOf(step)) {
            await stream.writeSSE({ event: e.event, data: JSON.stringify(e.data), id: String(id++) });
          }
        }
      } catch (error) {
        if (controller.signal.aborted) return;
        // The same failure document as the JSON answer, without the rows (they came with `rows`).
        const { body: errBody } = errorBody(error);
        c.set('errorCode', errBody.error.code);
        const { rows: _rows, ...failed } = progress.failed(error);
        const data = JSON.stringify({ ...failed, error: errBody.error });
        await stream.writeSSE({ event: 'error', data, id: String(id++) });
      }
    });
    // A reverse proxy must pass every event on at once (nginx: X-Accel-Buffering), unchanged.
    response.headers.set('Cache-Control', 'no-cache, no-transform');
    response.headers.set('X-Accel-Buffering', 'no');
    return response;
  });
}
