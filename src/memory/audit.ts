/**
 * `memory audit`: credentials already stored in a scope's memories (text or SQL, any status) and
 * in their history, and in the writes still waiting in the queue, found by the same detector that keeps every teaching path from storing new
 * ones. Reported masked; removed for good on request (a credential must not stay restorable).
 */
import { findCredentials } from '../core/credentials.js';
import type { MemoryKind, MemoryScope, MemoryStatus } from '../core/memory.js';
import type { SqlMemoryStore } from './store/types.js';

/** One stored memory (or history entry) that holds a credential. */
export interface CredentialAuditEntry {
  memoryId: string;
  /** Set when the credential is in a history entry of the memory, not in the memory itself. */
  historyId?: string;
  /**
   * Set when the credential is in a write still waiting in the queue (a fact or message not yet
   * applied); `memoryId` is then that queue entry's id.
   */
  pendingId?: string;
  kind?: MemoryKind;
  status?: MemoryStatus;
  /** What was found, masked (`a password in a connection URL (postgres://report:***@)`). */
  found: { label: string; masked: string }[];
}

/** Result of {@link auditCredentials}. */
export interface CredentialAudit {
  entries: CredentialAuditEntry[];
  /** Memories to remove (with their whole history). */
  memoryIds: string[];
  /** History entries to remove (of memories that are kept). */
  historyIds: string[];
  /** Queued writes to remove. */
  pendingIds: string[];
}

/** The words of a queued write's payload that could hold a credential (message, text, SQL). */
function pendingWords(payload: unknown): string {
  if (!payload || typeof payload !== 'object') return '';
  const p = payload as Record<string, unknown>;
  return ['message', 'words', 'text', 'sql']
    .map((key) => (typeof p[key] === 'string' ? p[key] : ''))
    .join('\n');
}

const masked = (text: string) => findCredentials(text).map((f) => ({ label: f.label, masked: f.masked }));

/** Finds the credentials stored in `scope` (memories of every status, their history, queued writes). */
export async function auditCredentials(
  store: Pick<SqlMemoryStore, 'list' | 'history' | 'listPending'>,
  scope: MemoryScope,
): Promise<CredentialAudit> {
  const memories = await store.list(scope, { statuses: ['active', 'superseded', 'deleted'], limit: 100_000 });
  const entries: CredentialAuditEntry[] = [];
  const memoryIds = new Set<string>();
  for (const m of memories) {
    const found = masked(`${m.text}\n${m.sql ?? ''}`);
    if (found.length === 0) continue;
    memoryIds.add(m.id);
    entries.push({ memoryId: m.id, kind: m.kind, status: m.status, found });
  }
  const historyIds: string[] = [];
  for (const h of await store.history(scope)) {
    if (memoryIds.has(h.memoryId)) continue;
    const found = masked(`${h.oldText ?? ''}\n${h.newText ?? ''}\n${h.oldSql ?? ''}\n${h.newSql ?? ''}`);
    if (found.length === 0) continue;
    historyIds.push(h.id);
    entries.push({ memoryId: h.memoryId, historyId: h.id, found });
  }
  const pendingIds: string[] = [];
  for (const p of await store.listPending(scope)) {
    const found = masked(pendingWords(p.payload));
    if (found.length === 0) continue;
    pendingIds.push(p.id);
    entries.push({ memoryId: p.id, pendingId: p.id, found });
  }
  return { entries, memoryIds: [...memoryIds], historyIds, pendingIds };
}

/** Removes for good what {@link auditCredentials} found. */
export async function purgeCredentials(
  store: Pick<SqlMemoryStore, 'purge' | 'completePending'>,
  scope: MemoryScope,
  audit: CredentialAudit,
): Promise<{ memories: number; history: number; pending: number }> {
  let pending = 0;
  for (const id of audit.pendingIds) if (await store.completePending(scope, id)) pending += 1;
  if (audit.memoryIds.length === 0 && audit.historyIds.length === 0)
    return { memories: 0, history: 0, pending };
  return { ...(await store.purge(scope, audit.memoryIds, audit.historyIds)), pending };
}
