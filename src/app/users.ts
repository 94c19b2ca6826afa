/**
 * Users and personal access tokens of multi-user `serve`, kept in the memory store's
 * database (so several stateless `serve` instances share them; docs/scale-out.md). A token
 * is 32 random bytes shown once by `sqlrecall users add NAME`; only its SHA-256 is stored (a
 * random 256-bit secret needs no slow hash: there is nothing to brute-force from a dictionary).
 */
import { createHash, randomBytes } from 'node:crypto';
import { SqlrecallError } from '../core/errors.js';
import { USER_NAME_PATTERN, USER_NAME_RULE } from '../core/limits.js';
import { type MigrationSeries, runMigrations } from '../databases/postgres/migrate.js';
import type { SqlClient, SqlSession } from '../memory/store/index.js';
import { scopeRef } from '../memory/store/scope.js';
import { userNameConflict, userNameKey } from './user-names.js';

/** Role of a user in their team: members read team memories, admins also change them. */
export type TeamRole = 'member' | 'admin';

/** Who a request acts for, resolved from its token (never from the request body). */
export interface Principal {
  user: string;
  /** The user's team, whose shared memories they read. */
  team?: string;
  teamRole?: TeamRole;
  /**
   * An administrator of sqlrecall (`users add --admin`): reads the audit trail and the policy
   * status over HTTP. Unrelated to the team-admin role, which changes a team's memories.
   */
  admin?: boolean;
}

/** A user as listed by `users list` (no token material). */
export interface UserInfo extends Principal {
  createdAt: string;
  /** Number of live tokens. */
  tokens: number;
}

/** Prefix of every token (lets secret scanners and log filters recognise them). */
export const TOKEN_PREFIX = 'sqr_';

/** Token shape: the prefix and 43 base64url characters (32 bytes). */
export const TOKEN_PATTERN = /^sqr_[A-Za-z0-9_-]{43}$/;

/** User names: 1–100 letters, digits, `.`, `_`, `@`, `-` (the rule `--user` follows too). */
export { USER_NAME_PATTERN } from '../core/limits.js';

/** Hex SHA-256 of a token: the only form in which tokens are stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A fresh random token (`sqr_` + 32 random bytes, base64url). */
export function newToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * The user directory's series. Its tables were created on every start before the runner was
 * shared (users and tokens first, archives later), so each step keeps `IF NOT EXISTS`: a database
 * that already has them adopts them with their rows.
 */
export const USERS_SERIES: MigrationSeries = {
  component: 'users',
  migrations: [
    {
      version: 1,
      description: 'users (name, team, role) and the SHA-256 of their tokens',
      statements: [
        `CREATE TABLE IF NOT EXISTS sqlrecall_users (
     name text PRIMARY KEY,
     team text,
     team_role text NOT NULL DEFAULT 'member' CHECK (team_role IN ('member', 'admin')),
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
        `CREATE TABLE IF NOT EXISTS sqlrecall_tokens (
     token_hash text PRIMARY KEY,
     user_name text NOT NULL REFERENCES sqlrecall_users (name) ON DELETE CASCADE,
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
      ],
    },
    {
      version: 2,
      description: 'archived memory scopes of removed users',
      statements: [
        // Memory scopes of removed users: the rows are moved to `archive_scope`, a
        // user id no account can have (it contains `:`, which USER_NAME_PATTERN refuses).
        `CREATE TABLE IF NOT EXISTS sqlrecall_user_archives (
     archive_scope text PRIMARY KEY,
     user_name text NOT NULL,
     user_key text NOT NULL,
     reason text NOT NULL CHECK (reason IN ('removed', 'leftover')),
     archived_at timestamptz NOT NULL DEFAULT clock_timestamp(),
     restored_at timestamptz
   )`,
      ],
    },
    {
      version: 3,
      description: 'administrators (read the audit trail and the policy status)',
      statements: [
        'ALTER TABLE sqlrecall_users ADD COLUMN IF NOT EXISTS is_admin boolean NOT NULL DEFAULT false',
      ],
    },
  ],
};

/** Advisory lock serializing user changes (name uniqueness is checked on normalized forms). */
const USERS_LOCK = 'SELECT pg_advisory_xact_lock(74210006)';

/** What `users add NAME --restore-memories` brought back. */
export interface RestoredMemories {
  /** Memories restored (every status: active, superseded and deleted ones keep their history). */
  memories: number;
  /** Active memories restored, by kind (e.g. `{ term: 2, preference: 1 }`). */
  kinds: Record<string, number>;
  conversations: number;
  /** When the restored account was removed (ISO 8601), or null when there was nothing to restore. */
  archivedAt: string | null;
}

/** Result of {@link UserDirectory.addUser}. */
export interface AddedUser {
  /** The stored name (NFKC form of the given one). */
  user: string;
  /** The first token (shown once). */
  token: string;
  /** Set when `restoreMemories` was asked. */
  restored?: RestoredMemories;
}

/** Users and tokens over an {@link SqlClient} on the memory store's database. */
export class UserDirectory {
  private ready: Promise<void> | undefined;

  constructor(private readonly client: SqlClient) {}

  /**
   * Runs the directory's migrations once per instance (serialized across processes by the
   * migration lock; a failure is retried on the next call).
   */
  init(): Promise<void> {
    this.ready ??= runMigrations(this.client, USERS_SERIES)
      .then(() => undefined)
      .catch((error: unknown) => {
        this.ready = undefined;
        throw error;
      });
    return this.ready;
  }

  /**
   * Adds a user and returns their first token (shown once). The account starts empty.
   * @throws SqlrecallError `usage` for an invalid, existing, mixed-script or confusable name
   */
  async add(name: string, options: { team?: string; teamRole?: TeamRole } = {}): Promise<string> {
    return (await this.addUser(name, options)).token;
  }

  /**
   * Adds a user. The name is stored in NFKC form and must differ from every existing name after
   * NFKC and case folding, and by its confusable skeleton ({@link userNameConflict}). Memories
   * left under that user id (by a removed account or a CLI `--user` run) are archived first, so
   * the account starts empty; with `restoreMemories` the most recently removed account of the
   * same name gets its memories and conversations back, and the result says what was restored.
   * @throws SqlrecallError `usage` for an invalid, existing, mixed-script or confusable name
   */
  async addUser(
    given: string,
    options: { team?: string; teamRole?: TeamRole; admin?: boolean; restoreMemories?: boolean } = {},
  ): Promise<AddedUser> {
    checkName(given);
    const name = given.normalize('NFKC');
    checkName(name);
    if (options.team !== undefined) checkName(options.team, 'team');
    await this.init();
    const token = newToken();
    let restored: RestoredMemories | undefined;
    await this.client.transaction(async (tx) => {
      await tx.query(USERS_LOCK);
      const names = (await tx.query<{ name: string }>('SELECT name FROM sqlrecall_users')).map((r) => r.name);
      if (names.some((other) => userNameKey(other) === userNameKey(name)))
        throw new SqlrecallError(
          'usage',
          `The user ${given} exists already; use \`users token ${given}\` for a new token.`,
        );
      const conflict = userNameConflict(name, names);
      if (conflict) throw new SqlrecallError('usage', conflict);
      await tx.query(
        'INSERT INTO sqlrecall_users (name, team, team_role, is_admin) VALUES ($1, $2, $3, $4)',
        [name, options.team ?? null, options.teamRole ?? 'member', options.admin === true],
      );
      await tx.query('INSERT INTO sqlrecall_tokens (token_hash, user_name) VALUES ($1, $2)', [
        hashToken(token),
        name,
      ]);
      const tables = await scopedTables(tx);
      await archiveScope(tx, tables, name, 'leftover');
      if (options.restoreMemories) restored = await restoreScope(tx, tables, name);
    });
    return { user: name, token, ...(restored ? { restored } : {}) };
  }

  /**
   * Revokes a user's tokens and returns a new one (shown once).
   * @throws SqlrecallError `not_found` for an unknown user
   */
  async rotate(name: string): Promise<string> {
    await this.init();
    const token = newToken();
    await this.client.transaction(async (tx) => {
      const stored = await storedName(tx, name);
      if (stored === undefined)
        throw new SqlrecallError('not_found', `There is no user ${name.slice(0, 100)}.`);
      await tx.query('DELETE FROM sqlrecall_tokens WHERE user_name = $1', [stored]);
      await tx.query('INSERT INTO sqlrecall_tokens (token_hash, user_name) VALUES ($1, $2)', [
        hashToken(token),
        stored,
      ]);
    });
    return token;
  }

  /**
   * Removes a user and their tokens, and archives their memory scope (memories, history,
   * conversations, settings, pending writes: nothing is deleted) so that a later account of the
   * same name starts empty. Returns the number of memories archived, or false when unknown.
   */
  async remove(name: string): Promise<false | { user: string; archivedMemories: number }> {
    await this.init();
    return this.client.transaction(async (tx) => {
      await tx.query(USERS_LOCK);
      const stored = await storedName(tx, name);
      if (stored === undefined) return false;
      await tx.query('DELETE FROM sqlrecall_users WHERE name = $1', [stored]);
      const archived = await archiveScope(tx, await scopedTables(tx), stored, 'removed');
      return { user: stored, archivedMemories: archived };
    });
  }

  /**
   * Makes a user an administrator, or no longer one.
   * @throws SqlrecallError `not_found` for an unknown user
   */
  async setAdmin(name: string, admin: boolean): Promise<string> {
    await this.init();
    const stored = await storedName(this.client, name);
    if (stored === undefined)
      throw new SqlrecallError('not_found', `There is no user ${name.slice(0, 100)}.`);
    await this.client.query('UPDATE sqlrecall_users SET is_admin = $2 WHERE name = $1', [stored, admin]);
    return stored;
  }

  /** Every user, by name. */
  async list(): Promise<UserInfo[]> {
    await this.init();
    const rows = await this.client.query<{
      name: string;
      team: string | null;
      team_role: TeamRole;
      is_admin: boolean;
      created_at: Date | string;
      tokens: number | string;
    }>(
      `SELECT u.name, u.team, u.team_role, u.is_admin, u.created_at,
              (SELECT count(*) FROM sqlrecall_tokens t WHERE t.user_name = u.name) AS tokens
         FROM sqlrecall_users u ORDER BY u.name`,
    );
    return rows.map((r) => ({
      user: r.name,
      ...(r.team !== null ? { team: r.team, teamRole: r.team_role } : {}),
      ...(r.is_admin ? { admin: true } : {}),
      createdAt: new Date(r.created_at).toISOString(),
      tokens: Number(r.tokens),
    }));
  }

  /** The principal a token stands for, or null when the token is malformed or unknown. */
  async authenticate(token: string): Promise<Principal | null> {
    if (!TOKEN_PATTERN.test(token)) return null;
    await this.init();
    const rows = await this.client.query<{
      name: string;
      team: string | null;
      team_role: TeamRole;
      is_admin: boolean;
    }>(
      `SELECT u.name, u.team, u.team_role, u.is_admin FROM sqlrecall_tokens t
         JOIN sqlrecall_users u ON u.name = t.user_name WHERE t.token_hash = $1`,
      [hashToken(token)],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      user: row.name,
      ...(row.team !== null ? { team: row.team, teamRole: row.team_role } : {}),
      ...(row.is_admin ? { admin: true } : {}),
    };
  }
}

function checkName(name: string, what = 'user'): void {
  if (!USER_NAME_PATTERN.test(name))
    throw new SqlrecallError('usage', `A ${what} name is ${USER_NAME_RULE}.`);
}

/** The stored name whose key (NFKC + case fold) equals that of `name`, if any. */
async function storedName(tx: SqlSession, name: string): Promise<string | undefined> {
  const exact = await tx.query<{ name: string }>('SELECT name FROM sqlrecall_users WHERE name = $1', [name]);
  if (exact[0]) return exact[0].name;
  const key = userNameKey(name);
  const rows = await tx.query<{ name: string }>('SELECT name FROM sqlrecall_users');
  return rows.find((row) => userNameKey(row.name) === key)?.name;
}

/**
 * Tables of the memory store that hold per-scope rows: every table of the current schema with
 * both `scope_key` and `scope_user` columns (so tables added by later migrations are covered).
 * Empty when the memory store was never opened on this database.
 */
async function scopedTables(tx: SqlSession): Promise<string[]> {
  const rows = await tx.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name IN ('scope_key', 'scope_user')
        AND table_name LIKE 'sqlrecall\\_%'
      GROUP BY table_name HAVING count(*) = 2 ORDER BY table_name`,
  );
  return rows.map((row) => row.table_name);
}

/** Identifier quoting for table names read from the catalog. */
function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Moves every row of user scope `from` to user scope `to` in `tables`; returns memories moved. */
async function moveScope(
  tx: SqlSession,
  tables: readonly string[],
  from: string,
  to: string,
): Promise<number> {
  const source = scopeRef({ user: from });
  const target = scopeRef({ user: to });
  let memories = 0;
  for (const table of tables) {
    const rows = await tx.query(
      `UPDATE ${quoteIdent(table)} SET scope_key = $1, scope_user = $2
        WHERE scope_key = $3 AND scope_user = $4 RETURNING 1 AS moved`,
      [target.key, target.id, source.key, source.id],
    );
    if (table === 'sqlrecall_memories') memories = rows.length;
  }
  return memories;
}

/** Archives user scope `name` when it holds any row; returns the number of memories archived. */
async function archiveScope(
  tx: SqlSession,
  tables: readonly string[],
  name: string,
  reason: 'removed' | 'leftover',
): Promise<number> {
  if (tables.length === 0) return 0;
  const ref = scopeRef({ user: name });
  const any = await tx.query(
    tables
      .map((table) => `SELECT 1 FROM ${quoteIdent(table)} WHERE scope_key = $1 AND scope_user = $2`)
      .join(' UNION ALL ')
      .concat(' LIMIT 1'),
    [ref.key, ref.id],
  );
  if (any.length === 0 && reason === 'leftover') return 0;
  const archive = `archived:${randomBytes(9).toString('base64url')}:${name}`;
  const moved = await moveScope(tx, tables, name, archive);
  await tx.query(
    'INSERT INTO sqlrecall_user_archives (archive_scope, user_name, user_key, reason) VALUES ($1, $2, $3, $4)',
    [archive, name, userNameKey(name), reason],
  );
  return moved;
}

/** Moves the most recently removed account of `name` back into its (empty) scope. */
async function restoreScope(
  tx: SqlSession,
  tables: readonly string[],
  name: string,
): Promise<RestoredMemories> {
  const rows = await tx.query<{ archive_scope: string; archived_at: Date | string }>(
    `SELECT archive_scope, archived_at FROM sqlrecall_user_archives
      WHERE user_key = $1 AND reason = 'removed' AND restored_at IS NULL
      ORDER BY archived_at DESC LIMIT 1`,
    [userNameKey(name)],
  );
  const archive = rows[0];
  if (!archive || tables.length === 0) return { memories: 0, kinds: {}, conversations: 0, archivedAt: null };
  const memories = await moveScope(tx, tables, archive.archive_scope, name);
  await tx.query(
    'UPDATE sqlrecall_user_archives SET restored_at = clock_timestamp() WHERE archive_scope = $1',
    [archive.archive_scope],
  );
  const ref = scopeRef({ user: name });
  const kinds: Record<string, number> = {};
  if (tables.includes('sqlrecall_memories')) {
    const counted = await tx.query<{ kind: string; n: number | string }>(
      `SELECT kind, count(*) AS n FROM sqlrecall_memories
        WHERE scope_key = $1 AND scope_user = $2 AND status = 'active' GROUP BY kind ORDER BY kind`,
      [ref.key, ref.id],
    );
    for (const row of counted) kinds[row.kind] = Number(row.n);
  }
  let conversations = 0;
  if (tables.includes('sqlrecall_conversations')) {
    const counted = await tx.query<{ n: number | string }>(
      'SELECT count(*) AS n FROM sqlrecall_conversations WHERE scope_key = $1 AND scope_user = $2',
      [ref.key, ref.id],
    );
    conversations = Number(counted[0]?.n ?? 0);
  }
  return { memories, kinds, conversations, archivedAt: new Date(archive.archived_at).toISOString() };
}
