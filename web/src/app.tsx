/** The app shell: sign-in (multi-user mode), tabs, chat + side panel (desktop) or one view (phone). */
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, tokenStore } from './api';
import { ChatPanel } from './chat';
import { MemoryBank } from './memory-bank';
import { SchemaPanel, SettingsPanel } from './panels';

interface Me {
  user: string;
  team?: string;
  mode: 'local' | 'users';
}

type Tab = 'chat' | 'memory' | 'schema' | 'settings';

function SignIn({ onSignedIn, error }: { onSignedIn: () => void; error: string }) {
  const [token, setToken] = useState('');
  return (
    <main class="signin">
      <h1>sqlrecall</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          tokenStore.set(token.trim());
          onSignedIn();
        }}
      >
        <label>
          Access token
          <input
            type="password"
            autoComplete="off"
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
        </label>
        <button type="submit">Sign in</button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <p class="muted">Ask your admin for a token (sqlrecall users add NAME).</p>
      </form>
    </main>
  );
}

export function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [needSignIn, setNeedSignIn] = useState(false);
  const [error, setError] = useState('');
  const [tab, setTab] = useState<Tab>('chat');
  const [side, setSide] = useState<Exclude<Tab, 'chat'>>('memory');
  const [learned, setLearned] = useState(0);
  const sidePanel = useRef<HTMLElement>(null);

  const load = () =>
    api<Me>('/api/me')
      .then((m) => {
        setMe(m);
        setNeedSignIn(false);
        setError('');
      })
      .catch((e: Error) => {
        if (e instanceof ApiError && e.status === 401) {
          if (tokenStore.get()) setError(e.message);
          tokenStore.clear();
          setNeedSignIn(true);
        } else setError(e.message);
      });
  useEffect(() => {
    void load();
  }, []);

  if (needSignIn) return <SignIn onSignedIn={() => void load()} error={error} />;
  if (!me) return <main class="loading">{error || 'Loading…'}</main>;

  const choose = (t: Tab) => {
    setTab(t);
    if (t === 'chat') return;
    setSide(t);
    // On a wide screen the panel is already beside the chat: the tab moves the focus there, so
    // pressing it always does something visible (and keyboard users land in the panel).
    requestAnimationFrame(() => sidePanel.current?.focus());
  };
  const signOut =
    me.mode === 'users'
      ? () => {
          tokenStore.clear();
          setMe(null);
          setNeedSignIn(true);
        }
      : undefined;
  const tabs: [Tab, string][] = [
    ['chat', 'Chat'],
    ['memory', 'Memory'],
    ['schema', 'Schema'],
    ['settings', 'Settings'],
  ];
  return (
    <div class="app" data-tab={tab}>
      <header class="top">
        <h1>sqlrecall</h1>
        <nav aria-label="Views">
          {tabs.map(([t, label]) => (
            <button
              type="button"
              key={t}
              class={`tab tab-${t}${t !== 'chat' && side === t ? ' side-active' : ''}`}
              aria-pressed={tab === t}
              onClick={() => choose(t)}
            >
              {label}
            </button>
          ))}
        </nav>
        <span class="who">{me.user}</span>
      </header>
      <main class="layout">
        <div class="main-col">
          <ChatPanel onLearned={() => setLearned((n) => n + 1)} />
        </div>
        <aside class="side-col" ref={sidePanel} tabIndex={-1} aria-label="Side panel">
          {side === 'memory' && <MemoryBank version={learned} />}
          {side === 'schema' && <SchemaPanel />}
          {side === 'settings' && <SettingsPanel user={me.user} onSignOut={signOut} />}
        </aside>
      </main>
    </div>
  );
}
