/**
 * The schema panel (tables with comments and row estimates, columns with types, comments and
 * foreign keys; searchable over names and comments; refreshable) and the settings panel.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api';

interface Table {
  schema: string;
  name: string;
  comment: string | null;
  estimatedRows: number | null;
  columns: { name: string; type: string; nullable: boolean; comment: string | null }[];
  primaryKey: string[];
  foreignKeys: { columns: string[]; references: { schema: string; table: string; columns: string[] } }[];
}

export function SchemaPanel() {
  const [tables, setTables] = useState<Table[]>([]);
  const [filter, setFilter] = useState('');
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(false);
  const load = (refresh: boolean) => {
    setLoading(true);
    api<{ tables: Table[] }>(`/api/schema${refresh ? '?refresh=true' : ''}`)
      .then((s) => {
        setTables(s.tables);
        setError('');
      })
      .catch((e: Error) => setError(e.message))
      .finally(() => setLoading(false));
  };
  useEffect(() => load(false), []);
  const f = filter.toLowerCase();
  const has = (s: string | null | undefined) => Boolean(s?.toLowerCase().includes(f));
  const shown = tables.filter(
    (t) => !f || has(t.name) || has(t.comment) || t.columns.some((c) => has(c.name) || has(c.comment)),
  );
  return (
    <section class="panel" aria-label="Schema">
      <header class="panel-head">
        <h2>Schema</h2>
        <button type="button" onClick={() => load(true)} disabled={loading}>
          {loading ? 'Refreshing…' : 'Refresh'}
        </button>
      </header>
      <input
        type="search"
        aria-label="Search tables and columns"
        placeholder="Search tables and columns"
        value={filter}
        onInput={(e) => setFilter(e.currentTarget.value)}
      />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {shown.map((t) => (
        <details class="table" key={`${t.schema}.${t.name}`} open={Boolean(f)}>
          <summary>
            {t.schema}.{t.name}{' '}
            <span class="muted">
              ({t.columns.length} columns
              {t.estimatedRows !== null && t.estimatedRows !== undefined
                ? `, ~${new Intl.NumberFormat().format(t.estimatedRows)} rows`
                : ''}
              )
            </span>
          </summary>
          {t.comment && <p class="comment">{t.comment}</p>}
          <ul>
            {t.columns.map((c) => {
              const fk = t.foreignKeys.find((k) => k.columns.includes(c.name));
              return (
                <li key={c.name}>
                  <span class={t.primaryKey.includes(c.name) ? 'pk' : ''}>{c.name}</span>{' '}
                  <span class="muted">{c.type}</span>
                  {c.comment && <span class="comment"> — {c.comment}</span>}
                  {fk && (
                    <span class="fk">
                      {' '}
                      → {fk.references.table}.{fk.references.columns[fk.columns.indexOf(c.name)]}
                    </span>
                  )}
                </li>
              );
            })}
          </ul>
        </details>
      ))}
    </section>
  );
}

interface Settings {
  model: string;
  embedModel: string;
  provider: 'ollama' | 'openai';
  providerUrl: string;
  database: string | null;
  memoryStore: string;
  maxRows: number;
  memoryEnabled: boolean;
}

export function SettingsPanel({ user, onSignOut }: { user: string; onSignOut?: () => void }) {
  const [settings, setSettings] = useState<Settings | null>(null);
  useEffect(() => {
    void api<Settings>('/api/settings').then(setSettings);
  }, []);
  return (
    <section class="panel" aria-label="Settings">
      <h2>Settings</h2>
      <dl>
        <dt>Signed in as</dt>
        <dd>{user}</dd>
        {settings && (
          <>
            <dt>Chat model</dt>
            <dd>{settings.model}</dd>
            <dt>Embedding model</dt>
            <dd>{settings.embedModel}</dd>
            <dt>Model server</dt>
            <dd>
              {settings.providerUrl} ({settings.provider === 'openai' ? 'OpenAI-compatible' : 'Ollama'})
            </dd>
            <dt>Database</dt>
            <dd>{settings.database ?? 'none'}</dd>
            <dt>Memory store</dt>
            <dd>{settings.memoryStore}</dd>
            <dt>Row cap</dt>
            <dd>{settings.maxRows}</dd>
          </>
        )}
      </dl>
      {onSignOut && (
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      )}
    </section>
  );
}
