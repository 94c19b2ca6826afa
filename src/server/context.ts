/**
 * Request-scoped helpers of the HTTP API: the app's Hono environment, the error body, and the
 * memory scope a request may use (always derived from the authenticated principal).
 */
import type { Context } from 'hono';
import { type ErrorDocument, errorDocument } from '../app/error-document.js';
import type { Principal } from '../app/users.js';
import { ERROR_TABLE, type ErrorCode, SqlrecallError, toSqlrecallError } from '../core/errors.js';
import type { MemoryScope } from '../core/memory.js';

/** Hono environment of the app: the principal set by the auth middleware. */
export interface AppEnv {
  Variables: { principal: Principal; errorCode?: string };
}

/** `{error: {code, message, hint?, rule?}}`: the one {@link ErrorDocument} of every front end. */
export interface ErrorBody {
  error: ErrorDocument;
}

/** The error body of any thrown value (unexpected errors get a generic sentence). */
export function errorBody(error: unknown): { body: ErrorBody; status: number } {
  const err = toSqlrecallError(error);
  // Every API error passes the one redaction function (in errorDocument); an unexpected one says
  // nothing of the server's insides.
  const doc = errorDocument(err);
  return {
    body: { error: err.code === 'internal' ? { code: err.code, message: 'Unexpected server error.' } : doc },
    status: ERROR_TABLE[err.code].httpStatus,
  };
}

/** Sends the error response of `error`. */
export function sendError(c: Context<AppEnv>, error: unknown): Response {
  const { body, status } = errorBody(error);
  c.set('errorCode', body.error.code);
  return c.json(body, status as 400);
}

/** A {@link SqlrecallError} with `code`. */
export function apiError(code: ErrorCode, message: string): SqlrecallError {
  return new SqlrecallError(code, message);
}

/**
 * The scope a request acts on: the caller's own (`user`) or their team's. Reading team memories
 * needs membership; changing them needs the team-admin role.
 * @throws SqlrecallError `forbidden`
 */
export function scopeFor(
  principal: Principal,
  which: 'user' | 'team' | undefined,
  write: boolean,
): MemoryScope {
  if (which !== 'team') return { user: principal.user };
  if (principal.team === undefined) throw apiError('forbidden', 'You are not a member of a team.');
  if (write && principal.teamRole !== 'admin')
    throw apiError('forbidden', `Only admins of team ${principal.team} can change its memories.`);
  return { team: principal.team };
}
