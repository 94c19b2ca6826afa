/**
 * Composition root: turns a {@link Config} into concrete models, connectors and the Assistant.
 * Only this layer picks adapters; everything else receives interfaces.
 */
import { join } from 'node:path';
import { Assistant } from '../agent/assistant.js';
import type { Config } from '../config/config.js';
import { SqlrecallError } from '../core/errors.js';
import type { ChatModel, DatabaseConnector } from '../core/ports.js';
import { openDatabase } from '../databases/open.js';
import { createOllamaAdmin, type OllamaAdmin } from '../models/ollama/admin.js';
import { createOllamaChatModel } from '../models/ollama/chat-model.js';

/** Where `sqlrecall demo` keeps its embedded shop database. */
export function demoDatabaseDir(config: Config): string {
  return join(config.home, 'demo-shop');
}

/** Live objects built from a configuration; `close()` releases them. */
export class Runtime {
  private db: Promise<DatabaseConnector> | undefined;
  private chatModel: ChatModel | undefined;
  private adminClient: OllamaAdmin | undefined;

  constructor(readonly config: Config) {}

  /** The chat model (created lazily; no network until used). */
  chat(): ChatModel {
    this.chatModel ??= createOllamaChatModel({
      host: this.config.ollamaHost,
      model: this.config.model,
      numCtx: this.config.numCtx ?? 'auto',
    });
    return this.chatModel;
  }

  /** Ollama model management (version, list, pull). */
  admin(): OllamaAdmin {
    this.adminClient ??= createOllamaAdmin({ host: this.config.ollamaHost });
    return this.adminClient;
  }

  /**
   * The user's database, opened once.
   * @throws SqlrecallError `config` when no database is configured; `db_unreachable`.
   */
  database(): Promise<DatabaseConnector> {
    const url = this.config.databaseUrl;
    if (!url) {
      return Promise.reject(
        new SqlrecallError(
          'config',
          'No database is configured: set DATABASE_URL or pass --db postgres://user@host/dbname (or pglite:DIR).',
          { details: { hint: 'Try the embedded demo shop with `sqlrecall demo`.' } },
        ),
      );
    }
    if (!this.db) {
      const opening = openDatabase(url, { schemas: this.config.schemas });
      this.db = opening;
      opening.catch(() => {
        if (this.db === opening) this.db = undefined;
      });
    }
    return this.db;
  }

  /** An Assistant over the configured database and chat model. */
  async assistant(): Promise<Assistant> {
    const db = await this.database();
    return new Assistant({
      chat: this.chat(),
      db,
      loadSchema: () =>
        db.introspect({ schemas: this.config.schemas.length ? this.config.schemas : undefined }),
      maxRows: this.config.maxRows,
      statementTimeoutMs: this.config.statementTimeoutMs,
      maxRepairs: this.config.maxRepairs,
    });
  }

  /** Closes the database connection, if one was opened. */
  async close(): Promise<void> {
    const db = this.db;
    this.db = undefined;
    if (db) await db.then((d) => d.close()).catch(() => {});
  }
}
