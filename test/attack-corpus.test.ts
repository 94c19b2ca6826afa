/**
 * Issue 4, "Attack corpus": every hostile statement of `test/corpus/attacks/attacks.jsonl` is refused
 * by the rule its record names; through `sqlrecall sql` (exit 3, in-process for all, a handful as a
 * real subprocess) and through the `ask` pipeline (the scripted model returns it). Afterwards the
 * database is unchanged (relations, row counts, content hashes, sequences, large objects) and no
 * file the corpus names exists. The HTTP API's leg is `attack-http.test.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Assistant, DATABASE_SESSION_SQL } from '../src/agent/assistant.js';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { isSqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { openDatabase } from '../src/databases/open.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { guardSql } from '../src/sql/guard.js';
import { GUARD_RULES } from '../src/sql/guard-rules.js';
import { ATTACKS, existingCorpusFiles } from './support/attacks.js';
import { runSqlrecall } from './support/cli.js';
import { type Fixture, pgliteShop, serverShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { TEST_DATABASE_URL } from './support/server-db.js';

/** Rule ids the guard reports besides GUARD_RULES. */
const GUARD_OWN_RULES = ['multiple-statements', 'parse-error', 'nul-byte', 'statement-kind', 'empty'];

/** Every kind issue 4 point 1 lists, as rule ids: the corpus must cover each. */
const REQUIRED_RULES = [
  'data-modifying',
  'merge',
  'select-into',
  'locking-clause',
  'explain-analyze',
  'transaction-control',
  'session-settings',
  'copy',
  'procedural',
  'prepared-statements',
  'listen-notify',
  'lock',
  'maintenance',
  'ddl',
  'dcl',
  'sleep',
  'advisory-lock',
  'settings',
  'sequences',
  'large-objects',
  'server-files',
  'remote',
  'signals',
  'transaction-id',
  'nested-query',
  'secret-catalogs',
  'multiple-statements',
];

describe('the attack corpus', () => {
  it('has at least 120 distinct records covering every kind of point 1', () => {
    expect(ATTACKS.length).toBeGreaterThanOrEqual(120);
    expect(new Set(ATTACKS.map((a) => a.id)).size).toBe(ATTACKS.length);
    expect(new Set(ATTACKS.map((a) => a.sql)).size).toBe(ATTACKS.length);
    const known = new Set([...GUARD_RULES.map((r) => r.id), ...GUARD_OWN_RULES]);
    for (const attack of ATTACKS) expect(known.has(attack.rule), attack.id).toBe(true);
    const covered = new Set(ATTACKS.map((a) => a.rule));
    for (const rule of REQUIRED_RULES) expect(covered.has(rule), rule).toBe(true);
    // The variants the issue names explicitly.
    const sqls = ATTACKS.map((a) => a.sql);
    for (const variant of [
      '"pg_sleep"',
      'PG_SLEEP',
      'pg_catalog.pg_sleep',
      'UNION',
      '$$;$$',
      '/* ; */',
      '-- ',
    ])
      expect(
        sqls.some((sql) => sql.includes(variant)),
        variant,
      ).toBe(true);
  });

  it.each(ATTACKS.map((a) => [a.id, a] as const))('guard refuses %s with its rule', async (_id, attack) => {
    const verdict = await guardSql(attack.sql);
    expect(verdict).toMatchObject({ ok: false, rule: attack.rule });
    if (!verdict.ok) expect(verdict.reason).toMatch(/^(refused: |not valid PostgreSQL: ).{8,}/);
  });
});

function suite(label: string, make: () => Promise<Fixture>) {
  describe(label, () => {
    let fixture: Fixture;
    let model: ScriptedOllama;
    let home: string;
    let before: string;
    const replies = new Map<string, string>();

    beforeAll(async () => {
      expect(existingCorpusFiles()).toEqual([]);
      fixture = await make();
      before = await fixture.snapshot();
      home = mkdtempSync(join(tmpdir(), 'sqlrecall-attacks-'));
      model = await startScriptedOllama({
        chat: (req) => {
          if (!req.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) return 'unused';
          const q = /Question: (.*)$/m.exec(req.lastUserMessage)?.[1] ?? '';
          return replies.get(q) ?? { status: 500, error: `no reply for ${q}` };
        },
      });
    });
    afterAll(async () => {
      await model?.close();
      await fixture?.close();
      rmSync(home, { recursive: true, force: true });
    });

    it('`sqlrecall sql` refuses every record with exit 3 and the rule’s reason (in-process)', async () => {
      for (const attack of ATTACKS) {
        const run = await runCliInProcess(['sql', '--db', fixture.url, '--json', attack.sql], {
          env: { SQLRECALL_HOME: home },
        });
        expect(run.code, `${attack.id}: ${run.stderr}`).toBe(3);
        const doc = JSON.parse(run.stdout) as { error: { code: string; message: string } };
        expect(doc.error.code).toBe('guard_refused');
        const verdict = await guardSql(attack.sql);
        if (!verdict.ok)
          expect(doc.error.message).toBe(`Refused: ${verdict.reason.replace(/^refused: /, '')}`);
        expect(run.stderr).toMatch(/^error: Refused: /);
        expect(run.stderr).not.toMatch(/\n\s+at /);
      }
    }, 120_000);

    it('the `ask` pipeline refuses every record the model returns, without executing it', async () => {
      const db: DatabaseConnector = await openDatabase(fixture.url);
      const executed: string[] = [];
      const spy: DatabaseConnector = {
        ...db,
        displayName: db.displayName,
        introspect: (o) => db.introspect(o),
        execute: (sql, o) => {
          // The pipeline's own read of the database's today and time zone (issue 11) is not model SQL.
          if (sql !== DATABASE_SESSION_SQL) executed.push(sql);
          return db.execute(sql, o);
        },
      };
      const assistant = new Assistant({
        chat: createOllamaChatModel({ host: model.url, model: 'qwen2.5-coder:7b', numCtx: 4096 }),
        db: spy,
        loadSchema: () => db.introspect(),
      });
      const outcomes: string[] = [];
      try {
        for (const [i, attack] of ATTACKS.entries()) {
          const question = `attack ${i}`;
          replies.set(question, `\`\`\`sql\n${attack.sql}\n\`\`\``);
          try {
            for await (const _step of assistant.ask({
              user: 'mallory',
              message: question,
              skipAnswer: true,
            })) {
              // drain
            }
            if (attack.askSql && executed[executed.length - 1] === attack.askSql) executed.pop();
            else outcomes.push(`${attack.id}: answered`);
          } catch (error) {
            // A statement the extractor cannot even find (plain prose) is unusable output (exit 5),
            // and so is one the parser still rejects after the bounded repair rounds (issue 11: a
            // parse error goes back to the model instead of being refused; it never runs either way).
            const code = isSqlrecallError(error) ? error.code : 'unexpected';
            const unusable = code === 'sql_not_found' || code === 'model_output';
            if (code !== 'guard_refused' && !(unusable && attack.rule === 'parse-error'))
              outcomes.push(`${attack.id}: ${code}`);
          }
        }
      } finally {
        await db.close();
      }
      expect(outcomes).toEqual([]);
      expect(executed).toEqual([]);
    }, 180_000);

    it('`ask` through the CLI refuses with exit 3 (in-process, a sample)', async () => {
      const sample = ATTACKS.filter((a, i) => i % 50 === 0 || a.askSql);
      for (const [i, attack] of sample.entries()) {
        const question = `cli attack ${i}`;
        replies.set(question, `Here you go:\n\`\`\`sql\n${attack.sql}\n\`\`\``);
        const run = await runCliInProcess(['ask', '--db', fixture.url, '--json', question], {
          env: { SQLRECALL_HOME: home, OLLAMA_HOST: model.url, SQLRECALL_MEMORY: 'off' },
        });
        const expected = attack.askSql ? [0] : attack.rule === 'parse-error' ? [3, 5] : [3];
        expect(expected, `${attack.id}: ${run.stderr}`).toContain(run.code);
        const doc = JSON.parse(run.stdout) as { rows: unknown[]; attempts: { error?: string }[] };
        if (!attack.askSql) expect(doc.rows).toEqual([]);
      }
    }, 120_000);

    it('a handful through the real binary (subprocess): exit 3', async () => {
      const ids = [
        'cte-delete',
        'pg-sleep-quoted-qualified',
        'dollar-quote-then-statement',
        'copy-to-program',
      ];
      for (const id of ids) {
        const attack = ATTACKS.find((a) => a.id === id)!;
        const run = await runSqlrecall(['sql', '--db', fixture.url, attack.sql], {
          env: { SQLRECALL_HOME: home },
        });
        expect(run.code, `${id}: ${run.stderr}`).toBe(3);
        expect(run.stderr).toMatch(/^error: Refused: /);
      }
    }, 60_000);

    it('after the whole corpus the database is unchanged and no corpus file exists', async () => {
      expect(await fixture.snapshot()).toBe(before);
      expect(existingCorpusFiles()).toEqual([]);
    });
  });
}

suite('PGlite', pgliteShop);
describe.skipIf(!TEST_DATABASE_URL)('server', () => suite('PostgreSQL', serverShop));
