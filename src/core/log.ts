/**
 * The one logger: pino, one JSON object per line, with structured fields and
 * levels. Every field — the message, every string inside the logged object, every key — passes
 * {@link sanitizeLogText}: passwords are masked by {@link redactSecrets}, tokens and keys by
 * {@link maskCredentials}, and control characters
 * are escaped, so a request path holding `%0a`, `%1b` or `%00` can neither forge a log line nor
 * send terminal escape sequences to whoever reads the log.
 */
import { type DestinationStream, type LevelWithSilent, type Logger, pino } from 'pino';
import { maskCredentials } from './credentials.js';
import { redactSecrets } from './redact.js';

/** Longest logged string, in characters (longer ones are cut and marked with `…`). */
export const MAX_LOG_FIELD_CHARS = 2000;
/** Deepest logged object; deeper values are logged as `"[nested]"`. */
const MAX_LOG_DEPTH = 8;

/**
 * C0 controls (U+0000–U+001F), DEL, C1 controls (U+0080–U+009F; U+009B is an 8-bit CSI), the
 * Unicode line and paragraph separators, and the bidirectional overrides/isolates that reorder
 * text on screen (U+202A–U+202E, U+2066–U+2069). Backslash is escaped too, so an escaped character
 * and the same text typed literally never look alike.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\\]/g;

/**
 * Escapes the characters of `UNSAFE` as `\xNN` / `\uNNNN` (backslash as `\\`).
 * `"a\nb"` → `"a\\x0ab"`; printable text is unchanged.
 */
export function escapeControl(text: string): string {
  return text.replace(UNSAFE, (ch) => {
    if (ch === '\\') return '\\\\';
    const code = ch.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** A string as it may be logged: secrets masked, control characters escaped, at most {@link MAX_LOG_FIELD_CHARS}. */
export function sanitizeLogText(text: string): string {
  const clipped = text.length > MAX_LOG_FIELD_CHARS ? `${text.slice(0, MAX_LOG_FIELD_CHARS)}…` : text;
  return escapeControl(redactSecrets(maskCredentials(clipped)));
}

/**
 * A value as it may be logged: strings through {@link sanitizeLogText}, object keys too, errors
 * reduced to their name and message, depth bounded. Numbers, booleans and null stay as they are.
 */
export function sanitizeLogValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return sanitizeLogText(value);
  if (value === null || typeof value !== 'object') {
    return typeof value === 'bigint' || typeof value === 'symbol' ? String(value) : value;
  }
  if (depth >= MAX_LOG_DEPTH) return '[nested]';
  if (value instanceof Error) return { type: value.name, message: sanitizeLogText(value.message) };
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => sanitizeLogValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[sanitizeLogText(k)] = sanitizeLogValue(v, depth + 1);
  return out;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Lowest level written; default `info`. `silent` writes nothing. */
  level?: LevelWithSilent;
  /** Where the JSON lines go; default standard error (fd 2). */
  destination?: DestinationStream;
  /** Fields added to every line (sanitized too), e.g. `{ component: 'server' }`. */
  base?: Record<string, unknown>;
}

/**
 * Creates a pino logger whose every line is sanitized ({@link sanitizeLogValue}). Lines are JSON:
 * `{"level":30,"time":"2026-…Z","msg":"request","method":"GET","path":"/api/me",…}`.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: options.base ? (sanitizeLogValue(options.base) as Record<string, unknown>) : null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { log: (object) => sanitizeLogValue(object) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          const clean = args.map((a) => (typeof a === 'string' ? sanitizeLogText(a) : a));
          return method.apply(this, clean as Parameters<typeof method>);
        },
      },
    },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}
