/**
 * What the HTTP API needs from the rest of the system, as one small interface: built from a
 * {@link Runtime} by `serve` ({@link depsFromRuntime}), or from test doubles. The server keeps no
 * state that matters between requests: memories, conversations and
 * tokens live in the memory store's database.
 */
import type { Assistant } from '../agent/assistant.js';
import type { ContextPlanner } from '../agent/context.js';
import type { SqlRuntime } from '../app/run-sql.js';
import type { UserDirectory } from '../app/users.js';
import type { EmbeddingModel } from '../core/ports.js';
import type { MemoryService } from '../memory/service.js';
import type { SqlMemoryStore } from '../memory/store/index.js';

/** The memory parts the routes use. */
export interface ServerMemory {
  store: SqlMemoryStore;
  service: MemoryService;
  embedder: EmbeddingModel;
}

/** One component's health. */
export interface ComponentHealth {
  ok: boolean;
  /** One sentence when not ok (never a secret). */
  message?: string;
}

/** `GET /api/health`. */
export interface HealthReport {
  ok: boolean;
  model: ComponentHealth;
  database: ComponentHealth;
  memory: ComponentHealth;
}

/** `GET /api/settings`: what the UI shows (credentials masked). */
export interface ServerSettings {
  model: string;
  embedModel: string;
  ollamaHost: string;
  /** The database, with its password masked (or null when none is configured). */
  database: string | null;
  /** The memory store, masked. */
  memoryStore: string;
  maxRows: number;
  memoryEnabled: boolean;
}

/** How requests are authenticated. */
export type AuthMode =
  /** Single-user local mode: every request is this user (no login); only loopback Host headers. */
  | { mode: 'local'; user: string; team?: string }
  /** Multi-user mode: `Authorization: Bearer <token>` from `sqlrecall users add NAME`. */
  | { mode: 'users'; users: UserDirectory };

/** One access-log entry (never headers, query strings or bodies: tokens stay out of logs). */
export interface AccessLogEntry {
  method: string;
  path: string;
  status: number;
  durationMs: number;
  user: string | null;
  /** Error code of a failed request. */
  code?: string;
}

/** Dependencies of {@link createApp}. */
export interface ServerDeps {
  auth: AuthMode;
  assistant(): Promise<Assistant>;
  /** The user's database, catalog and limits for `POST /api/sql` (see `app/run-sql.ts`). */
  sql: SqlRuntime;
  memory(): Promise<ServerMemory>;
  /** Chooses the schema context for `POST /api/schema/context`; default the whole schema. */
  planContext?: ContextPlanner;
  health(): Promise<HealthReport>;
  settings(): ServerSettings;
  /** Access log sink; default none. */
  log?: (entry: AccessLogEntry) => void;
  /** Folder of the built web UI (`dist/web`); absent or missing: API only. */
  webRoot?: string;
  /** Extra Host header names accepted in local mode (besides localhost, 127.0.0.1, [::1]). */
  allowedHosts?: string[];
  /**
   * Most `POST /api/sql` and `POST /api/ask` requests one user may have running at once (429
   * past it); default `DEFAULT_MAX_REQUESTS_PER_USER` (4, `concurrency.ts`).
   */
  maxRequestsPerUser?: number;
}
