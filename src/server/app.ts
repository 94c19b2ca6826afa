/**
 * The HTTP API: a Hono app with zod-validated routes described at `/openapi.json`,
 * token or local authentication, one error shape `{error: {code, message}}` with the status from
 * `ERROR_TABLE`, and the web UI's static files. Test it in-process with `app.request()`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { packageVersion } from '../config/version.js';
import { SqlrecallError } from '../core/errors.js';
import { sanitizeLogText } from '../core/log.js';
import { DEFAULT_MAX_REQUESTS_PER_USER, perUserConcurrency } from './concurrency.js';
import { type AppEnv, apiError, sendError } from './context.js';
import type { ServerDeps } from './deps.js';
import { importLimits } from './import-limits.js';
import { refuseCrossSite } from './origin.js';
import { registerAsk } from './routes/ask.js';
import { registerAudit } from './routes/audit.js';
import { registerConversations } from './routes/conversations.js';
import { registerMemories } from './routes/memories.js';
import { registerPolicy } from './routes/policy.js';
import { registerSchema } from './routes/schema.js';
import { registerSql } from './routes/sql.js';
import { registerSystem } from './routes/system.js';
import { serveWeb } from './static.js';

/** Largest request body (bytes) except imports: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Largest import document (bytes): see {@link importLimits}. */
export { MAX_IMPORT_BYTES } from './import-limits.js';

/** Routes that need no sign-in. */
const PUBLIC_API = new Set(['/api/health']);

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The host name a request was sent to (the Host header, as the request URL carries it). */
function hostName(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
}

/** Sets `principal` from the token (multi-user) or the configured user (local mode). */
function authenticate(deps: ServerDeps): MiddlewareHandler<AppEnv> {
  const allowed = new Set([...LOOPBACK_HOSTS, ...(deps.allowedHosts ?? []).map((h) => h.toLowerCase())]);
  return async (c, next) => {
    if (PUBLIC_API.has(c.req.path)) return next();
    const auth = deps.auth;
    if (auth.mode === 'local') {
      // Local mode has no login: refuse other Host names so a web page cannot reach the API by
      // DNS rebinding.
      if (!allowed.has(hostName(c.req.url)))
        throw apiError('forbidden', 'This local server only answers requests for localhost.');
      // The local user runs the server on their own machine: its administrator.
      c.set('principal', {
        user: auth.user,
        admin: true,
        ...(auth.team ? { team: auth.team, teamRole: 'admin' } : {}),
      });
      return next();
    }
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match)
      throw new SqlrecallError('unauthorized', 'Sign in with a personal access token.', {
        details: { hint: 'An admin creates one with `sqlrecall users add NAME`.' },
      });
    const principal = await auth.users.authenticate(match[1]!);
    if (!principal) throw apiError('unauthorized', 'This access token is not valid.');
    c.set('principal', principal);
    return next();
  };
}

/**
 * Access log: method, path (no query string), status, time, user. Never headers or bodies. Every
 * string field passes {@link sanitizeLogText} (control characters escaped, secrets masked), so a
 * path with `%0a` or `%1b` cannot forge a line or a terminal escape in whatever sink `deps.log` is.
 */
function accessLog(deps: ServerDeps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    if (!deps.log) return;
    const principal = c.get('principal');
    const code = c.get('errorCode');
    deps.log({
      method: sanitizeLogText(c.req.method),
      path: sanitizeLogText(c.req.path),
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      user: principal?.user === undefined ? null : sanitizeLogText(principal.user),
      ...(code ? { code: sanitizeLogText(code) } : {}),
    });
  };
}

const securityHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  c.res.headers.set('X-Content-Type-Options', 'nosniff');
  c.res.headers.set('Referrer-Policy', 'no-referrer');
  c.res.headers.set('X-Frame-Options', 'DENY');
  c.res.headers.set(
    'Content-Security-Policy',
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
  );
};

/**
 * Every API body is JSON: a request that carries a body of another media type (`text/plain`, a
 * form) is 415 `unsupported_media_type`, before sign-in and before the body is read.
 */
const jsonBodiesOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  const hasBody =
    c.req.raw.body !== null &&
    (c.req.header('content-length') ?? '') !== '0' &&
    !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(c.req.method);
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (hasBody && type !== 'application/json' && !/^application\/[\w.+-]*\+json$/.test(type))
    throw apiError(
      'unsupported_media_type',
      `The request body must be JSON (Content-Type: application/json), not ${type ? sanitizeLogText(type.slice(0, 100)) : 'untyped'}.`,
    );
  await next();
};

function limit(maxSize: number): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw apiError('too_large', `The request body is larger than ${Math.round(maxSize / 1024)} KiB.`);
    },
  });
}

/** The default folder of the built web UI: `<package>/dist/web` (from src/server or dist/server). */
export function defaultWebRoot(): string {
  return resolve(new URL('../../dist/web', import.meta.url).pathname);
}

/** Builds the app. */
export function createApp(deps: ServerDeps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (result.success) return;
      const issue = result.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      return sendError(
        c,
        apiError('usage', `Invalid request: ${where}${issue?.message ?? 'invalid input'}.`),
      );
    },
  });
  app.use('*', accessLog(deps), securityHeaders);
  // Local mode has no login: refuse state-changing requests from foreign origins (CSRF), before
  // any body is read.
  if (deps.auth.mode === 'local') app.use('/api/*', refuseCrossSite());
  app.use('/api/*', async (c, next) => {
    if (c.req.path === '/api/memories/import') return next();
    return limit(MAX_BODY_BYTES)(c, next);
  });
  app.use('/api/*', jsonBodiesOnly);
  app.use('/api/*', authenticate(deps));
  // Imports: size, nesting, counts and text sizes checked after sign-in and before any work.
  app.use('/api/memories/import', importLimits());
  // Statements and questions: a bounded number per user at once (429 past it).
  const concurrency = perUserConcurrency(deps.maxRequestsPerUser ?? DEFAULT_MAX_REQUESTS_PER_USER);
  app.use('/api/sql', concurrency);
  app.use('/api/ask', concurrency);

  registerSystem(app, deps);
  registerAsk(app, deps);
  registerMemories(app, deps);
  registerConversations(app, deps);
  registerSchema(app, deps);
  registerSql(app, deps);
  registerAudit(app, deps);
  registerPolicy(app, deps);

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'sqlrecall',
      version: packageVersion(),
      description:
        'Ask your database questions in plain language, with per-user memory. Multi-user mode: `Authorization: Bearer <token>` (from `sqlrecall users add NAME`).',
    },
  });

  const webRoot = deps.webRoot;
  const hasWeb = webRoot !== undefined && existsSync(resolve(webRoot, 'index.html'));
  app.notFound(async (c) => {
    if (hasWeb && !c.req.path.startsWith('/api/')) {
      const served = await serveWeb(c, resolve(webRoot!));
      if (served) return served;
    }
    return sendError(
      c,
      apiError('not_found', `No route ${c.req.method} ${sanitizeLogText(c.req.path.slice(0, 200))}.`),
    );
  });

  app.onError((error, c) => {
    if (error instanceof HTTPException) {
      const status = error.status;
      const code =
        status === 413
          ? 'too_large'
          : status === 401
            ? 'unauthorized'
            : status === 404
              ? 'not_found'
              : 'usage';
      const message =
        status === 400 ? `Invalid request: ${error.message.replace(/\.?$/, '')}.` : error.message;
      return sendError(c, apiError(code, message));
    }
    return sendError(c, error);
  });
  return app;
}
