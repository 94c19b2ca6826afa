/** The chat: streamed answers with SQL, table, chart, applied-memory chips and thumbs up/down. */
import { useRef, useState } from 'preact/hooks';
import { type Applied, api, askStream, type Cell, type Chart, type Column } from './api';
import { ResultChart, ResultTable, SqlBlock } from './result';

interface Turn {
  key: number;
  question: string;
  without: string[];
  status: 'working' | 'done' | 'error';
  sql?: string;
  columns?: Column[];
  rows?: Cell[][];
  truncated?: boolean;
  answer: string;
  applied: Applied[];
  chart: Chart | null;
  notes: string[];
  error?: string;
  feedback?: string;
}

let nextKey = 1;

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
      <button type="button" aria-label="Good answer" onClick={() => void send('up')}>
        👍
      </button>
      <button type="button" aria-label="Bad answer" onClick={() => setCorrecting(!correcting)}>
        👎
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

export function ChatPanel({ onLearned }: { onLearned: () => void }) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [text, setText] = useState('');
  const [conversationId, setConversationId] = useState<string | undefined>(undefined);
  const history = useRef<string[]>([]);
  const list = useRef<HTMLDivElement>(null);

  const patch = (key: number, p: Partial<Turn> | ((t: Turn) => Partial<Turn>)) =>
    setTurns((all) =>
      all.map((t) => (t.key === key ? { ...t, ...(typeof p === 'function' ? p(t) : p) } : t)),
    );

  const ask = async (question: string, without: string[] = []) => {
    const key = nextKey++;
    history.current.push(question);
    setTurns((all) => [
      ...all,
      { key, question, without, status: 'working', answer: '', applied: [], chart: null, notes: [] },
    ]);
    setTimeout(() => list.current?.scrollTo({ top: list.current.scrollHeight }), 0);
    try {
      await askStream({ question, conversationId, ...(without.length ? { without } : {}) }, (event, data) => {
        const d = data as Record<string, unknown>;
        switch (event) {
          case 'sql':
            patch(key, { sql: d.sql as string });
            break;
          case 'rows':
            patch(key, {
              columns: d.columns as Column[],
              rows: d.rows as Cell[][],
              truncated: d.truncated as boolean,
            });
            break;
          case 'answer_token':
            patch(key, (t) => ({ answer: t.answer + (d.text as string) }));
            break;
          case 'answer':
          case 'reply':
            patch(key, { answer: d.text as string });
            break;
          case 'retried':
            patch(key, (t) => ({ notes: [...t.notes, `Repairing: ${d.error as string}`] }));
            break;
          case 'refused':
            patch(key, (t) => ({ notes: [...t.notes, `Refused: ${d.reason as string}`] }));
            break;
          case 'remembered':
            onLearned();
            break;
          case 'applied':
            patch(key, { applied: d.memories as Applied[] });
            break;
          case 'chart':
            patch(key, { chart: (data as Chart | null) ?? null });
            break;
          case 'done':
            if (typeof d.conversationId === 'string') setConversationId(d.conversationId);
            patch(key, { status: 'done' });
            break;
          case 'error':
            patch(key, { status: 'error', error: (d.error as { message: string }).message });
            break;
        }
      });
    } catch (e) {
      patch(key, { status: 'error', error: (e as Error).message });
    }
    patch(key, (t) => (t.status === 'working' ? { status: 'done' } : {}));
  };

  const submit = () => {
    const q = text.trim();
    if (!q) return;
    setText('');
    void ask(q);
  };

  return (
    <section class="chat" aria-label="Chat">
      <div class="turns" ref={list} aria-live="polite">
        {turns.length === 0 && (
          <p class="hint">
            Ask a question about your data, or tell me something to remember — for example “Always show me
            customers from India”.
          </p>
        )}
        {turns.map((t) => (
          <article class="turn" key={t.key} data-status={t.status}>
            <p class="question">
              <span class="sr-only">You asked: </span>
              {t.question}
              {t.without.length > 0 && <span class="without"> (without {t.without.length} memory)</span>}
            </p>
            {t.sql && <SqlBlock sql={t.sql} />}
            {t.notes.map((n) => (
              <p class="note" key={n}>
                {n}
              </p>
            ))}
            {t.answer && <p class="answer">{t.answer}</p>}
            {t.status === 'working' && !t.answer && <p class="working">Thinking…</p>}
            {t.error && (
              <p class="error" role="alert">
                {t.error}
              </p>
            )}
            {t.columns && t.rows && t.rows.length > 0 && (
              <ResultTable columns={t.columns} rows={t.rows} truncated={Boolean(t.truncated)} />
            )}
            {t.chart && t.columns && t.rows && (
              <ResultChart chart={t.chart} columns={t.columns} rows={t.rows} />
            )}
            {t.applied.length > 0 && (
              <fieldset class="chips">
                <legend>Applied:</legend>
                {t.applied.map((m) => (
                  <button
                    type="button"
                    class="chip"
                    key={m.id}
                    title="Ask again without this memory"
                    aria-label={`Ask again without: ${m.text}`}
                    onClick={() => void ask(t.question, [...t.without, m.id])}
                  >
                    {m.text} <span aria-hidden="true">×</span>
                  </button>
                ))}
              </fieldset>
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
          placeholder="Ask a question (Enter sends, Shift+Enter new line, ↑ last question)"
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
        <button type="submit">Send</button>
      </form>
    </section>
  );
}
