/**
 * `sqlrecall memory list|add|search|edit|delete|restore|history|show|export|import|off|on|reembed|pin|unpin|audit|forget`:
 * inspect and manage one user's (or, with `--team T`, one team's) memories. Every subcommand
 * works on exactly one scope; ids may be given in full or as a unique prefix (≥ 4 characters, as
 * printed). Commands that only read or change statuses work without the embedding model.
 */
import { readFile, writeFile } from 'node:fs/promises';
import {
  addMemory,
  applyPendingMemories,
  auditMemories,
  deleteAllMemories,
  deleteMemory,
  editMemory,
  exportMemories,
  findPendingMemory,
  forgetPendingMemory,
  getMemory,
  memoryHistory as historyOf,
  importMemories,
  listMemories,
  type PendingMemoryView,
  pendingNotFound,
  pinMemory,
  reembedMemories,
  resolveMemoryId,
  restoreMemory,
  searchMemories,
  setMemoryEnabled,
  showMemory,
} from '../../app/memory.js';
import { SqlrecallError } from '../../core/errors.js';
import {
  DEFAULT_MEMORY_TOP_K,
  MEMORY_KINDS,
  type Memory,
  type MemoryKind,
  type MemoryScope,
} from '../../core/memory.js';
import type { Schema } from '../../core/schema.js';
import { expiresOnOf, isExpired, untilOf, userTimeZone } from '../../memory/expiry.js';
import { provenanceLines, shortTime } from '../../memory/provenance.js';
import type { MemoryRuntime } from '../../runtime/memory-runtime.js';
import type { Runtime } from '../../runtime/runtime.js';
import { pc } from '../colors.js';
import type { CliIO } from '../io.js';
import { MEMORY_SUBCOMMANDS } from '../memory-subcommands.js';
import { printJson } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { reportError } from '../report.js';
import { withRuntime } from '../with-runtime.js';
import { warnTo } from './ask.js';

/** Subcommands of `memory` (declared with the help's list). */
export { MEMORY_SUBCOMMANDS };
/** See {@link MEMORY_SUBCOMMANDS}. */
export type MemorySubcommand = (typeof MEMORY_SUBCOMMANDS)[number];

/**
 * Subcommands that first apply the facts queued while the model server was down, when it now
 * answers: they show or change what the queue would change.
 */
const APPLIES_PENDING = new Set<MemorySubcommand>(['add', 'list', 'search', 'show', 'edit']);

/** Subcommands that need the embedding model (the others fall back to the model recorded in the store). */
const NEEDS_EMBEDDINGS = new Set<MemorySubcommand>(['add', 'search', 'edit', 'import', 'reembed']);

/** Options of the `memory` subcommands. */
export interface MemoryCommandOptions extends GlobalOptions {
  kind?: string;
  sql?: string;
  all?: boolean;
  topK?: string;
  out?: string;
  purge?: boolean;
  /** `add`/`edit --until DATE`: the memory expires at the end of that day (see `memory/expiry.ts`). */
  until?: string;
  /** `add --pin`: store the memory pinned (always recalled). */
  pin?: boolean;
  /** `audit --delete`: remove the memories holding a credential for good. */
  delete?: boolean;
}

function parseKind(value: string | undefined, fallback?: MemoryKind): MemoryKind {
  if (value === undefined && fallback) return fallback;
  if (value && (MEMORY_KINDS as readonly string[]).includes(value)) return value as MemoryKind;
  throw new SqlrecallError('usage', `--kind must be one of ${MEMORY_KINDS.join(', ')}.`);
}

/** One line per memory: short id, kind, status, text and SQL. */
export function memoryLine(memory: Memory, similarity?: number, zone?: string): string {
  const score = similarity === undefined ? '' : `${similarity.toFixed(3)}  `;
  const status = memory.status === 'active' ? '' : pc.yellow(` (${memory.status})`);
  const sql = memory.sql ? pc.dim(`  [${memory.sql}]`) : '';
  const until = memory.expiresAt
    ? pc.yellow(
        ` (${isExpired(memory) ? 'expired' : 'until'} ${expiresOnOf(memory, zone ?? userTimeZone())})`,
      )
    : '';
  const pinned = memory.pinned ? pc.green(' (pinned)') : '';
  return `${pc.cyan(memory.id.slice(0, 8))}  ${score}${memory.kind.padEnd(10)} ${memory.text}${status}${pinned}${until}${sql}`;
}

/**
 * One line for a fact waiting in the queue: the `pending` marker where a memory shows its id (it
 * has none yet), then kind and text, when it will be applied, and its queue id (for `memory show`
 * and `memory forget`).
 */
export function pendingLine(p: PendingMemoryView): string {
  const until = p.expiresOn ? pc.yellow(` (until ${p.expiresOn})`) : '';
  const pinned = p.pinned ? pc.green(' (pinned)') : '';
  const when =
    p.status === 'failed'
      ? pc.red(` (not applied: ${p.error ?? 'failed'})`)
      : pc.dim(' (saved; applied when the model server is reachable)');
  const queued = pc.dim(` [queue id ${pc.cyan(p.pendingId.slice(0, 8))}]`);
  return `${pc.yellow('pending ')}  ${p.kind.padEnd(10)} ${p.text}${pinned}${until}${when}${queued}`;
}

/** The lines of `memory show` for a fact waiting in the queue. */
export function pendingShowLines(p: PendingMemoryView): string[] {
  return [
    `Queued ${p.pendingId}: ${p.text}`,
    `Kind: ${p.kind}${p.pinned ? ' (pinned)' : ''}${p.expiresOn ? `, until ${p.expiresOn}` : ''}`,
    ...(p.sql ? [`SQL: ${p.sql}`] : []),
    `Queued at: ${shortTime(p.createdAt)}`,
    p.status === 'failed'
      ? `Status: not applied (${p.error ?? 'failed'}); it will not be retried`
      : 'Status: saved, not yet a memory (not recalled); applied when the model server is reachable',
    `Withdraw it: sqlrecall memory forget ${p.pendingId.slice(0, 8)}`,
  ];
}

/**
 * Runs `lookup` (a memory id's resolution); when it finds no memory, runs `queued` instead (the
 * id may be a queue id). Other errors pass through.
 */
async function memoryOrQueued<T>(lookup: () => Promise<T>, queued: () => Promise<T>): Promise<T> {
  try {
    return await lookup();
  } catch (error) {
    if (!(error instanceof SqlrecallError && error.code === 'not_found')) throw error;
    return queued();
  }
}

/** Resolves a full id or a unique prefix within the scope. @throws SqlrecallError `not_found`, `usage` */
const resolveId = resolveMemoryId;

async function optionalSchema(runtime: Runtime): Promise<Schema | undefined> {
  if (!runtime.config.databaseUrl) return undefined;
  try {
    const db = await runtime.database();
    return await db.introspect({
      schemas: runtime.config.schemas.length ? runtime.config.schemas : undefined,
    });
  } catch {
    return undefined; // SQL is then checked by the parser only
  }
}

/** What every `memory` subcommand handler gets. */
interface MemoryContext {
  io: CliIO;
  opts: MemoryCommandOptions;
  /** The subcommand (one handler serves `pin`/`unpin` and `off`/`on`). */
  sub: MemorySubcommand;
  /** Positional arguments after the subcommand. */
  args: string[];
  /** `args` joined by spaces and trimmed (the text of `add` and `search`). */
  text: string;
  runtime: Runtime;
  memory: MemoryRuntime;
  scope: MemoryScope;
  /** `user NAME` or `team NAME`, for messages. */
  who: string;
  /** The user's time zone (days typed and shown, `expiresOn`). */
  zone: string;
  /** Prints `doc` as JSON with `--json`, else runs `human`. */
  out: (doc: unknown, human: () => void) => void;
}

/** ` · last applied 2026-12-02 07:40 UTC` or ` · never applied`, for `memory list`. */
export function lastAppliedText(memory: Pick<Memory, 'lastAppliedAt'>): string {
  return memory.lastAppliedAt ? ` · last applied ${shortTime(memory.lastAppliedAt)}` : ' · never applied';
}

/** `memory list [--all] [--kind K]`: the memories of the scope (active ones unless `--all`). */
async function memoryList({ io, opts, memory, scope, who, zone, out }: MemoryContext): Promise<number> {
  const { enabled, memories, pending } = await listMemories(memory, scope, {
    all: Boolean(opts.all),
    ...(opts.kind ? { kind: parseKind(opts.kind) } : {}),
    zone,
  });
  out({ scope, enabled, memories, pending }, () => {
    if (!enabled) io.stdout.write(`${pc.yellow(`Memory is off for ${who}.`)}\n`);
    if (memories.length === 0 && pending.length === 0) io.stdout.write(`No memories for ${who}.\n`);
    for (const m of memories)
      io.stdout.write(`${memoryLine(m, undefined, zone)}${pc.dim(lastAppliedText(m))}\n`);
    for (const p of pending) io.stdout.write(`${pendingLine(p)}\n`);
  });
  return 0;
}

/**
 * `memory show ID`: where the memory came from (taught in which conversation, when, the user's
 * words; or added by hand, imported, a confirmed answer), what it replaced or what replaced it,
 * its history and when it was last applied.
 */
async function memoryShow({ io, args, memory, scope, zone, out }: MemoryContext): Promise<number> {
  const id = await memoryOrQueued(
    () => resolveId(memory, scope, args[0]),
    async () => {
      const queued = await findPendingMemory(memory, scope, args[0]);
      if (!queued) throw pendingNotFound(args[0] ?? '');
      out({ scope, pending: queued }, () => {
        for (const line of pendingShowLines(queued)) io.stdout.write(`${line}\n`);
      });
      return null;
    },
  );
  if (id === null) return 0;
  const provenance = await showMemory(memory, scope, id, zone);
  if (!provenance)
    throw new SqlrecallError('not_found', `No memory with id ${id.slice(0, 80)} in this scope.`);
  out({ scope, ...provenance }, () => {
    for (const line of provenanceLines(provenance)) io.stdout.write(`${line}\n`);
  });
  return 0;
}

/** `memory add [--kind K] [--sql SQL] [--until DATE] [--pin] TEXT`: remembers a fact through reconciliation. */
async function memoryAdd({
  opts,
  io,
  text,
  runtime,
  memory,
  scope,
  zone,
  out,
}: MemoryContext): Promise<number> {
  if (!text)
    throw new SqlrecallError(
      'usage',
      'Give the text to remember, e.g. memory add --kind preference "only customers from India".',
    );
  const kind = parseKind(opts.kind, 'preference');
  const until = opts.until === undefined ? null : untilOf(opts.until, new Date(), zone);
  const expiresAt = until?.expiresAt ?? null;
  const expiresOn = until?.expiresOn ?? null;
  const result = await addMemory(
    memory,
    scope,
    { kind, text, sql: opts.sql },
    { schema: await optionalSchema(runtime), expiresAt, expiresOn, pinned: Boolean(opts.pin) },
  );
  out({ scope, ...result, expiresAt, expiresOn }, () => {
    if (result.pending) {
      const until = expiresOn ? ` (until ${expiresOn})` : '';
      io.stdout.write(
        `Saved: ${text}${until}. ${pc.yellow('It will be applied when the model server is reachable.')}\n`,
      );
      return;
    }
    for (const c of result.changes) {
      if (c.replaced) io.stdout.write(`Replaced [${c.replaced.id.slice(0, 8)}] ${c.replaced.text}\n`);
      const verb = c.action === 'NOOP' ? 'Already remembered' : 'Remembered';
      const until = expiresOn && c.action !== 'NOOP' ? ` (until ${expiresOn})` : '';
      io.stdout.write(
        `${verb} [${c.id?.slice(0, 8) ?? '-'}]: ${c.text}${c.pinned ? ' (pinned)' : ''}${until}\n`,
      );
    }
    for (const p of result.problems) io.stderr.write(`${pc.yellow('note:')} ${p}\n`);
  });
  return 0;
}

/** `memory search [--top-k N] TEXT`: memories by similarity to TEXT. */
async function memorySearch({
  io,
  opts,
  text,
  memory,
  scope,
  who,
  zone,
  out,
}: MemoryContext): Promise<number> {
  if (!text) throw new SqlrecallError('usage', 'Give the text to search for.');
  const topK = opts.topK === undefined ? DEFAULT_MEMORY_TOP_K : Number(opts.topK);
  if (!Number.isInteger(topK) || topK < 1 || topK > 100)
    throw new SqlrecallError('usage', '--top-k must be a whole number from 1 to 100.');
  const { results, notes } = await searchMemories(memory, scope, text, { topK, zone });
  out({ scope, query: text, results, ...(notes.length > 0 ? { notes } : {}) }, () => {
    for (const note of notes) io.stderr.write(`${pc.yellow('note:')} ${note}\n`);
    if (results.length === 0) io.stdout.write(`No memories for ${who}.\n`);
    for (const m of results) io.stdout.write(`${memoryLine(m, m.similarity, zone)}\n`);
  });
  return 0;
}

/**
 * `memory edit ID [TEXT] [--kind K] [--sql SQL] [--until DAY]`: changes an active memory; when
 * nothing given differs from what is stored it says "Nothing to change" (exit 0) and writes nothing.
 */
async function memoryEdit({
  io,
  opts,
  args,
  runtime,
  memory,
  scope,
  zone,
  out,
}: MemoryContext): Promise<number> {
  const [given, ...rest] = args;
  const id = await resolveId(memory, scope, given);
  const current = await getMemory(memory, scope, id);
  if (current?.status !== 'active')
    throw new SqlrecallError('not_found', `The memory ${id.slice(0, 8)} is not active; restore it first.`);
  const edited = await editMemory(
    memory,
    scope,
    id,
    {
      kind: parseKind(opts.kind, current.kind),
      text: rest.join(' ').trim() || current.text,
      sql: opts.sql ?? current.sql,
      ...(opts.until === undefined ? {} : { until: untilOf(opts.until, new Date(), zone) }),
    },
    { schema: await optionalSchema(runtime), zone },
  );
  out({ scope, memory: edited.memory, changed: edited.changed }, () => {
    io.stdout.write(
      edited.changed
        ? `Updated [${id.slice(0, 8)}]: ${edited.memory.text}\n`
        : `Nothing to change [${id.slice(0, 8)}]: ${edited.memory.text}\n`,
    );
    for (const problem of edited.problems) io.stderr.write(`${pc.yellow('note:')} ${problem}\n`);
  });
  return 0;
}

/**
 * `memory delete ID` (or `memory forget ID`) or `memory delete --all [--purge]`: deletes a memory
 * (restorable) or purges; an id of a fact still waiting in the queue withdraws it (never applied).
 */
async function memoryDelete({
  io,
  opts,
  args,
  memory,
  scope,
  who,
  zone,
  out,
}: MemoryContext): Promise<number> {
  if (opts.all) {
    const count = await deleteAllMemories(memory, scope, { purge: Boolean(opts.purge) });
    out({ scope, deleted: count, purged: Boolean(opts.purge) }, () =>
      io.stdout.write(`${opts.purge ? 'Purged' : 'Deleted'} ${count} memories of ${who}.\n`),
    );
    return 0;
  }
  const id = await memoryOrQueued(
    () => resolveId(memory, scope, args[0]),
    async () => {
      const withdrawn = await forgetPendingMemory(memory, scope, args[0]);
      out({ scope, withdrawn }, () =>
        io.stdout.write(
          `Withdrawn queued memory [${withdrawn.pendingId.slice(0, 8)}]: ${withdrawn.text} (it will not be applied)\n`,
        ),
      );
      return null;
    },
  );
  if (id === null) return 0;
  const deleted = await deleteMemory(memory, scope, id, zone);
  out({ scope, memory: deleted }, () =>
    io.stdout.write(
      `Deleted [${id.slice(0, 8)}]: ${deleted.text} (undo: sqlrecall memory restore ${id.slice(0, 8)})\n`,
    ),
  );
  return 0;
}

/** `memory pin ID` / `memory unpin ID`: a pinned memory is always recalled. */
async function memoryPinUnpin({ io, args, memory, scope, zone, out, sub }: MemoryContext): Promise<number> {
  const id = await resolveId(memory, scope, args[0]);
  const pinned = sub === 'pin';
  const written = await pinMemory(memory, scope, id, pinned, zone);
  out({ scope, memory: written }, () =>
    io.stdout.write(
      `${pinned ? 'Pinned' : 'Unpinned'} [${id.slice(0, 8)}]: ${written.text}${pinned ? ' (always recalled)' : ''}\n`,
    ),
  );
  return 0;
}

/** `memory restore ID`: brings a deleted or superseded memory back. */
async function memoryRestore({ io, args, memory, scope, zone, out }: MemoryContext): Promise<number> {
  const id = await resolveId(memory, scope, args[0]);
  const written = await restoreMemory(memory, scope, id, zone);
  out({ scope, memory: written }, () => io.stdout.write(`Restored [${id.slice(0, 8)}]: ${written.text}\n`));
  return 0;
}

/** `memory history [ID]`: the changes of one memory or of the whole scope. */
async function memoryHistory({ io, args, memory, scope, out }: MemoryContext): Promise<number> {
  const id = args[0] ? await resolveId(memory, scope, args[0]) : undefined;
  const history = await historyOf(memory, scope, id);
  out({ scope, history }, () => {
    if (history.length === 0) io.stdout.write('No history.\n');
    for (const h of history) {
      const change =
        h.oldText && h.newText && h.oldText !== h.newText
          ? `${h.oldText} → ${h.newText}`
          : (h.newText ?? h.oldText ?? '');
      io.stdout.write(
        `${h.createdAt}  ${pc.cyan(h.memoryId.slice(0, 8))}  ${h.action.padEnd(9)} ${change}${h.reason ? pc.dim(`  (${h.reason})`) : ''}\n`,
      );
    }
  });
  return 0;
}

/** `memory export [--out FILE]`: the scope's memories as a JSON document. */
async function memoryExport({ io, opts, memory, scope, who }: MemoryContext): Promise<number> {
  const doc = await exportMemories(memory, scope);
  if (opts.out) {
    const file = opts.out;
    await writeFile(file, `${JSON.stringify(doc, null, 2)}\n`).catch((cause: unknown) => {
      throw new SqlrecallError('usage', `Cannot write ${file}: ${writeFailure(cause)}.`, { cause });
    });
    io.stderr.write(`Exported ${doc.memories.length} memories of ${who} to ${opts.out}.\n`);
  } else {
    printJson(io, doc);
  }
  return 0;
}

/** Why a file could not be written, in words (the OS error code when it is not a common one). */
function writeFailure(cause: unknown): string {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'its folder does not exist';
    case 'ENOTDIR':
      return 'part of the path is not a folder';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a folder';
    case 'ENOSPC':
      return 'the disk is full';
    case 'EROFS':
      return 'the file system is read-only';
    default:
      return code ?? 'the write failed';
  }
}

/** Why a file could not be read, in words (the OS error code when it is not a common one). */
function readFailure(cause: unknown): string {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a folder';
    case 'ENOTDIR':
      return 'part of the path is not a folder';
    default:
      return code ?? 'the read failed';
  }
}

/**
 * ` at line N` for a JSON parse error of `raw`, from the position Node's message gives (`at
 * position 42`, or `line 3 column 5` in newer versions); '' when it names none.
 */
function jsonErrorLine(raw: string, cause: unknown): string {
  const message = cause instanceof Error ? cause.message : '';
  const line = /line (\d+)/.exec(message);
  if (line) return ` at line ${line[1]}`;
  const position = /position (\d+)/.exec(message);
  if (position) return ` at line ${raw.slice(0, Number(position[1])).split('\n').length}`;
  if (raw.trim() === '') return ' (the file is empty)';
  return /Unexpected end/i.test(message) ? ` at line ${raw.split('\n').length} (it ends too early)` : '';
}

/** `memory import FILE|-`: imports an export document (duplicates skipped). */
async function memoryImport({ io, args, memory, scope, who, out }: MemoryContext): Promise<number> {
  const file = args[0];
  if (!file) throw new SqlrecallError('usage', 'Give the export file to import (or - for stdin).');
  const raw =
    file === '-'
      ? await readStream(io)
      : await readFile(file, 'utf8').catch((cause: unknown) => {
          throw new SqlrecallError('usage', `Cannot read ${file}: ${readFailure(cause)}.`, { cause });
        });
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch (cause) {
    throw new SqlrecallError(
      'usage',
      `Cannot read ${file}: not JSON${jsonErrorLine(raw, cause)}; give a file written by \`sqlrecall memory export\`.`,
      { cause },
    );
  }
  const result = await importMemories(memory, scope, doc);
  out(
    {
      scope,
      imported: result.imported,
      duplicates: result.duplicates,
      superseded: result.superseded,
      problems: result.problems,
    },
    () => {
      for (const p of result.problems) io.stderr.write(`${pc.yellow('note:')} ${p}\n`);
      io.stdout.write(
        `Imported ${result.imported} memories into ${who} (${result.duplicates} duplicates skipped).\n`,
      );
      for (const s of result.superseded) {
        io.stdout.write(
          `Replaced [${s.id.slice(0, 8)}] ${s.text} (by imported [${s.by.slice(0, 8)}]; undo: sqlrecall memory restore ${s.id.slice(0, 8)})\n`,
        );
      }
    },
  );
  return 0;
}

/**
 * `memory audit [--delete]`: lists the memories (any status) and history entries that hold a
 * credential, masked; with `--delete` removes them for good. Exit 0 when none is left, 1 when
 * some were found and kept (so a script can notice).
 */
async function memoryAudit({ io, opts, memory, scope, who, out }: MemoryContext): Promise<number> {
  const audit = await auditMemories(memory, scope, { remove: Boolean(opts.delete) });
  const { removed } = audit;
  out({ scope, found: audit.found, removed }, () => {
    if (audit.found.length === 0) {
      io.stdout.write(`No credentials in the memories of ${who}.\n`);
      return;
    }
    for (const e of audit.found) {
      const where = e.pendingId
        ? 'pending write'
        : e.historyId
          ? 'history of'
          : `${e.kind ?? ''} ${e.status ?? ''}`.trim();
      const what = e.found.map((f) => `${f.label} (${f.masked})`).join(', ');
      io.stdout.write(`${pc.cyan(e.memoryId.slice(0, 8))}  ${where}: ${what}\n`);
    }
    if (removed)
      io.stdout.write(
        `Removed for good ${removed.memories} memories and ${removed.history} history entries holding credentials.\n`,
      );
    else
      io.stdout.write(
        `${audit.found.length} stored entries hold credentials. Remove them for good with: sqlrecall memory audit --delete\n`,
      );
  });
  return audit.found.length > 0 && !removed ? 1 : 0;
}

/** `memory off` / `memory on`: stops or resumes recall and learning for the scope. */
async function memoryOffOn({ io, memory, scope, who, out, sub }: MemoryContext): Promise<number> {
  await setMemoryEnabled(memory, scope, sub === 'on');
  out({ scope, enabled: sub === 'on' }, () =>
    io.stdout.write(
      sub === 'on'
        ? `Memory is on for ${who}.\n`
        : `Memory is off for ${who}: nothing will be recalled or learned (memories are kept; \`sqlrecall memory on\` resumes).\n`,
    ),
  );
  return 0;
}

/** The handler of each subcommand but `reembed` (which needs no open memory store). */
const HANDLERS: Record<Exclude<MemorySubcommand, 'reembed'>, (context: MemoryContext) => Promise<number>> = {
  list: memoryList,
  add: memoryAdd,
  search: memorySearch,
  edit: memoryEdit,
  delete: memoryDelete,
  forget: memoryDelete,
  pin: memoryPinUnpin,
  unpin: memoryPinUnpin,
  restore: memoryRestore,
  history: memoryHistory,
  export: memoryExport,
  import: memoryImport,
  off: memoryOffOn,
  on: memoryOffOn,
  audit: memoryAudit,
  show: memoryShow,
};

/** Runs `memory <subcommand> [args…]`. */
export async function runMemory(
  io: CliIO,
  opts: MemoryCommandOptions,
  subcommand: string,
  args: string[],
): Promise<number> {
  const json = Boolean(opts.json);
  if (!(MEMORY_SUBCOMMANDS as readonly string[]).includes(subcommand)) {
    return reportError(
      io,
      json,
      new SqlrecallError(
        'usage',
        `Unknown memory command "${subcommand}"; use one of ${MEMORY_SUBCOMMANDS.join(', ')}.`,
      ),
    );
  }
  const sub = subcommand as MemorySubcommand;
  return withRuntime(
    io,
    opts,
    async (runtime, config) => {
      const scope: MemoryScope = config.team !== undefined ? { team: config.team } : { user: config.user };
      const who = scope.team !== undefined ? `team ${scope.team}` : `user ${scope.user}`;
      if (sub === 'reembed') return await reembed(io, runtime, json);
      // The zone first: an unknown SQLRECALL_TZ is a configuration error before anything opens.
      const zone = userTimeZone(io.env);
      const memory = await runtime.memory({
        allowWithoutEmbeddings: !NEEDS_EMBEDDINGS.has(sub),
        // With the model server down, `add` keeps the fact in the queue rather than failing, and
        // the reading commands open even a fresh store (its queue is all there is to show).
        queueWhenDown: sub === 'add' || !NEEDS_EMBEDDINGS.has(sub),
      });
      if (memory.canEmbed && APPLIES_PENDING.has(sub)) {
        const applied = await applyPendingMemories(memory, scope, { schema: await optionalSchema(runtime) });
        if (applied.applied > 0 && !json)
          io.stderr.write(
            `Applied ${applied.applied} memory write(s) saved while the model server was down.\n`,
          );
      }
      const out = (doc: unknown, human: () => void) => (json ? printJson(io, doc) : human());
      const text = args.join(' ').trim();
      return await HANDLERS[sub]({ io, opts, sub, args, text, runtime, memory, scope, who, zone, out });
    },
    // Memories are about the configured database; the demo shop is never picked for them silently.
    { warn: warnTo(io), demoDefault: false },
  );
}

async function readStream(io: CliIO): Promise<string> {
  let text = '';
  for await (const chunk of io.stdin) text += String(chunk);
  return text;
}

/** `memory reembed`: re-embeds every memory with the configured embedding model. */
async function reembed(io: CliIO, runtime: Runtime, json: boolean): Promise<number> {
  const memory = await runtime.memory({ skipInit: true });
  const { model, dimensions } = memory.embedding;
  const result = await reembedMemories(memory, (p) => {
    if (!json && io.stderrIsTTY) io.stderr.write(`\rre-embedding ${p.done}/${p.total}`);
  });
  const before = result.from;
  if (!json && io.stderrIsTTY) io.stderr.write('\n');
  if (json) printJson(io, result);
  else
    io.stdout.write(
      `Re-embedded ${result.reembedded} memories with ${model} (${dimensions} dimensions)${before ? `; was ${before.model} (${before.dimensions})` : ''}.\n`,
    );
  return 0;
}
