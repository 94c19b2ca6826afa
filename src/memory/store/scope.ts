/**
 * Scopes in SQL. A scope is stored as the literal id in `scope_user` or `scope_team` (exactly one
 * set) plus `scope_key`, the hex SHA-256 of the kind-prefixed id. The key keeps btree index entries
 * small whatever the id's length (a raw 10,000-character id would exceed PostgreSQL's ~2.7 kB
 * btree row limit) and distinguishes user `x` from team `x`; every query still compares the literal
 * id with `=` too, so two ids can never share rows even on a hash collision. Ids are bound
 * parameters, never spliced into SQL: `*`, `%`, `_` and quotes are ordinary characters.
 */
import { createHash } from 'node:crypto';
import { SqlrecallError } from '../../core/errors.js';
import type { MemoryScope } from '../../core/memory.js';

/** A validated scope, ready for SQL. */
export interface ScopeRef {
  /** Column holding the literal id (a fixed identifier chosen by kind, never user input). */
  column: 'scope_user' | 'scope_team';
  /** The literal id. */
  id: string;
  /** Hex SHA-256 of `user:<id>` / `team:<id>`. */
  key: string;
  scope: MemoryScope;
}

/**
 * Validates a scope and computes its key.
 * @throws SqlrecallError `usage` when neither or both of user/team are set, or an id is empty or
 *   contains a NUL character (PostgreSQL text cannot hold one)
 */
export function scopeRef(scope: MemoryScope): ScopeRef {
  const user = (scope as { user?: unknown }).user;
  const team = (scope as { team?: unknown }).team;
  const hasUser = user !== undefined && user !== null;
  const hasTeam = team !== undefined && team !== null;
  if (hasUser === hasTeam) {
    throw new SqlrecallError('usage', 'A memory scope needs exactly one of a user id or a team id.');
  }
  const id = hasUser ? user : team;
  const kind = hasUser ? 'user' : 'team';
  if (typeof id !== 'string' || id.length === 0) {
    throw new SqlrecallError('usage', `The ${kind} id of a memory scope must be a non-empty string.`);
  }
  if (id.includes('\u0000')) {
    throw new SqlrecallError('usage', `The ${kind} id of a memory scope cannot contain a NUL character.`);
  }
  return {
    column: hasUser ? 'scope_user' : 'scope_team',
    id,
    key: createHash('sha256').update(`${kind}:${id}`, 'utf8').digest('hex'),
    scope: hasUser ? { user: id } : { team: id },
  };
}

/**
 * The WHERE condition selecting a scope's rows: `scope_key = $k AND scope_user = $i` (or
 * `scope_team`), with `$k`/`$i` at the given parameter positions and an optional table alias.
 */
export function scopeCondition(ref: ScopeRef, keyParam: number, idParam: number, alias = ''): string {
  const prefix = alias ? `${alias}.` : '';
  return `${prefix}scope_key = $${keyParam} AND ${prefix}${ref.column} = $${idParam}`;
}

/** Values for the `scope_key, scope_user, scope_team` columns of an insert. */
export function scopeColumns(ref: ScopeRef): [string, string | null, string | null] {
  return [ref.key, ref.column === 'scope_user' ? ref.id : null, ref.column === 'scope_team' ? ref.id : null];
}

/** The scope of a row from its `scope_user` / `scope_team` columns. */
export function scopeOfRow(row: { scope_user?: unknown; scope_team?: unknown }): MemoryScope {
  return typeof row.scope_user === 'string' ? { user: row.scope_user } : { team: String(row.scope_team) };
}
