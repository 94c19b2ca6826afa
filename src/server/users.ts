/**
 * Users and personal access tokens of multi-user `serve` (issue 6), kept in the memory store's
 * database (so several stateless `serve` instances share them, DESIGN.md "Scaling out"). A token
 * is 32 random bytes shown once by `sqlrecall users add NAME`; only its SHA-256 is stored (a
 * random 256-bit secret needs no slow hash: there is nothing to brute-force from a dictionary).
 */
import { createHash, randomBytes } from 'node:crypto';
import { SqlrecallError } from '../core/errors.js';
import type { SqlClient } from '../memory/store/index.js';

/** Role of a user in their team: members read team memories, admins also change them. */
export type TeamRole = 'member' | 'admin';

/** Who a request acts for, resolved from its token (never from the request body). */
export interface Principal {
  user: string;
  /** The user's team, whose shared memories they read. */
  team?: string;
  teamRole?: TeamRole;
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

/** User names: 1–100 letters, digits, `.`, `_`, `@`, `-`. */
export const USER_NAME_PATTERN = /^[\p{L}\p{N}._@-]{1,100}$/u;

/** Hex SHA-256 of a token: the only form in which tokens are stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A fresh random token (`sqr_` + 32 random bytes, base64url). */
export function newToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

const MIGRATION = [
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
];

/** Users and tokens over an {@link SqlClient} on the memory store's database. */
export class UserDirectory {
  private ready: Promise<void> | undefined;

  constructor(private readonly client: SqlClient) {}

  /** Creates the tables once (serialized across processes by an advisory lock). */
  init(): Promise<void> {
    this.ready ??= this.client
      .transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock(74210006)');
        for (const statement of MIGRATION) await tx.query(statement);
      })
      .catch((error: unknown) => {
        this.ready = undefined;
        throw error;
      });
    return this.ready;
  }

  /**
   * Adds a user and returns their first token (shown once).
   * @throws SqlrecallError `usage` for an invalid or existing name
   */
  async add(name: string, options: { team?: string; teamRole?: TeamRole } = {}): Promise<string> {
    checkName(name);
    if (options.team !== undefined) checkName(options.team, 'team');
    await this.init();
    const token = newToken();
    await this.client.transaction(async (tx) => {
      const existing = await tx.query('SELECT 1 FROM sqlrecall_users WHERE name = $1', [name]);
      if (existing.length > 0)
        throw new SqlrecallError(
          'usage',
          `The user ${name} exists already; use \`users token ${name}\` for a new token.`,
        );
      await tx.query('INSERT INTO sqlrecall_users (name, team, team_role) VALUES ($1, $2, $3)', [
        name,
        options.team ?? null,
        options.teamRole ?? 'member',
      ]);
      await tx.query('INSERT INTO sqlrecall_tokens (token_hash, user_name) VALUES ($1, $2)', [
        hashToken(token),
        name,
      ]);
    });
    return token;
  }

  /**
   * Revokes a user's tokens and returns a new one (shown once).
   * @throws SqlrecallError `not_found` for an unknown user
   */
  async rotate(name: string): Promise<string> {
    await this.init();
    const token = newToken();
    await this.client.transaction(async (tx) => {
      const existing = await tx.query('SELECT 1 FROM sqlrecall_users WHERE name = $1', [name]);
      if (existing.length === 0)
        throw new SqlrecallError('not_found', `There is no user ${name.slice(0, 100)}.`);
      await tx.query('DELETE FROM sqlrecall_tokens WHERE user_name = $1', [name]);
      await tx.query('INSERT INTO sqlrecall_tokens (token_hash, user_name) VALUES ($1, $2)', [
        hashToken(token),
        name,
      ]);
    });
    return token;
  }

  /** Removes a user and their tokens (their memories stay in the store); false when unknown. */
  async remove(name: string): Promise<boolean> {
    await this.init();
    const rows = await this.client.query('DELETE FROM sqlrecall_users WHERE name = $1 RETURNING name', [
      name,
    ]);
    return rows.length > 0;
  }

  /** Every user, by name. */
  async list(): Promise<UserInfo[]> {
    await this.init();
    const rows = await this.client.query<{
      name: string;
      team: string | null;
      team_role: TeamRole;
      created_at: Date | string;
      tokens: number | string;
    }>(
      `SELECT u.name, u.team, u.team_role, u.created_at,
              (SELECT count(*) FROM sqlrecall_tokens t WHERE t.user_name = u.name) AS tokens
         FROM sqlrecall_users u ORDER BY u.name`,
    );
    return rows.map((r) => ({
      user: r.name,
      ...(r.team !== null ? { team: r.team, teamRole: r.team_role } : {}),
      createdAt: new Date(r.created_at).toISOString(),
      tokens: Number(r.tokens),
    }));
  }

  /** The principal a token stands for, or null when the token is malformed or unknown. */
  async authenticate(token: string): Promise<Principal | null> {
    if (!TOKEN_PATTERN.test(token)) return null;
    await this.init();
    const rows = await this.client.query<{ name: string; team: string | null; team_role: TeamRole }>(
      `SELECT u.name, u.team, u.team_role FROM sqlrecall_tokens t
         JOIN sqlrecall_users u ON u.name = t.user_name WHERE t.token_hash = $1`,
      [hashToken(token)],
    );
    const row = rows[0];
    if (!row) return null;
    return row.team !== null
      ? { user: row.name, team: row.team, teamRole: row.team_role }
      : { user: row.name };
  }
}

function checkName(name: string, what = 'user'): void {
  if (!USER_NAME_PATTERN.test(name))
    throw new SqlrecallError(
      'usage',
      `A ${what} name is 1 to 100 letters, digits, dots, underscores, @ or hyphens.`,
    );
}
