/**
 * Cross-site request refusal for local mode. Local mode has no login, so any
 * web page the user visits could make the browser send a request to `http://localhost:PORT`; a
 * plain HTML form needs no CORS preflight and no body (`POST /api/memories/{id}/restore`). The
 * Host check in the auth middleware stops DNS rebinding; this check stops forged requests from
 * foreign origins, whatever their content type.
 *
 * Rule (the OWASP "Verify Origin With Standard Headers" and Fetch Metadata guidance):
 * - safe methods (GET, HEAD, OPTIONS) pass;
 * - `Sec-Fetch-Site`, when present, must be `same-origin` or `none` (typed URL, bookmark); browsers
 *   send it on every request, so `cross-site` and `same-site` (another port on localhost is
 *   same-site) are refused;
 * - `Origin`, when present, must equal the origin of the request URL (scheme, host and port);
 *   `Origin: null` (sandboxed frames, `file:` pages, some redirects) is refused;
 * - a request with neither header comes from a non-browser client (curl, scripts) and passes.
 */
import type { MiddlewareHandler } from 'hono';
import { SqlrecallError } from '../core/errors.js';
import type { AppEnv } from './context.js';

/** HTTP methods that change nothing (everything else is state-changing). */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The request's headers this check reads. */
export interface OriginHeaders {
  method: string;
  /** The full request URL (its origin is the server's, as the browser addressed it). */
  url: string;
  origin?: string | null;
  secFetchSite?: string | null;
}

/**
 * Why a request is refused as cross-site, or `null` when it may proceed.
 * @returns a sentence for the 403 message, or null
 */
export function crossSiteReason(req: OriginHeaders): string | null {
  if (SAFE_METHODS.has(req.method.toUpperCase())) return null;
  const site = req.secFetchSite?.trim().toLowerCase();
  if (site && site !== 'same-origin' && site !== 'none')
    return `the browser marked it as ${site.slice(0, 40)} (Sec-Fetch-Site)`;
  const origin = req.origin?.trim();
  if (origin === undefined || origin === null || origin === '') return null;
  let own: string;
  try {
    own = new URL(req.url).origin;
  } catch {
    return 'its URL cannot be read';
  }
  if (origin.toLowerCase() === 'null') return 'it comes from an opaque origin (Origin: null)';
  let theirs: string;
  try {
    theirs = new URL(origin).origin;
  } catch {
    return 'its Origin header is not a URL';
  }
  return theirs === own ? null : `it comes from another origin (${JSON.stringify(origin.slice(0, 100))})`;
}

/**
 * Middleware refusing state-changing requests from foreign origins with 403 `forbidden`.
 * @throws SqlrecallError `forbidden`
 */
export function refuseCrossSite(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const reason = crossSiteReason({
      method: c.req.method,
      url: c.req.url,
      origin: c.req.header('origin'),
      secFetchSite: c.req.header('sec-fetch-site'),
    });
    if (reason)
      throw new SqlrecallError('forbidden', `Cross-site request refused: ${reason}.`, {
        details: {
          hint: 'The local server only accepts changes from its own web page or from non-browser clients.',
        },
      });
    return next();
  };
}
