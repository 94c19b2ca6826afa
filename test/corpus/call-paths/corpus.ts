/**
 * The schema the call-path corpus (`call-paths.jsonl`) runs against: a small table, an audit table
 * that must stay empty, and one "leak" function reached through every way PostgreSQL can invoke a
 * function without an ordinary call in the text — column notation on a scalar and on a row,
 * operators (in ANY/ALL, IN, BETWEEN, CASE … WHEN, IS DISTINCT FROM, NULLIF, ORDER BY, DISTINCT,
 * GROUP BY, joins), explicit and implicit casts, a domain CHECK, a row-level-security policy, a
 * function with a SET clause — each beside a harmless twin that must still run.
 *
 * `leak` writes a row to `audit`. On a server with dblink it writes through dblink, so the write
 * survives the read-only transaction (the real attack); elsewhere it is a plain INSERT, which the
 * read-only transaction would stop, so there the corpus shows the guard's verdict alone.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How `leak(note)` writes: through dblink (outlives the rollback) or a plain INSERT. */
export type LeakKind = 'dblink' | 'insert';

/** DDL and rows of the call-path schema. */
export function callPathSchema(kind: LeakKind): string {
  const write =
    kind === 'dblink'
      ? `PERFORM dblink_exec('dbname=' || current_database() || ' host=127.0.0.1 user=postgres',
                             format('INSERT INTO audit VALUES (%L)', note));`
      : 'INSERT INTO audit VALUES (note);';
  return `
CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO items VALUES (1, 'apple'), (2, 'banana'), (3, 'cherry');
CREATE TABLE audit (note text);
CREATE FUNCTION leak(note text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
  BEGIN ${write} RETURN true; END $$;
-- column notation: (x).f and row.f
CREATE FUNCTION leak_int(i int) RETURNS int LANGUAGE plpgsql VOLATILE AS $$
  BEGIN PERFORM leak('leak_int'); RETURN i; END $$;
CREATE FUNCTION double_it(i int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT i * 2';
CREATE FUNCTION item_leak(r items) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
  BEGIN RETURN leak('item_leak'); END $$;
CREATE FUNCTION item_label(r items) RETURNS text LANGUAGE sql IMMUTABLE AS 'SELECT r.id || '':'' || r.name';
-- operators: a writing = / >= / <= between text and bigint, and a writing === between ints
CREATE FUNCTION leak_text_bigint(a text, b bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
  BEGIN RETURN leak('operator'); END $$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = bigint, FUNCTION = leak_text_bigint);
CREATE OPERATOR public.>= (LEFTARG = text, RIGHTARG = bigint, FUNCTION = leak_text_bigint);
CREATE OPERATOR public.<= (LEFTARG = text, RIGHTARG = bigint, FUNCTION = leak_text_bigint);
CREATE FUNCTION leak_int_int(a int, b int) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
  BEGIN RETURN leak('operator'); END $$;
CREATE OPERATOR === (LEFTARG = int, RIGHTARG = int, FUNCTION = leak_int_int);
-- casts: an implicit cast int -> tag whose function writes
CREATE TYPE tag AS (v text);
CREATE FUNCTION int_to_tag(i int) RETURNS tag LANGUAGE plpgsql VOLATILE AS $$
  BEGIN PERFORM leak('cast'); RETURN ROW(i::text)::tag; END $$;
CREATE CAST (int AS tag) WITH FUNCTION int_to_tag(int) AS IMPLICIT;
CREATE FUNCTION tag_text(t tag) RETURNS text LANGUAGE sql IMMUTABLE AS 'SELECT t.v';
-- domains: a CHECK that writes, and a harmless one
CREATE FUNCTION leak_check(i int) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
  BEGIN RETURN leak('domain'); END $$;
CREATE DOMAIN watched AS int CHECK (leak_check(VALUE));
CREATE DOMAIN positive AS int CHECK (VALUE > 0);
-- row-level security: a policy calling a writing SECURITY DEFINER function, and a harmless one
CREATE TABLE notes (id int, body text);
INSERT INTO notes VALUES (1, 'note');
CREATE FUNCTION note_visible(i int) RETURNS boolean LANGUAGE plpgsql STABLE SECURITY DEFINER AS $$
  BEGIN PERFORM leak('policy'); RETURN true; END $$;
ALTER TABLE notes ENABLE ROW LEVEL SECURITY;
CREATE POLICY notes_visible ON notes USING (note_visible(id));
CREATE TABLE open_notes (id int, body text);
INSERT INTO open_notes VALUES (1, 'open');
ALTER TABLE open_notes ENABLE ROW LEVEL SECURITY;
CREATE POLICY open_notes_positive ON open_notes USING (id > 0);
-- a view over a credential catalog (it runs with its owner's rights)
CREATE VIEW role_secrets AS SELECT rolname, rolpassword FROM pg_authid;
-- a STABLE function with a SET clause (it could be SET role = …)
CREATE FUNCTION count_with_settings() RETURNS bigint LANGUAGE sql STABLE SET search_path = public
  AS 'SELECT count(*) FROM items';
`;
}

/** One record of the call-path corpus. */
export interface CallPath {
  id: string;
  /** The call path the record covers (SECURITY.md lists them). */
  path: string;
  sql: string;
  verdict: 'refused' | 'accepted';
  /** The rule expected to refuse (when the server analysed the statement). */
  rule?: string;
  /** Rows an accepted statement returns. */
  rows?: unknown[][];
  /**
   * The refusal applies only where the path is live: `rls-active` (the role is subject to the
   * table's policies: not a superuser), `sees-sessions` (the role may read other sessions'
   * statements). Elsewhere the statement is harmless and must run.
   */
  only?: 'rls-active' | 'sees-sessions';
}

/** The corpus, in file order. */
export const CALL_PATHS: CallPath[] = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), 'call-paths.jsonl'),
  'utf8',
)
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as CallPath);
