/**
 * The one teaching path (MemoryService.teach) and the credential screen of every teaching path,
 * on the small shop with a scripted model: a fact without SQL is compiled by the model and checked
 * against the schema; one the model cannot compile is stored as a definition; a wrong SQL given by
 * the user is an error naming the closest real columns and stores nothing; with the model down the
 * text is stored and compiled later; text holding a credential is never stored (property test over
 * every credential shape, at random places), and text without one is stored unchanged.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSqlrecallError } from '../src/core/errors.js';
import type { MemoryScope } from '../src/core/memory.js';
import type { Schema } from '../src/core/schema.js';
import { MemoryService } from '../src/memory/service.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { type MemoryPipeline, startMemoryPipeline } from './support/memory-pipeline.js';

/** One sample of each credential shape the detector knows, with a name for failure messages. */
const CREDENTIAL_SAMPLES: Record<string, string> = {
  'url-password': 'postgres://report:S3cretPw@db.internal/prod',
  'password-pair': 'password=hunter2hunter2',
  'pwd-pair': 'Server=db;User Id=sa;Pwd=Pa55word!;',
  'bearer-token': 'Bearer abcdefghijklmnopqrstuvwxyz012345',
  'openai-key': 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e',
  'github-token': 'ghp_0123456789abcdefghijABCDEFGHIJ012345',
  'github-pat': 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz',
  'aws-access-key': 'AKIAIOSFODNN7EXAMPLE',
  'slack-token': 'xoxb-123456789012-abcdefghijklmn',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  'private-key': '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----',
};

/** Plain words that never form a credential together. */
const WORDS = [
  'always',
  'show',
  'customers',
  'from',
  'India',
  'orders',
  'only',
  'the',
  'big',
  'ones',
  'of',
  'revenue',
  'means',
  'total',
];

describe('MemoryService.teach', () => {
  let p: MemoryPipeline;
  let schema: Schema;
  const scope = (user: string): MemoryScope => ({ user });
  const texts = async (user: string) =>
    (await p.store.list(scope(user), { statuses: ['active', 'superseded', 'deleted'] })).map((m) => ({
      text: m.text,
      sql: m.sql,
    }));

  beforeAll(async () => {
    p = await startMemoryPipeline();
    schema = await p.db.introspect();
  }, 120_000);
  afterAll(async () => {
    await p?.close();
  });

  it('compiles a preference given without SQL with the model, checked against the schema', async () => {
    p.server.reset();
    const result = await p.service.teach(
      scope('asha'),
      { text: 'Always show me customers from India' },
      { schema },
    );
    expect(result.sqlSource).toBe('compiled');
    expect(result.changes).toMatchObject([{ action: 'ADD', kind: 'preference' }]);
    expect(await texts('asha')).toEqual([
      { text: 'Always show me customers from India', sql: "customers.country = 'India'" },
    ]);
    expect(p.server.chatRequests().map((r) => r.purpose)).toContain('memory-compile');
  });

  it('stores a fact the model cannot compile as a definition and says so', async () => {
    const result = await p.service.teach(
      scope('asha'),
      { kind: 'term', text: 'A regular is someone we like' },
      { schema },
    );
    expect(result.sqlSource).toBe('definition');
    expect(result.problems.join(' ')).toMatch(/definition without SQL/);
    expect(await texts('asha')).toContainEqual({ text: 'A regular is someone we like', sql: null });
  });

  it('a wrong SQL is an error naming the closest real column, and nothing is stored', async () => {
    const before = await texts('bo');
    const error = await p.service
      .teach(scope('bo'), { text: 'only Indian customers', sql: "customers.countri = 'India'" }, { schema })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isSqlrecallError(error, 'invalid_memory_sql')).toBe(true);
    expect((error as Error).message).toMatch(
      /customers\.countri does not exist; did you mean customers\.country\?/,
    );
    expect(await texts('bo')).toEqual(before);
  });

  it('with the model down, the text is stored and compiled once the model is back', async () => {
    const dead = new MemoryService({
      store: p.store,
      embedder: p.service.options.embedder,
      chat: createOllamaChatModel({ host: 'http://127.0.0.1:9', model: 'qwen2.5-coder:7b' }),
    });
    const result = await dead.teach(scope('cy'), { text: 'Only show customers from Peru' }, { schema });
    expect(result.sqlSource).toBe('pending');
    expect(result.problems.join(' ')).toMatch(/not reachable.*compiled when the model is back/);
    expect(await texts('cy')).toEqual([{ text: 'Only show customers from Peru', sql: null }]);
    const recovered = await p.service.recoverPending({ schema });
    expect(recovered.applied).toBeGreaterThanOrEqual(1);
    expect(await texts('cy')).toEqual([
      { text: 'Only show customers from Peru', sql: "customers.country = 'Peru'" },
    ]);
  });

  it('refuses text holding a credential, says what (masked), and stores nothing', async () => {
    const result = await p.service.teach(
      scope('dee'),
      { kind: 'context', text: 'the reporting database is postgres://report:S3cretPw@db.internal/prod' },
      { schema },
    );
    expect(result.changes).toEqual([]);
    expect(result.sqlSource).toBe('refused');
    expect(result.problems[0]).toMatch(/password in a connection URL \(postgres:\/\/report:\*\*\*@\)/);
    expect(result.problems.join(' ')).not.toContain('S3cretPw');
    expect(await texts('dee')).toEqual([]);
  });

  it('edit: new text holding a credential is refused and the memory is unchanged', async () => {
    const [memory] = await p.store.list(scope('asha'), { statuses: ['active'] });
    const error = await p.service
      .edit(scope('asha'), memory!, { text: 'connect with password=hunter2hunter2' }, schema)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isSqlrecallError(error, 'credential_refused')).toBe(true);
    expect(JSON.stringify(await texts('asha'))).not.toContain('hunter2');
  });

  it('purge (audit --delete) never touches another scope, even given its ids', async () => {
    const [embedding] = await p.service.options.embedder.embed(['x']);
    const [written] = await p.store.write(scope('owner'), [
      {
        op: 'add',
        memory: { kind: 'context', text: 'token ghp_0123456789abcdefghijABCDEFGHIJ012345' },
        embedding: embedding!,
        reason: 'test',
      },
    ]);
    const id = written!.memory!.id;
    const history = await p.store.history(scope('owner'), id);
    expect(
      await p.store.purge(
        scope('intruder'),
        [id],
        history.map((h) => h.id),
      ),
    ).toEqual({ memories: 0, history: 0 });
    expect(await p.store.get(scope('owner'), id)).not.toBeNull();
    expect(await p.store.purge(scope('owner'), [id], [])).toEqual({ memories: 1, history: history.length });
    expect(await p.store.get(scope('owner'), id)).toBeNull();
  });

  it('chat: the secret part of a message is refused, masked everywhere, the rest is learned', async () => {
    p.server.reset();
    const secret = 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e';
    const { outcome } = await p.ask(
      'eve',
      `Remember that my api key is ${secret}. Always show me customers from India`,
    );
    const reply = outcome.answer ?? '';
    expect(reply).toMatch(/an API key \(sk-\*\*\*\)/);
    expect(reply).not.toContain(secret);
    const stored = await texts('eve');
    expect(stored.some((m) => m.sql === "customers.country = 'India'")).toBe(true);
    expect(JSON.stringify(stored)).not.toContain(secret);
    // The model never saw it either, nor did the durable queue or the conversation history.
    expect(JSON.stringify(p.server.chatRequests())).not.toContain(secret);
    expect(JSON.stringify(await p.store.listPending(scope('eve')))).not.toContain(secret);
  });

  it('property: no teaching path stores a credential of any shape at any place', async () => {
    const shapes = Object.keys(CREDENTIAL_SAMPLES);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }),
        fc.constantFrom(...shapes),
        fc.nat(),
        fc.constantFrom('teach', 'learn', 'import'),
        async (words, shape, at, path) => {
          const secret = CREDENTIAL_SAMPLES[shape]!;
          const position = at % (words.length + 1);
          const text = [...words.slice(0, position), secret, ...words.slice(position)].join(' ');
          const user = 'prop-secret';
          if (path === 'teach') {
            const result = await p.service.teach(scope(user), { kind: 'context', text }, { schema });
            expect(result.refused.length).toBeGreaterThan(0);
          } else if (path === 'learn') {
            await p.service.learn(scope(user), text, { schema });
          } else {
            const result = await p.service.importDoc(
              scope(user),
              {
                format: 'sqlrecall-memory',
                version: 1,
                memories: [{ id: 'a0000000-0000-4000-8000-000000000001', kind: 'context', text }],
                history: [],
              },
              p.store,
            );
            expect(result.problems.length).toBeGreaterThan(0);
          }
          const stored = JSON.stringify(await texts(user));
          const core = secret.split('\n')[1] ?? secret.slice(-12);
          expect(stored, `${path} stored the ${shape}`).not.toContain(core.slice(-8));
        },
      ),
      { numRuns: 60, seed: 30_2026 },
    );
  }, 120_000);

  it('import leaves out a memory over the text limit, says so, and imports the rest', async () => {
    const user = 'import-long';
    const long = `Revenue means ${'net of refunds and taxes '.repeat(100)}`;
    const result = await p.service.importDoc(
      scope(user),
      {
        format: 'sqlrecall-memory',
        version: 1,
        memories: [
          { id: 'a0000000-0000-4000-8000-000000000101', kind: 'context', text: long },
          { id: 'a0000000-0000-4000-8000-000000000102', kind: 'context', text: 'Only orders from Peru' },
        ],
        history: [],
      },
      p.store,
    );
    expect(result.problems.join('\n')).toMatch(
      /left out a memory of 2,513 characters \(the limit is 2,000\)/,
    );
    const stored = (await texts(user)).map((m) => m.text);
    expect(stored).toEqual(['Only orders from Peru']);
  });

  it('property: text without a credential is stored unchanged', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 10 }),
        async (words) => {
          n += 1;
          const text = `${words.join(' ')} ${n}`;
          const result = await p.service.teach(scope('prop-clean'), { kind: 'context', text }, { schema });
          expect(result.refused).toEqual([]);
          const stored = await texts('prop-clean');
          expect(stored.map((m) => m.text)).toContain(text);
        },
      ),
      { numRuns: 30, seed: 30_2026 },
    );
  }, 120_000);
});
