/**
 * Issue 2, "real input end to end": for every question in questions_gen_postgres.csv the scripted
 * model replies with that question's gold SQL (first alternative, `{…}` expanded) wrapped in one of
 * the messy forms; `sqlrecall ask --json` must return exactly the gold query's result rows. Every
 * question runs through the CLI in this process (the same program as the binary, without a Node
 * start-up per question); the first question of each database also runs through the real binary,
 * a subprocess. Server PostgreSQL for all eleven databases; PGlite for two.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { type DefogQuestion, expandGoldQuery, readDefogCsv, splitGoldQueries } from '../src/eval/gold.js';
import { runSqlrecall } from './support/cli.js';
import { DEFOG_DATABASES, loadDefogIntoPglite, loadDefogOnServer } from './support/defog.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { MESSY_FORMS } from './support/messy.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import type { TempDatabase } from './support/server-db.js';
import { TEST_DATABASE_URL } from './support/server-db.js';
import { benchmarkPath, HAS_BENCHMARKS } from './support/shared-data.js';

/** Canonical text of a cell, so typed JSON values and PostgreSQL's text output compare equal. */
function canon(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'object') return JSON.stringify(value);
  let text = String(value);
  // ISO timestamps from the CLI vs PostgreSQL's text form: "T" vs " ", "+00:00" vs "+00".
  text = text.replace(/^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)/, '$1 $2').replace(/([+-]\d\d):00$/, '$1');
  return text;
}

function canonRows(rows: unknown[][]): string[] {
  return rows.map((r) => r.map(canon).join('\u0001')).sort();
}

/** Gold rows, straight from the database driver with every value as PostgreSQL text. */
async function goldRows(
  client: { query: (sql: string) => Promise<unknown[][]> },
  sql: string,
): Promise<string[]> {
  return canonRows(await client.query(sql));
}

function firstGold(q: DefogQuestion): string {
  const first = splitGoldQueries(q.query)[0]!;
  return expandGoldQuery(first, 'first')[0]!;
}

interface Case {
  index: number;
  question: DefogQuestion;
  gold: string;
}

async function startModel(cases: Case[]): Promise<ScriptedOllama> {
  const byQuestion = new Map(cases.map((c) => [c.question.question, c]));
  return startScriptedOllama({
    chat: (req) => {
      const system = req.messages?.[0]?.content ?? '';
      const user = req.messages?.at(-1)?.content ?? '';
      if (system.startsWith(SQL_PROMPT_MARKER)) {
        const question = /^Question: (.*)$/ms.exec(user)?.[1]?.trim() ?? '';
        const found = byQuestion.get(question);
        if (!found)
          return { text: `no scripted SQL for: ${question}`, status: 500, error: 'unknown question' };
        return MESSY_FORMS[found.index % MESSY_FORMS.length]!.wrap(found.gold);
      }
      return 'The rows above answer the question.';
    },
  });
}

/** The model backends the CLI is run through (issue 17): Ollama's API, or the same server's `/v1` routes. */
type Provider = 'ollama' | 'openai';

/** Environment selecting `provider` against the scripted server at `url`. */
function providerEnv(provider: Provider, url: string): Record<string, string> {
  return provider === 'openai'
    ? { SQLRECALL_PROVIDER: 'openai', SQLRECALL_BASE_URL: `${url}/v1` }
    : { OLLAMA_HOST: url };
}

/**
 * Asks every case through the CLI in this process, and the first case of each database through the
 * real binary as well. Returns the failures and the cases as asked (the binary's repeats included),
 * for {@link extraSqlCalls}.
 */
async function askAll(
  cases: Case[],
  urlFor: (db: string) => string,
  model: ScriptedOllama,
  home: string,
  rowsFor: (c: Case) => Promise<string[]>,
  concurrency: number,
  provider: Provider = 'ollama',
): Promise<{ failures: string[]; asked: Case[] }> {
  const failures: string[] = [];
  const asked: Case[] = [];
  const queue = [...cases];
  const binaryFor = new Set<string>();
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const args = [
        'ask',
        '--json',
        '--max-rows',
        '100000',
        '--db',
        urlFor(c.question.dbName),
        '--',
        c.question.question,
      ];
      // Memory is off: this test is about extraction and execution, and 240 commands opening the
      // embedded memory store one after another would only add minutes.
      const env = { ...providerEnv(provider, model.url), SQLRECALL_HOME: home, SQLRECALL_MEMORY: 'off' };
      const runs = [{ how: 'in-process', run: await runCliInProcess(args, { env }) }];
      asked.push(c);
      if (!binaryFor.has(c.question.dbName)) {
        binaryFor.add(c.question.dbName);
        runs.push({ how: 'binary', run: await runSqlrecall(args, { env }) });
        asked.push(c);
      }
      const form = MESSY_FORMS[c.index % MESSY_FORMS.length]!.name;
      for (const { how, run } of runs) {
        if (run.code !== 0) {
          failures.push(`#${c.index} (${form}, ${how}) exit ${run.code}: ${run.stderr.trim().slice(0, 300)}`);
          continue;
        }
        const doc = JSON.parse(run.stdout) as { rows: unknown[][]; truncated: boolean; sql: string };
        const expected = await rowsFor(c);
        const got = canonRows(doc.rows);
        if (doc.truncated || JSON.stringify(got) !== JSON.stringify(expected)) {
          failures.push(
            `#${c.index} (${form}, ${how}) rows differ: got ${got.length}, want ${expected.length}; sql=${doc.sql}`,
          );
        }
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  expect(binaryFor.size).toBe(new Set(cases.map((c) => c.question.dbName)).size);
  return { failures, asked };
}

/**
 * Questions whose SQL prompt was sent more than once: the gold SQL is right the first time, so the
 * repair loop must add no model call (issue 11).
 */
function extraSqlCalls(model: ScriptedOllama, cases: Case[]): string[] {
  const counts = new Map<string, number>();
  for (const req of model.chatRequests()) {
    if (!req.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) continue;
    const question =
      /^Question: (.*)$/ms.exec(req.messages.find((m) => m.role === 'user')?.content ?? '')?.[1]?.trim() ??
      '';
    counts.set(question, (counts.get(question) ?? 0) + 1);
  }
  const asked = new Map<string, number>();
  for (const c of cases) asked.set(c.question.question, (asked.get(c.question.question) ?? 0) + 1);
  return cases
    .filter((c) => counts.get(c.question.question) !== asked.get(c.question.question))
    .map((c) => `#${c.index}: ${counts.get(c.question.question) ?? 0} SQL calls`);
}

describe.skipIf(!HAS_BENCHMARKS)('ask --json returns the gold rows for real questions', () => {
  let cases: Case[] = [];
  let home: string;

  beforeAll(async () => {
    const questions = await readDefogCsv(benchmarkPath('defog', 'questions_gen_postgres.csv'));
    cases = questions.map((question, index) => ({ index, question, gold: firstGold(question) }));
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-e2e-'));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('reads all 210 questions', () => {
    expect(cases).toHaveLength(210);
    expect(new Set(cases.map((c) => c.question.dbName)).size).toBe(DEFOG_DATABASES.length);
  });

  // Issue 17: the same 210 questions through `--provider openai` (the real `openai` client against
  // the scripted server's /v1 routes). Run one provider alone with `-t ollama` / `-t openai`.
  describe.skipIf(!TEST_DATABASE_URL).each(['ollama', 'openai'] as const)(
    'on the server PostgreSQL (all eleven databases), provider %s',
    (provider) => {
      const dbs = new Map<string, TempDatabase>();
      const clients = new Map<string, pg.Client>();
      let model: ScriptedOllama;

      beforeAll(async () => {
        for (const name of DEFOG_DATABASES) {
          const db = await loadDefogOnServer(name);
          dbs.set(name, db);
          const client = new pg.Client({
            connectionString: db.url,
            types: { getTypeParser: () => (v: string) => v },
          });
          await client.connect();
          clients.set(name, client);
        }
        model = await startModel(cases);
      }, 300_000);

      afterAll(async () => {
        await model?.close();
        for (const c of clients.values()) await c.end();
        for (const db of dbs.values()) await db.drop();
      });

      it('all 210 questions return exactly the gold rows', async () => {
        const { failures, asked } = await askAll(
          cases,
          (name) => dbs.get(name)!.url,
          model,
          home,
          async (c) => {
            const client = clients.get(c.question.dbName)!;
            return goldRows(
              { query: async (sql) => (await client.query({ text: sql, rowMode: 'array' })).rows },
              c.gold,
            );
          },
          2,
          provider,
        );
        expect(failures).toEqual([]);
        expect(asked.length).toBe(cases.length + DEFOG_DATABASES.length);
        expect(extraSqlCalls(model, asked)).toEqual([]);
        if (provider === 'openai') {
          const v1 = model.requests.filter((r) => r.path === '/v1/chat/completions');
          expect(v1.length).toBeGreaterThanOrEqual(cases.length);
          expect(model.requests.some((r) => r.path === '/api/chat')).toBe(false);
        }
      }, 900_000);
    },
  );

  describe('on embedded PGlite (restaurants and ewallet)', () => {
    const dirs = new Map<string, string>();
    let model: ScriptedOllama;
    const subset = () =>
      cases.filter((c) => c.question.dbName === 'restaurants' || c.question.dbName === 'ewallet');

    beforeAll(async () => {
      for (const name of ['restaurants', 'ewallet']) {
        const dir = join(home, `pglite-${name}`);
        await loadDefogIntoPglite(name, dir);
        dirs.set(name, dir);
      }
      model = await startModel(subset());
    }, 300_000);
    afterAll(async () => model?.close());

    it('every restaurants and ewallet question returns exactly the gold rows', async () => {
      const chosen = subset();
      expect(chosen.length).toBeGreaterThan(20);
      // Gold rows are computed first, then each data dir is closed again for the CLI.
      const expected = new Map<number, string[]>();
      for (const [name, dir] of dirs) {
        const db = new PGlite(dir);
        for (const c of chosen.filter((x) => x.question.dbName === name)) {
          const res = await db.query<unknown[]>(c.gold, [], {
            rowMode: 'array',
            parsers: Object.fromEntries(Array.from({ length: 5000 }, (_, oid) => [oid, (v: string) => v])),
          });
          expected.set(c.index, canonRows(res.rows));
        }
        await db.close();
      }
      const { failures, asked } = await askAll(
        chosen,
        (name) => `pglite:${dirs.get(name)}`,
        model,
        home,
        async (c) => expected.get(c.index)!,
        1, // one command at a time per PGlite data directory
      );
      expect(failures).toEqual([]);
      expect(asked.length).toBe(chosen.length + dirs.size);
      expect(extraSqlCalls(model, asked)).toEqual([]);
    }, 900_000);
  });
});
