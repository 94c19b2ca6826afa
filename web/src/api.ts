/** The HTTP API client of the UI: token from localStorage, JSON calls, and the SSE ask stream. */
import { createParser } from 'eventsource-parser';

const TOKEN_KEY = 'sqlrecall.token';

export const tokenStore = {
  get: (): string | null => localStorage.getItem(TOKEN_KEY),
  set: (token: string) => localStorage.setItem(TOKEN_KEY, token),
  clear: () => localStorage.removeItem(TOKEN_KEY),
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function headers(json = true): Record<string, string> {
  const h: Record<string, string> = {};
  if (json) h['content-type'] = 'application/json';
  const token = tokenStore.get();
  if (token) h.authorization = `Bearer ${token}`;
  // Days the user names ("until Friday") are days in the browser's zone.
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone) h['x-sqlrecall-time-zone'] = zone;
  return h;
}

/** One JSON call; throws {@link ApiError} with the server's `{error: {code, message}}`. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const res = await fetch(path, {
    method: init.method ?? 'GET',
    headers: { ...headers(init.body !== undefined), accept: 'application/json' },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const error = (data as { error?: { code: string; message: string } } | null)?.error;
    throw new ApiError(res.status, error?.code ?? 'internal', error?.message ?? `HTTP ${res.status}`);
  }
  return data as T;
}

export interface Memory {
  id: string;
  kind: string;
  text: string;
  sql: string | null;
  status: string;
  updatedAt: string;
  /** When an answer last applied it; null: never. */
  lastAppliedAt?: string | null;
  /** When it stops being recalled (an instant); null: never expires. */
  expiresAt?: string | null;
  /** The last day it holds, as typed (`YYYY-MM-DD` in this browser's time zone); null: never expires. */
  expiresOn?: string | null;
}

/** Where a memory came from (`GET /api/memories/{id}`). */
export interface Origin {
  how: 'chat' | 'hand' | 'import' | 'confirmed' | 'unknown';
  summary: string;
  at: string;
  conversation: { id: string; title: string | null; exists: boolean } | null;
  words: string | null;
}

/** A memory with its provenance (`GET /api/memories/{id}`). */
export interface Provenance {
  memory: Memory;
  origin: Origin;
  lastAppliedAt: string | null;
  replaced: { id: string; text: string; status: string; origin: Origin }[];
  replacedBy: { id: string; text: string; status: string; origin: Origin } | null;
  history: HistoryEntry[];
}
export interface HistoryEntry {
  id: string;
  action: string;
  oldText: string | null;
  newText: string | null;
  reason: string | null;
  oldSql?: string | null;
  newSql?: string | null;
  createdAt: string;
}
export interface Column {
  name: string;
  type: string;
}
export type Cell = string | number | boolean | null | Cell[] | { [key: string]: Cell };
export interface Chart {
  type: 'bar' | 'line';
  x: string;
  series: string[];
}
export interface Applied {
  id: string;
  kind: string;
  text: string;
}

/**
 * Asks a question and calls `onEvent` for every SSE event as it arrives.
 * @throws ApiError when the request itself is refused (validation, sign-in)
 */
export async function askStream(
  body: { question: string; conversationId?: string; without?: string[] },
  onEvent: (event: string, data: unknown) => void,
  signal?: AbortSignal,
): Promise<void> {
  const res = await fetch('/api/ask', {
    method: 'POST',
    headers: { ...headers(), accept: 'text/event-stream' },
    body: JSON.stringify(body),
    signal,
  });
  if (!res.ok || !res.body) {
    const data = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
    throw new ApiError(
      res.status,
      data?.error?.code ?? 'internal',
      data?.error?.message ?? `HTTP ${res.status}`,
    );
  }
  const parser = createParser({
    onEvent: (message) => onEvent(message.event ?? 'message', JSON.parse(message.data)),
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
}

const CONVERSATION_KEY = 'sqlrecall.conversation';

/** The open conversation's id, kept across reloads (per browser profile). */
export const conversationStore = {
  get: (): string | null => localStorage.getItem(CONVERSATION_KEY),
  set: (id: string) => localStorage.setItem(CONVERSATION_KEY, id),
  clear: () => localStorage.removeItem(CONVERSATION_KEY),
};

/** A conversation in the list (`GET /api/conversations`). */
export interface ConversationInfo {
  id: string;
  title?: string | null;
  firstQuestion?: string | null;
  summary: string | null;
  turnCount: number;
  createdAt: string;
  updatedAt: string;
}

/** A stored turn (`GET /api/conversations/{id}`): rows are not stored, the SQL and memories are. */
export interface ConversationTurn {
  id: string;
  question: string;
  sql: string | null;
  rowCount: number | null;
  summary: string | null;
  /** Memories applied to the answer (verified in its SQL). */
  appliedMemories?: Applied[];
  /** Memories shown to the model but not verified in the SQL. */
  recalledMemories?: Applied[];
  createdAt: string;
}

/**
 * The body of `POST /api/sql`: the one SQL document (the same as `sqlrecall sql --json` and the
 * MCP `sql` tool print), column names and their types side by side.
 */
interface SqlDocument {
  sql: string;
  columns: string[];
  columnTypes: string[];
  rows: Cell[][];
  rowCount: number;
  truncated: boolean;
  truncatedReason?: 'max_rows' | 'max_bytes';
  chart: Chart | null;
}

/** A statement's result as the chat shows it (columns as name and type). */
export interface SqlRunResult {
  sql: string;
  columns: Column[];
  rows: Cell[][];
  rowCount: number;
  truncated: boolean;
  truncatedReason?: 'max_rows' | 'max_bytes';
  chart: Chart | null;
}

/**
 * Runs SQL the person edited, through the server's guard and limits.
 * @throws ApiError when the guard refuses it or the database reports an error
 */
export async function runSql(sql: string, signal?: AbortSignal): Promise<SqlRunResult> {
  const res = await fetch('/api/sql', {
    method: 'POST',
    headers: { ...headers(), accept: 'application/json' },
    body: JSON.stringify({ sql }),
    signal,
  });
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const error = (data as { error?: { code: string; message: string } } | null)?.error;
    throw new ApiError(res.status, error?.code ?? 'internal', error?.message ?? `HTTP ${res.status}`);
  }
  const { columns, columnTypes, ...rest } = data as SqlDocument;
  return { ...rest, columns: columns.map((name, i) => ({ name, type: columnTypes[i] ?? '' })) };
}
