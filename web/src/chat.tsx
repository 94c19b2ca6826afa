/**
 * The chat: a conversations sidebar (a drawer on the phone), streamed answers with live progress
 * steps, Stop and Retry, SQL that can be edited and run, the table, the chart, applied-memory chips
 * and thumbs up/down. The turns list is the only scrolling area; it follows new output unless the
 * person scrolled up.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  type Applied,
  api,
  askStream,
  type Cell,
  type Chart,
  type Column,
  type ConversationInfo,
  type ConversationTurn,
  conversationStore,
  runSql,
} from './api';
import { CrossIcon, PencilIcon, ThumbDownIcon, ThumbUpIcon } from './icons';
import { WhereFrom } from './provenance';
import { ResultChart, ResultTable, SqlBlock } from './result';

/** The pipeline stages shown while a question runs, in order. */
const STAGES = ['Finding tables', 'Writing SQL', 'Checking and running', 'Answering'] as const;

interface Turn {
  key: number;
  /** 'ask' for a question, 'sql' for SQL the person edited and ran, 'past' for a reopened turn. */
  kind: 'ask' | 'sql' | 'past';
  question: string;
  without: string[];
  status: 'working' | 'done' | 'error' | 'stopped';
  /** Index into {@link STAGES} of the stage running now. */
  stage: number;
  sql?: string;
  columns?: Column[];
  rows?: Cell[][];
  rowCount?: number | null;
  truncated?: boolean;
  truncatedReason?: 'max_rows' | 'max_bytes';
  answer: string;
  /** Memories applied to the answer (verified in its SQL). */
  applied: Applied[];
  /** Texts of the memories recalled for the question (shown while it runs). */
  recalled: string[];
  /** Memories shown to the model but not verified in the SQL (after the answer). */
  recalledOnly: Applied[];
  chart: Chart | null;
  notes: string[];
  /** Answered without the model: the badge text, e.g. "from saved example 1a2b3c4d". */
  path?: string;
  /** The user's data policy kept the rows from the model (privacy mode). */
  privacy?: boolean;
  error?: string;
  feedback?: string;
}

let nextKey = 1;

function newTurn(kind: Turn['kind'], question: string, without: string[] = []): Turn {
  return {
    key: nextKey++,
    kind,
    question,
    without,
    status: 'working',
    stage: 0,
    answer: '',
    applied: [],
    recalled: [],
    recalledOnly: [],
    chart: null,
    notes: [],
  };
}

function Feedback({ turn, update }: { turn: Turn; update: (t: Partial<Turn>) => void }) {
  const [correcting, setCorrecting] = useState(false);
  const [corrected, setCorrected] = useState(turn.sql ?? '');
  const send = async (rating: 'up' | 'down', correctedSql?: string) => {
    try {
      const r = await api<{ stored: { action: string } | null }>('/api/feedback', {
        method: 'POST',
        body: { rating, question: turn.question, sql: turn.sql, ...(correctedSql ? { correctedSql } : {}) },
      });
      update({
        feedback: r.stored ? 'Saved as an example for similar questions.' : 'Thanks for the feedback.',
      });
      setCorrecting(false);
    } catch (e) {
      update({ feedback: (e as Error).message });
    }
  };
  if (!turn.sql) return null;
  return (
    <div class="feedback">
      <button type="button" aria-label="Good answer, save as an example" onClick={() => void send('up')}>
        <ThumbUpIcon />
      </button>
      <button type="button" aria-label="Bad answer" onClick={() => setCorrecting(!correcting)}>
        <ThumbDownIcon />
      </button>
      {turn.feedback && <span role="status">{turn.feedback}</span>}
      {correcting && (
        <form
          class="correction"
          onSubmit={(e) => {
            e.preventDefault();
            void send('down', corrected.trim() || undefined);
          }}
        >
          <label>
            Corrected SQL (optional)
            <textarea value={corrected} onInput={(e) => setCorrected(e.currentTarget.value)} rows={3} />
          </label>
          <button type="submit">Send</button>
        </form>
      )}
    </div>
  );
}

/** Edit a turn's SQL and run it through `POST /api/sql` (same guard and limits as questions). */
function SqlEditor({ sql, onRun, busy }: { sql: string; onRun: (sql: string) => void; busy: boolean }) {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState(sql);
  if (!open)
    return (
      <button type="button" class="edit-sql" onClick={() => setOpen(true)}>
        Edit SQL
      </button>
    );
  return (
    <form
      class="sql-editor"
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim()) onRun(text.trim());
      }}
    >
      <label>
        SQL to run
        <textarea value={text} rows={4} spellcheck={false} onInput={(e) => setText(e.currentTarget.value)} />
      </label>
      <div class="row-actions">
        <button type="submit" disabled={busy}>
          Run SQL
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Progress({ turn }: { turn: Turn }) {
  return (
    <ol class="progress" aria-label="Progress">
      {STAGES.map((label, i) => (
        <li
          key={label}
          data-state={i < turn.stage ? 'done' : i === turn.stage ? 'active' : 'pending'}
          aria-current={i === turn.stage ? 'step' : undefined}
        >
          {label}
          {i < turn.stage ? ' ✓' : i === turn.stage ? '…' : ''}
        </li>
      ))}
    </ol>
  );
}

/** The conversations list: newest first, with rename and delete. */
function Conversations({
  current,
  version,
  onOpen,
  onNew,
  onDeleted,
}: {
  current: string | undefined;
  version: number;
  onOpen: (id: string) => void;
  onNew: () => void;
  onDeleted: (id: string) => void;
}) {
  const [items, setItems] = useState<ConversationInfo[]>([]);
  const [error, setError] = useState('');
  const [renaming, setRenaming] = useState<string | null>(null);
  const [title, setTitle] = useState('');
  const load = () =>
    api<{ conversations: ConversationInfo[] }>('/api/conversations?limit=50')
      .then((r) => {
        setItems(r.conversations);
        setError('');
      })
      .catch((e: Error) => setError(e.message));
  // reload when a turn finishes (version changes)
  useEffect(() => {
    void load();
  }, [version]);
  const rename = async (id: string) => {
    try {
      await api(`/api/conversations/${encodeURIComponent(id)}`, { method: 'PATCH', body: { title } });
      setRenaming(null);
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  const remove = async (id: string) => {
    try {
      await api(`/api/conversations/${encodeURIComponent(id)}`, { method: 'DELETE' });
      onDeleted(id);
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <nav class="conversations" aria-label="Conversations">
      <button type="button" class="new-chat" onClick={onNew}>
        New chat
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {items.length === 0 && !error && <p class="muted">No conversations yet.</p>}
      <ul>
        {items.map((c) => {
          const name = c.title ?? c.firstQuestion ?? c.summary ?? 'Conversation';
          return (
            <li key={c.id} class={c.id === current ? 'current' : undefined}>
              {renaming === c.id ? (
                <form
                  onSubmit={(e) => {
                    e.preventDefault();
                    void rename(c.id);
                  }}
                >
                  <label class="sr-only" for={`rename-${c.id}`}>
                    New name
                  </label>
                  <input
                    id={`rename-${c.id}`}
                    value={title}
                    maxLength={200}
                    onInput={(e) => setTitle(e.currentTarget.value)}
                  />
                  <button type="submit">Save</button>
                </form>
              ) : (
                <button
                  type="button"
                  class="open"
                  title={name}
                  aria-current={c.id === current ? 'true' : undefined}
                  onClick={() => onOpen(c.id)}
                >
                  {name}
                  <span class="muted"> · {c.turnCount}</span>
                </button>
              )}
              <span class="conv-actions">
                <button
                  type="button"
                  aria-label={`Rename: ${name}`}
                  onClick={() => {
                    setRenaming(renaming === c.id ? null : c.id);
                    setTitle(name);
                  }}
                >
                  <PencilIcon />
                </button>
                <button type="button" aria-label={`Delete: ${name}`} onClick={() => void remove(c.id)}>
                  <CrossIcon />
                </button>
              </span>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

/** Turns of a stored conversation, shown as finished turns (rows are not kept, only the SQL). */
function pastTurns(turns: ConversationTurn[]): Turn[] {
  return turns.map((t) => ({
    ...newTurn('past', t.question),
    status: 'done',
    stage: STAGES.length,
    ...(t.sql ? { sql: t.sql } : {}),
    rowCount: t.rowCount,
    answer: t.summary ?? '',
    applied: t.appliedMemories ?? [],
    recalledOnly: t.recalledMemories ?? [],
  }));
}

/** The memory chips of an answer: applied ones, then recalled ones (styled apart), each with its origin. */
function MemoryChips({
  turn,
  busy,
  onWithout,
}: {
  turn: Turn;
  busy: boolean;
  onWithout: (id: string) => void;
}) {
  const groups = [
    { key: 'applied', legend: 'Applied:', items: turn.applied },
    { key: 'recalled', legend: 'Recalled (not verified in the SQL):', items: turn.recalledOnly },
  ].filter((g) => g.items.length > 0);
  return (
    <>
      {groups.map((g) => (
        <fieldset class={`chips ${g.key}`} key={g.key}>
          <legend>{g.legend}</legend>
          {g.items.map((m) => (
            <span class="chip-wrap" key={m.id}>
              <button
                type="button"
                class={`chip ${g.key}`}
                title="Ask again without this memory"
                aria-label={`Ask again without: ${m.text}`}
                disabled={busy}
                onClick={() => onWithout(m.id)}
              >
                {m.text} <span aria-hidden="true">×</span>
              </button>
              <WhereFrom id={m.id} text={m.text} />
            </span>
          ))}
        </fieldset>
      ))}
    </>
  );
}

export function ChatPanel({ onLearned }: { onLearned: () => void }) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [text, setText] = useState('');
  const [conversationId, setConversationIdState] = useState<string | undefined>(
    () => conversationStore.get() ?? undefined,
  );
  const [running, setRunning] = useState<AbortController | null>(null);
  const [listVersion, setListVersion] = useState(0);
  const [drawer, setDrawer] = useState(false);
  const history = useRef<string[]>([]);
  const list = useRef<HTMLDivElement>(null);
  const follow = useRef(true);
  /** Set when a conversation was (re)opened: show its last question, not the end of its answer. */
  const reopened = useRef(false);

  const setConversationId = (id: string | undefined) => {
    setConversationIdState(id);
    if (id) conversationStore.set(id);
    else conversationStore.clear();
  };

  const open = async (id: string) => {
    try {
      const r = await api<{ turns: ConversationTurn[] }>(
        `/api/conversations/${encodeURIComponent(id)}?turns=50`,
      );
      setConversationId(id);
      setTurns(pastTurns(r.turns));
      follow.current = false;
      reopened.current = true;
    } catch {
      setConversationId(undefined);
    }
    setDrawer(false);
  };

  // A reload reopens the conversation that was open.
  useEffect(() => {
    if (conversationId) void open(conversationId);
  }, []);

  // Follow new output unless the person scrolled up; a reopened conversation starts at its last
  // question (the answer below it is read from the top, as when it was asked).
  useLayoutEffect(() => {
    const el = list.current;
    if (!el) return;
    if (reopened.current) {
      const last = el.querySelector<HTMLElement>('article.turn:last-of-type');
      if (!last) return;
      reopened.current = false;
      el.scrollTop = Math.max(0, last.offsetTop - 8); // the list is the turns' offset parent
      return;
    }
    if (follow.current) el.scrollTop = el.scrollHeight;
  });

  const patch = (key: number, p: Partial<Turn> | ((t: Turn) => Partial<Turn>)) =>
    setTurns((all) =>
      all.map((t) => (t.key === key ? { ...t, ...(typeof p === 'function' ? p(t) : p) } : t)),
    );

  const ask = async (question: string, without: string[] = [], replace?: number) => {
    if (running) return;
    const turn = newTurn('ask', question, without);
    const key = turn.key;
    if (history.current.at(-1) !== question) history.current.push(question);
    setTurns((all) => [...all.filter((t) => t.key !== replace), turn]);
    follow.current = true;
    const controller = new AbortController();
    setRunning(controller);
    try {
      await askStream(
        { question, conversationId, ...(without.length ? { without } : {}) },
        (event, data) => {
          const d = data as Record<string, unknown>;
          switch (event) {
            case 'recalled': {
              const memories = (d.memories as { text: string }[] | undefined) ?? [];
              patch(key, { recalled: memories.map((m) => m.text) });
              break;
            }
            case 'schema':
              patch(key, { stage: 1 });
              break;
            case 'fallback':
              patch(key, {
                path:
                  d.path === 'example'
                    ? `from saved example ${String(d.exampleId ?? '').slice(0, 8)}`
                    : 'rule-based answer',
              });
              break;
            case 'sql':
              patch(key, { sql: d.sql as string, stage: 2 });
              break;
            case 'rows':
              patch(key, {
                stage: 3,
                columns: d.columns as Column[],
                rows: d.rows as Cell[][],
                truncated: d.truncated as boolean,
                ...(d.truncatedReason
                  ? { truncatedReason: d.truncatedReason as Turn['truncatedReason'] }
                  : {}),
              });
              break;
            case 'answer_token':
              patch(key, (t) => ({ stage: 3, answer: t.answer + (d.text as string) }));
              break;
            case 'answer':
            case 'reply':
              patch(key, { answer: d.text as string, stage: STAGES.length });
              break;
            case 'retried':
              patch(key, (t) => ({ notes: [...t.notes, `Repairing: ${d.error as string}`], stage: 1 }));
              break;
            case 'refused':
              patch(key, (t) => ({ notes: [...t.notes, `Refused by the guard: ${d.reason as string}`] }));
              break;
            case 'remembered':
              onLearned();
              break;
            case 'applied':
              patch(key, {
                applied: d.memories as Applied[],
                recalledOnly: (d.recalled as Applied[] | undefined) ?? [],
              });
              // The memory bank shows when each memory was last applied: refresh it.
              if ((d.memories as Applied[]).length > 0) onLearned();
              break;
            case 'chart':
              patch(key, { chart: (data as Chart | null) ?? null });
              break;
            case 'done':
              if (typeof d.conversationId === 'string') setConversationId(d.conversationId);
              patch(key, {
                status: 'done',
                stage: STAGES.length,
                ...(d.privacyMode ? { privacy: true } : {}),
              });
              break;
            case 'error':
              patch(key, { status: 'error', error: (d.error as { message: string }).message });
              break;
          }
        },
        controller.signal,
      );
    } catch (e) {
      if (controller.signal.aborted) patch(key, { status: 'stopped', error: 'Stopped.' });
      else patch(key, { status: 'error', error: (e as Error).message });
    }
    patch(key, (t) => (t.status === 'working' ? { status: 'done', stage: STAGES.length } : {}));
    setRunning(null);
    setListVersion((v) => v + 1);
  };

  const run = async (sql: string, question: string) => {
    if (running) return;
    const turn = { ...newTurn('sql', question), sql, stage: 2 };
    setTurns((all) => [...all, turn]);
    follow.current = true;
    const controller = new AbortController();
    setRunning(controller);
    try {
      const r = await runSql(sql, controller.signal);
      patch(turn.key, {
        status: 'done',
        stage: STAGES.length,
        columns: r.columns,
        rows: r.rows,
        truncated: r.truncated,
        ...(r.truncatedReason ? { truncatedReason: r.truncatedReason } : {}),
        chart: r.chart,
      });
    } catch (e) {
      if (controller.signal.aborted) patch(turn.key, { status: 'stopped', error: 'Stopped.' });
      else patch(turn.key, { status: 'error', error: (e as Error).message });
    }
    setRunning(null);
  };

  /** Runs a reopened turn's SQL again through the guard (`POST /api/sql`) and shows the rows in place. */
  const runAgain = async (key: number, sql: string) => {
    if (running) return;
    const controller = new AbortController();
    setRunning(controller);
    patch(key, { status: 'working', stage: 2, error: undefined });
    try {
      const r = await runSql(sql, controller.signal);
      patch(key, {
        status: 'done',
        stage: STAGES.length,
        columns: r.columns,
        rows: r.rows,
        rowCount: r.rowCount,
        truncated: r.truncated,
        ...(r.truncatedReason ? { truncatedReason: r.truncatedReason } : {}),
        chart: r.chart,
      });
    } catch (e) {
      if (controller.signal.aborted) patch(key, { status: 'stopped', error: 'Stopped.' });
      else patch(key, { status: 'error', error: (e as Error).message });
    }
    setRunning(null);
  };

  const submit = () => {
    const q = text.trim();
    if (!q || running) return;
    setText('');
    void ask(q);
  };

  const newChat = () => {
    setConversationId(undefined);
    setTurns([]);
    setDrawer(false);
  };

  return (
    <div class="chat-wrap" data-drawer={drawer}>
      <Conversations
        current={conversationId}
        version={listVersion}
        onOpen={(id) => void open(id)}
        onNew={newChat}
        onDeleted={(id) => {
          if (id === conversationId) newChat();
        }}
      />
      <section class="chat" aria-label="Chat">
        <div class="chat-bar">
          <button
            type="button"
            class="drawer-toggle"
            aria-expanded={drawer}
            onClick={() => setDrawer(!drawer)}
          >
            Conversations
          </button>
          <button type="button" class="drawer-toggle" onClick={newChat}>
            New chat
          </button>
        </div>
        <div
          class="turns"
          ref={list}
          aria-live="polite"
          onScroll={(e) => {
            const el = e.currentTarget;
            follow.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
          }}
        >
          {turns.length === 0 && (
            <p class="hint">
              Ask a question about your data, or tell me something to remember — for example “Always show me
              customers from India”.
            </p>
          )}
          {turns.map((t) => (
            <article class="turn" key={t.key} data-status={t.status} data-kind={t.kind}>
              <p class="question">
                <span class="sr-only">{t.kind === 'sql' ? 'You ran SQL for: ' : 'You asked: '}</span>
                {t.kind === 'sql' && <span class="badge">Edited SQL</span>}
                {t.question}
                {t.without.length > 0 && <span class="without"> (without {t.without.length} memory)</span>}
              </p>
              {t.status === 'working' && t.kind === 'ask' && <Progress turn={t} />}
              {t.status === 'working' && t.recalled.length > 0 && (
                <p class="recalled">
                  Recalled {t.recalled.length} memor{t.recalled.length === 1 ? 'y' : 'ies'}:{' '}
                  {t.recalled.join(' · ')}
                </p>
              )}
              {t.path && (
                <p class="path">
                  <span class="badge" title="answered without the model">
                    {t.path}
                  </span>
                </p>
              )}
              {t.sql && <SqlBlock sql={t.sql} />}
              {t.notes.map((n) => (
                <p class="note" key={n}>
                  {n}
                </p>
              ))}
              {t.answer && <p class="answer">{t.answer}</p>}
              {t.privacy && (
                <p class="note privacy">Answers are written without showing the data to the model.</p>
              )}
              {t.kind === 'past' && !t.rows && typeof t.rowCount === 'number' && (
                <p class="muted">
                  {t.rowCount} row{t.rowCount === 1 ? '' : 's'} when asked (rows are not stored)
                </p>
              )}
              {t.kind === 'past' && t.sql && (
                <button
                  type="button"
                  class="run-again"
                  disabled={Boolean(running)}
                  onClick={() => void runAgain(t.key, t.sql!)}
                >
                  Run again
                </button>
              )}
              {t.error && (
                <p class="error" role="alert">
                  {t.error}
                </p>
              )}
              {(t.status === 'error' || t.status === 'stopped') && (
                <button
                  type="button"
                  class="retry"
                  disabled={Boolean(running)}
                  onClick={() =>
                    t.kind === 'past' && t.sql
                      ? void runAgain(t.key, t.sql)
                      : t.kind === 'sql' && t.sql
                        ? void run(t.sql, t.question)
                        : void ask(t.question, t.without, t.key)
                  }
                >
                  Retry
                </button>
              )}
              {t.columns && t.rows && t.rows.length > 0 && (
                <ResultTable
                  columns={t.columns}
                  rows={t.rows}
                  truncated={Boolean(t.truncated)}
                  truncatedReason={t.truncatedReason}
                  sql={t.sql ?? undefined}
                />
              )}
              {t.columns && t.rows && t.rows.length === 0 && <p class="muted">No rows.</p>}
              {t.chart && t.columns && t.rows && (
                <ResultChart chart={t.chart} columns={t.columns} rows={t.rows} />
              )}
              <MemoryChips
                turn={t}
                busy={Boolean(running)}
                onWithout={(id) => void ask(t.question, [...t.without, id])}
              />
              {t.status === 'done' && t.sql && (
                <SqlEditor sql={t.sql} busy={Boolean(running)} onRun={(sql) => void run(sql, t.question)} />
              )}
              {t.status === 'done' && <Feedback turn={t} update={(p) => patch(t.key, p)} />}
            </article>
          ))}
        </div>
        <form
          class="composer"
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <textarea
            aria-label="Question"
            placeholder="Ask a question"
            title="Enter sends, Shift+Enter adds a line, ↑ recalls the last question"
            value={text}
            rows={2}
            onInput={(e) => setText(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                submit();
              } else if (
                e.key === 'ArrowUp' &&
                e.currentTarget.selectionStart === 0 &&
                history.current.length > 0
              ) {
                e.preventDefault();
                setText(history.current[history.current.length - 1] ?? '');
              }
            }}
          />
          {running ? (
            <button type="button" class="stop" onClick={() => running.abort()}>
              Stop
            </button>
          ) : null}
          <button type="submit" disabled={Boolean(running)}>
            Send
          </button>
        </form>
      </section>
    </div>
  );
}
