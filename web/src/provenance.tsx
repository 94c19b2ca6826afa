/**
 * Where a memory came from, shown next to a memory chip of an answer and in the memory bank: how
 * it was taught (a conversation and the user's words, by hand, imported, a confirmed answer),
 * when, when an answer last applied it, and the memories it replaced or that replaced it.
 */
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Origin, type Provenance } from './api';

/** `2 Dec 2026, 07:40` in the browser's time zone. */
export function localTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

function OriginLine({ origin }: { origin: Origin }) {
  const how: Record<Origin['how'], string> = {
    chat: 'Taught in a conversation',
    hand: 'Added by hand',
    import: 'Imported',
    confirmed: 'A confirmed answer',
    unknown: 'Origin not recorded',
  };
  const conversation = origin.conversation;
  return (
    <>
      {how[origin.how]}
      {conversation?.title ? ` (“${conversation.title}”)` : ''} on <time>{localTime(origin.at)}</time>
      {origin.words && <q class="origin-words">{origin.words}</q>}
    </>
  );
}

/** The provenance of memory `id`, loaded when shown. */
export function ProvenanceView({ id }: { id: string }) {
  const [data, setData] = useState<Provenance | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    api<Provenance>(`/api/memories/${encodeURIComponent(id)}`)
      .then(setData)
      .catch((e: Error) => setError(e.message));
  }, [id]);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!data) return <p class="muted">Loading…</p>;
  return (
    <dl class="provenance" aria-label={`Where “${data.memory.text}” came from`}>
      <dt>From</dt>
      <dd>
        <OriginLine origin={data.origin} />
      </dd>
      <dt>Last applied</dt>
      <dd>{data.lastAppliedAt ? <time>{localTime(data.lastAppliedAt)}</time> : 'never'}</dd>
      {data.replacedBy && (
        <>
          <dt>Replaced by</dt>
          <dd>
            {data.replacedBy.text} — <OriginLine origin={data.replacedBy.origin} />
          </dd>
        </>
      )}
      {data.replaced.map((r) => (
        <Fragment key={r.id}>
          <dt>Replaces</dt>
          <dd>
            {r.text} — <OriginLine origin={r.origin} />
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}

/** A "Where from?" toggle that shows {@link ProvenanceView} for memory `id`. */
export function WhereFrom({ id, text }: { id: string; text: string }) {
  const [open, setOpen] = useState(false);
  return (
    <span class="where-from">
      <button
        type="button"
        class="link"
        aria-expanded={open}
        aria-label={`Where from: ${text}`}
        onClick={() => setOpen(!open)}
      >
        Where from?
      </button>
      {open && <ProvenanceView id={id} />}
    </span>
  );
}
