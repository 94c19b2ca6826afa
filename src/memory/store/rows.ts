/**
 * Row mapping between SQL and the core memory types, content hashing and vector literals.
 */
import { createHash } from 'node:crypto';
import type {
  HistoryAction,
  Memory,
  MemoryHistoryEntry,
  MemoryKind,
  MemoryOrigin,
  MemoryOriginKind,
  MemoryStatus,
  ScoredMemory,
} from '../../core/memory.js';
import { redactSecrets } from '../../core/redact.js';
import { scopeOfRow } from './scope.js';
import type { Row } from './sql-client.js';

/** Columns selected for a {@link Memory} (never the embedding). */
export const MEMORY_COLUMNS =
  'id, scope_user, scope_team, kind, text, sql, tables, columns, embedding_model, content_hash, status, supersedes, source_message_id, created_at, updated_at, expires_at, expires_on::text, pinned, origin, origin_conversation_id, origin_words, last_applied_at';

/** Same, qualified with a table alias. */
export function memoryColumns(alias: string): string {
  return MEMORY_COLUMNS.split(', ')
    .map((column) => `${alias}.${column}`)
    .join(', ');
}

/** Columns selected for a {@link MemoryHistoryEntry}. */
export const HISTORY_COLUMNS =
  'id, memory_id, action, old_text, new_text, reason, old_sql, new_sql, pinned, created_at';

/**
 * Normalises text for dedup: trim, collapse every run of whitespace to one space, lower-case
 * (locale-independent `toLowerCase`).
 */
export function normalizeText(text: string): string {
  return text.trim().replace(/\s+/gu, ' ').toLowerCase();
}

/** Hex SHA-256 of `kind` + NUL + normalised text: equal for facts that differ only in case/spacing. */
export function contentHash(kind: MemoryKind, text: string): string {
  return createHash('sha256')
    .update(`${kind}\u0000${normalizeText(text)}`, 'utf8')
    .digest('hex');
}

/** ISO-8601 string from a driver timestamp (Date or text). */
export function isoTime(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return new Date(String(value)).toISOString();
}

function isoOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : isoTime(value);
}

function textOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function textArray(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** A {@link Memory} from a row selected with {@link MEMORY_COLUMNS}. */
export function memoryFromRow(row: Row): Memory {
  return {
    id: String(row.id),
    scope: scopeOfRow(row),
    kind: row.kind as MemoryKind,
    text: String(row.text),
    sql: textOrNull(row.sql),
    tables: textArray(row.tables),
    columns: textArray(row.columns),
    embeddingModel: String(row.embedding_model),
    contentHash: String(row.content_hash),
    status: row.status as MemoryStatus,
    supersedes: textOrNull(row.supersedes),
    sourceMessageId: textOrNull(row.source_message_id),
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
    expiresAt: isoOrNull(row.expires_at),
    // Read as text (`expires_on::text`): a driver's Date for a `date` would shift with the process zone.
    expiresOn: row.expires_at === null || row.expires_at === undefined ? null : textOrNull(row.expires_on),
    pinned: row.pinned === true,
    origin: originFromRow(row),
    lastAppliedAt: isoOrNull(row.last_applied_at),
  };
}

const ORIGIN_KINDS: readonly MemoryOriginKind[] = ['chat', 'hand', 'import', 'confirmed'];

/** The origin columns of a row as a {@link MemoryOrigin}; null when none (or unknown) was recorded. */
function originFromRow(row: Row): MemoryOrigin | null {
  const how = textOrNull(row.origin);
  if (how === null || !(ORIGIN_KINDS as readonly string[]).includes(how)) return null;
  return {
    how: how as MemoryOriginKind,
    conversationId: textOrNull(row.origin_conversation_id),
    words: textOrNull(row.origin_words),
  };
}

/** Longest stored origin words (characters); longer ones are clipped. */
export const MAX_ORIGIN_WORDS = 4000;

/** The origin columns `(origin, origin_conversation_id, origin_words)` to store for `origin`. */
export function originColumns(
  origin: MemoryOrigin | null | undefined,
): [string | null, string | null, string | null] {
  if (!origin || !(ORIGIN_KINDS as readonly string[]).includes(origin.how)) return [null, null, null];
  // The user's words are shown again (memory show, the memory bank): a password in them is masked.
  const words =
    typeof origin.words === 'string'
      ? redactSecrets(origin.words.replace(/\u0000/g, '')).slice(0, MAX_ORIGIN_WORDS)
      : null;
  const conversation = typeof origin.conversationId === 'string' ? origin.conversationId.slice(0, 200) : null;
  return [origin.how, conversation, words];
}

/** A {@link ScoredMemory} from a row with the memory columns plus `similarity`. */
export function scoredFromRow(row: Row): ScoredMemory {
  return { ...memoryFromRow(row), similarity: Number(row.similarity) };
}

/**
 * A {@link MemoryHistoryEntry} from a row selected with {@link HISTORY_COLUMNS}. `memoryId` is ''
 * for an entry about no memory (a `noop` op without an id in the caller's scope).
 */
export function historyFromRow(row: Row): MemoryHistoryEntry {
  return {
    id: String(row.id),
    memoryId: textOrNull(row.memory_id) ?? '',
    action: row.action as HistoryAction,
    oldText: textOrNull(row.old_text),
    newText: textOrNull(row.new_text),
    reason: textOrNull(row.reason),
    oldSql: textOrNull(row.old_sql),
    newSql: textOrNull(row.new_sql),
    pinned: row.pinned === null || row.pinned === undefined ? null : row.pinned === true,
    createdAt: isoTime(row.created_at),
  };
}

/** True for a syntactically valid UUID (ids from elsewhere are "not found" without a query). */
export function isUuid(value: unknown): value is string {
  return (
    typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)
  );
}
