/**
 * Server-side prepared statements for the embedded memory store's owner, for server
 * throughput. PGlite's `query` parses, analyzes and plans its text on every call (an unnamed
 * statement of the extended protocol); a question runs the same handful of parameterized
 * statements (recall, example search, conversation turn, token, settings). So a parameterized
 * single statement is parsed once per PGlite instance as a NAMED statement of the extended
 * protocol (Parse + Describe), and each call binds and executes it, with PGlite's own serializers
 * and result parser: PostgreSQL keeps its plan (a generic plan after five runs, by its own
 * `plan_cache_mode = auto` rule). SQL-level `EXECUTE name($1)` cannot carry bind parameters (a
 * utility statement's arguments are not analyzed at Parse), hence the protocol messages.
 *
 * Only for the process that owns the PGlite, outside transactions: a failure inside a transaction
 * would abort it, while here a statement that cannot be prepared (or whose prepared form is gone or
 * stale) simply runs as before. Socket clients and server PostgreSQL are untouched (through the
 * socket several connections share one session, so names could collide; behind a transaction-mode
 * pooler a server's prepared statements are not reliably there).
 */
import { createHash } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';

/** Most statements prepared per PGlite instance; past it, statements run unprepared. 64. */
export const MAX_PREPARED_PER_INSTANCE = 64;

/** Single-statement DML or query that `PREPARE` accepts (no `;`, so never two statements). */
const PREPARABLE = /^\s*(select|with|insert|update|delete)\b[^;]*$/i;

/**
 * SQLSTATEs after which the prepared form is dropped and the text runs as it is: 26000 (the
 * statement is gone: a `DEALLOCATE` in the shared session), 0A000 (a cached plan whose result type
 * changed under it).
 */
const STALE = new Set(['26000', '0A000']);

/** Statement names by text (one hash per distinct text for the life of the process). */
const names = new Map<string, string>();

/**
 * Per instance: parameter type OIDs of each statement prepared in its session, or false once a text
 * could not be; with the session's reset count when they were prepared (a reset for another client
 * of a shared session drops every prepared statement).
 */
const preparedIn = new WeakMap<PGlite, { resets: number; statements: Map<string, number[] | false> }>();

type PgliteModule = typeof import('@electric-sql/pglite');
/** PGlite's protocol helpers, loaded on first use (only an owner, which has loaded PGlite, gets here). */
let library: Promise<PgliteModule> | undefined;

/** `sqlrecall_` + 20 hex characters of SHA-256 of the text: the same text always has the same name. */
function nameOf(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `sqlrecall_${createHash('sha256').update(text).digest('hex').slice(0, 20)}`;
    if (names.size < 1024) names.set(text, name);
  }
  return name;
}

function sqlstate(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Sends `messages` in order and ends with Sync (also after an error: the server skips everything up
 * to the Sync after an ErrorResponse), as PGlite's own `query` does.
 * @returns every backend message of the exchange
 * @throws PGlite's `DatabaseError` for an ErrorResponse (after the Sync)
 */
async function exchange(db: PGlite, lib: PgliteModule, messages: Uint8Array[]): Promise<BackendMessages> {
  const out: BackendMessages = [];
  try {
    for (const message of messages) out.push(...(await db.execProtocolStream(message, { syncToFs: false })));
  } finally {
    out.push(...(await db.execProtocolStream(lib.protocol.serialize.sync())));
  }
  return out;
}

type BackendMessages = Awaited<ReturnType<PGlite['execProtocolStream']>>;

/**
 * Runs `text` with `params` on `db` (outside any transaction; the caller holds the instance's
 * gate), through a named prepared statement when the text is one parameterized statement.
 * `resets`: how many times the session was reset so far (`Gate.resets`); when it changed, every
 * statement is prepared anew.
 * @returns the result rows, as `db.query(text, params).rows` returns them
 * @throws the database error of the statement itself (a statement that cannot be prepared runs
 *   unprepared, and its own error, if any, is the one thrown)
 */
export async function queryPrepared<R>(
  db: PGlite,
  text: string,
  params: unknown[],
  resets = 0,
): Promise<R[]> {
  if (params.length === 0 || !PREPARABLE.test(text)) return (await db.query<R>(text, params)).rows;
  let session = preparedIn.get(db);
  if (session?.resets !== resets) {
    session = { resets, statements: new Map() };
    preparedIn.set(db, session);
  }
  const prepared = session.statements;
  const name = nameOf(text);
  let types = prepared.get(name);
  if (types === false || (types === undefined && prepared.size >= MAX_PREPARED_PER_INSTANCE))
    return (await db.query<R>(text, params)).rows;
  library ??= import('@electric-sql/pglite');
  const lib = await library;
  const { serialize } = lib.protocol;
  if (types === undefined) {
    try {
      const described = await exchange(db, lib, [
        serialize.parse({ name, text }),
        serialize.describe({ type: 'S', name }),
      ]);
      types = lib.parse.parseDescribeStatementResults(described);
      prepared.set(name, types);
    } catch {
      // e.g. a parameter whose type cannot be inferred alone: run it as PGlite always did.
      prepared.set(name, false);
      return (await db.query<R>(text, params)).rows;
    }
  }
  const oids = types;
  const values = params.map((value, i) => {
    if (value === null || value === undefined) return null;
    const serializer = db.serializers[oids[i] as number];
    return serializer ? serializer(value) : String(value);
  });
  let messages: BackendMessages;
  try {
    messages = await exchange(db, lib, [
      serialize.bind({ statement: name, values }),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
    ]);
  } catch (error) {
    if (!STALE.has(sqlstate(error) ?? '')) throw error;
    prepared.delete(name);
    await exchange(db, lib, [serialize.close({ type: 'S', name })]).catch(() => undefined);
    return (await db.query<R>(text, params)).rows;
  }
  return (lib.parse.parseResults(messages, db.parsers)[0]?.rows ?? []) as R[];
}
