/** The memory bank: grouped by kind, search, add, inline edit, delete with undo, history, on/off. */
import { useEffect, useState } from 'preact/hooks';
import { api, type HistoryEntry, type Memory } from './api';
import { localTime, WhereFrom } from './provenance';

const KINDS = ['preference', 'term', 'metric', 'entity', 'example', 'context'] as const;
const TITLES: Record<string, string> = {
  preference: 'Preferences',
  term: 'Terms',
  metric: 'Metrics',
  entity: 'Entities',
  example: 'Examples',
  context: 'Context',
};

function Item({ m, reload, onDeleted }: { m: Memory; reload: () => void; onDeleted: (m: Memory) => void }) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(m.text);
  const [sql, setSql] = useState(m.sql ?? '');
  const [history, setHistory] = useState<HistoryEntry[] | null>(null);
  const [error, setError] = useState('');
  const run = async (fn: () => Promise<unknown>) => {
    try {
      setError('');
      await fn();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <li class="memory" data-id={m.id}>
      {editing ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              const r = await api<{ problems?: string[] }>(`/api/memories/${m.id}`, {
                method: 'PATCH',
                body: { text, sql: sql.trim() || null },
              });
              if (r.problems?.length) {
                setError(r.problems.join(' '));
                return;
              }
              setEditing(false);
              reload();
            });
          }}
        >
          <input aria-label="Memory text" value={text} onInput={(e) => setText(e.currentTarget.value)} />
          <label class="sql-field">
            SQL condition (optional)
            <textarea
              aria-label="Memory SQL"
              rows={2}
              spellcheck={false}
              value={sql}
              onInput={(e) => setSql(e.currentTarget.value)}
            />
          </label>
          <span class="row-actions">
            <button type="submit">Save</button>
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </span>
        </form>
      ) : (
        <>
          <span class="memory-text">{m.text}</span>
          {m.sql && <code class="memory-sql">{m.sql}</code>}
          <span class="memory-applied muted">
            {m.lastAppliedAt ? (
              <>
                Last applied <time dateTime={m.lastAppliedAt}>{localTime(m.lastAppliedAt)}</time>
              </>
            ) : (
              'Never applied'
            )}
          </span>
          {m.expiresOn && m.expiresAt && (
            <span class="memory-expiry muted">
              {Date.parse(m.expiresAt) <= Date.now() ? 'Expired after ' : 'Until '}
              <time dateTime={m.expiresOn}>{m.expiresOn}</time>
            </span>
          )}
          <WhereFrom id={m.id} text={m.text} />
          <span class="memory-actions">
            <button type="button" aria-label={`Edit: ${m.text}`} onClick={() => setEditing(true)}>
              Edit
            </button>
            <button
              type="button"
              aria-label={`History: ${m.text}`}
              onClick={() =>
                void run(async () =>
                  setHistory(
                    history
                      ? null
                      : (await api<{ history: HistoryEntry[] }>(`/api/memories/${m.id}/history`)).history,
                  ),
                )
              }
            >
              History
            </button>
            <button
              type="button"
              aria-label={`Delete: ${m.text}`}
              onClick={() =>
                void run(async () => {
                  await api(`/api/memories/${m.id}`, { method: 'DELETE' });
                  onDeleted(m);
                })
              }
            >
              Delete
            </button>
          </span>
        </>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {history && (
        <ol class="history" aria-label="History">
          {history.map((h) => (
            <li key={h.id}>
              <time>{new Date(h.createdAt).toLocaleString()}</time> {h.action}{' '}
              {h.oldText && h.newText && h.oldText !== h.newText
                ? `${h.oldText} → ${h.newText}`
                : (h.newText ?? h.oldText)}
              {h.reason ? ` (${h.reason})` : ''}
              {(h.oldSql ?? null) !== (h.newSql ?? null) && (
                <span class="history-sql">
                  {' '}
                  SQL: {h.oldSql ? <code>{h.oldSql}</code> : '∅'} → {h.newSql ? <code>{h.newSql}</code> : '∅'}
                </span>
              )}
            </li>
          ))}
        </ol>
      )}
    </li>
  );
}

export function MemoryBank({ version }: { version: number }) {
  const [memories, setMemories] = useState<Memory[]>([]);
  const [enabled, setEnabled] = useState(true);
  const [filter, setFilter] = useState('');
  const [kind, setKind] = useState<string>('preference');
  const [text, setText] = useState('');
  const [sql, setSql] = useState('');
  const [undo, setUndo] = useState<Memory | null>(null);
  const [error, setError] = useState('');
  const reload = () =>
    api<{ memories: Memory[]; enabled: boolean }>('/api/memories')
      .then((r) => {
        setMemories(r.memories);
        setEnabled(r.enabled);
      })
      .catch((e: Error) => setError(e.message));
  useEffect(() => {
    void reload();
  }, [version]);
  const shown = memories.filter(
    (m) => !filter || `${m.text} ${m.sql ?? ''}`.toLowerCase().includes(filter.toLowerCase()),
  );
  return (
    <section class="panel memory-bank" aria-label="Memory bank">
      <header class="panel-head">
        <h2>Memory bank</h2>
        <label class="switch">
          <input
            type="checkbox"
            role="switch"
            checked={enabled}
            aria-checked={enabled}
            aria-label="Memory on"
            onChange={(e) => {
              const on = e.currentTarget.checked;
              void api('/api/memories/enabled', { method: 'PUT', body: { enabled: on } }).then(() =>
                setEnabled(on),
              );
            }}
          />
          {enabled ? 'On' : 'Off'}
        </label>
      </header>
      <input
        type="search"
        aria-label="Search memories"
        placeholder="Search memories"
        value={filter}
        onInput={(e) => setFilter(e.currentTarget.value)}
      />
      <form
        class="add-memory"
        onSubmit={(e) => {
          e.preventDefault();
          if (!text.trim()) return;
          setError('');
          void api<{ problems?: string[] }>('/api/memories', {
            method: 'POST',
            body: { kind, text, ...(sql.trim() ? { sql: sql.trim() } : {}) },
          })
            .then((r) => {
              if (r.problems?.length) setError(r.problems.join(' '));
              setText('');
              setSql('');
              return reload();
            })
            .catch((err: Error) => setError(err.message));
        }}
      >
        <select aria-label="Kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
        <input
          aria-label="New memory"
          placeholder="Something to remember"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <label class="sql-field">
          <span>
            SQL condition (optional, e.g. <code>country = 'India'</code>)
          </span>
          <textarea
            aria-label="New memory SQL"
            rows={1}
            spellcheck={false}
            value={sql}
            onInput={(e) => setSql(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Add</button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {undo && (
        <p class="undo" role="status">
          Deleted “{undo.text}”.{' '}
          <button
            type="button"
            onClick={() =>
              void api(`/api/memories/${undo.id}/restore`, { method: 'POST' }).then(() => {
                setUndo(null);
                return reload();
              })
            }
          >
            Undo
          </button>
        </p>
      )}
      {memories.length === 0 && <p class="empty">Nothing remembered yet.</p>}
      {KINDS.map((k) => {
        const group = shown.filter((m) => m.kind === k);
        if (group.length === 0) return null;
        return (
          <div class="group" key={k}>
            <h3>{TITLES[k]}</h3>
            <ul>
              {group.map((m) => (
                <Item
                  key={`${m.id}:${m.updatedAt}`}
                  m={m}
                  reload={() => void reload()}
                  onDeleted={(d) => {
                    setUndo(d);
                    void reload();
                  }}
                />
              ))}
            </ul>
          </div>
        );
      })}
    </section>
  );
}
