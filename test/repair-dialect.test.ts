/**
 * Issue 11 end to end (in-process CLI, scripted model, real PostgreSQL: PGlite always, the server
 * when TEST_DATABASE_URL is set): each case sends the bad SQL first and the right SQL on the repair
 * call, and ends with the right rows and every attempt listed. Several statements and every
 * parseable attack-corpus statement are still refused with no repair round (model calls counted).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndRun, POSTGRES_DIALECT_HINT, unanswerableAnswer } from '../src/agent/generate.js';
import { ANSWER_PROMPT_MARKER, REPAIR_PROMPT_MARKER, SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import type { ChatModel, DatabaseConnector } from '../src/core/ports.js';
import { guardSql } from '../src/sql/guard.js';
import { ATTACKS } from './support/attacks.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { seedPgliteDataDir } from './support/pglite-template.js';
import {
  type ScriptedChatRequest,
  type ScriptedOllama,
  type ScriptedReply,
  startScriptedOllama,
} from './support/scripted/server.js';
import { createTempDatabase, TEST_DATABASE_URL, type TempDatabase } from './support/server-db.js';

const FIXTURE_SQL = `
CREATE TABLE cities (id int PRIMARY KEY, name text NOT NULL, country text NOT NULL);
INSERT INTO cities VALUES (1, 'Paris', 'France'), (2, 'São Paulo', 'Brazil'), (3, 'Berlin', 'Germany'), (4, 'Lyon', 'France');
CREATE TABLE "order" (id int PRIMARY KEY, "user" text NOT NULL, city_id int REFERENCES cities(id), placed_on date NOT NULL);
INSERT INTO "order" VALUES (1, 'ann', 1, DATE '2020-01-01'), (2, 'ben', 2, DATE '2020-01-02'), (3, 'cy', 1, current_date);
CREATE SCHEMA payroll;
CREATE TABLE payroll.salaries (id int PRIMARY KEY, amount int NOT NULL);
INSERT INTO payroll.salaries VALUES (1, 100), (2, 250);
`;

/**
 * A time zone whose date differs from the process clock's UTC date right now: UTC+14 when UTC is
 * past 10:00 (the database is already on tomorrow), otherwise UTC−12 (still on yesterday).
 */
function zoneOffTheProcessDate(): string {
  return new Date().getUTCHours() >= 10 ? 'Pacific/Kiritimati' : 'Etc/GMT+12';
}

const fenced = (sql: string) => `\`\`\`sql\n${sql}\n\`\`\``;

/** Replies per question, one per SQL call in order (the last repeats). `{today}` is the prompt's date. */
const SCRIPTS: Record<string, ScriptedReply[]> = {
  'backticks?': [
    fenced('SELECT `name` FROM cities ORDER BY `name`'),
    fenced('SELECT name FROM cities ORDER BY name'),
  ],
  'top?': [
    fenced('SELECT TOP 2 name FROM cities ORDER BY id'),
    fenced('SELECT name FROM cities ORDER BY id LIMIT 2'),
  ],
  'limit?': [
    fenced('SELECT name FROM cities ORDER BY id LIMIT 1, 2'),
    fenced('SELECT name FROM cities ORDER BY id LIMIT 2 OFFSET 1'),
  ],
  'truncated?': [
    { text: '```sql\nSELECT name FROM cities WHERE coun', doneReason: 'length' },
    fenced("SELECT name FROM cities WHERE country = 'France' ORDER BY name"),
  ],
  'always truncated?': [{ text: '```sql\nSELECT name FROM', doneReason: 'length' }],
  'sqlquery?': [
    'SQLQuery: "SELECT name FROM citys"',
    `SQLQuery: "SELECT name FROM cities WHERE country = 'Brazil'"`,
  ],
  'json?': [
    '{"sql": "SELECT nme FROM cities"}',
    `{"sql": "SELECT name FROM cities WHERE country = 'Germany'"}`,
  ],
  'case?': [
    fenced("SELECT id, country FROM cities WHERE name = 'paris'"),
    fenced("SELECT id, country FROM cities WHERE name = 'Paris'"),
  ],
  'accent?': [
    fenced("SELECT id FROM cities c WHERE c.name IN ('Sao Paulo')"),
    fenced("SELECT id FROM cities c WHERE c.name IN ('São Paulo')"),
  ],
  'nowhere?': [fenced("SELECT id FROM cities WHERE name = 'Atlantis'")],
  'user?': [
    fenced('SELECT id, user FROM "order" ORDER BY id'),
    fenced('SELECT id, "user" FROM "order" ORDER BY id'),
  ],
  'salaries?': [
    fenced('SELECT sum(amount) AS total FROM salaries'),
    fenced('SELECT sum(amount) AS total FROM payroll.salaries'),
  ],
  'today?': [fenced('SELECT "user" FROM "order" WHERE placed_on = \'{today}\'')],
  'several?': [fenced('SELECT 1;\nDROP TABLE cities')],
  'weather?': ['CANNOT_ANSWER: there is no weather data in the schema'],
};

interface AskDoc {
  sql: string | null;
  rows: unknown[][];
  answer: string | null;
  attempts: { sql: string; error?: string }[];
  error?: { code: string; message: string; hint?: string };
}

function suite(engine: 'pglite' | 'server') {
  describe(engine, () => {
    let model: ScriptedOllama;
    let dbUrl: string;
    let temp: TempDatabase | undefined;
    let zone: string;
    let dbToday: string;
    const calls = new Map<string, number>();
    let env: Record<string, string>;

    const questionOf = (req: ScriptedChatRequest) => {
      const prompt = req.messages.find((m) => m.role === 'user')?.content ?? '';
      return [...prompt.matchAll(/^Question: (.*)$/gm)].pop()?.[1] ?? '';
    };
    const reply = (req: ScriptedChatRequest): ScriptedReply => {
      const system = req.messages[0]?.content ?? '';
      if (system.startsWith(ANSWER_PROMPT_MARKER)) return 'Here is the answer.';
      if (!system.startsWith(SQL_PROMPT_MARKER)) return 'unused';
      const question = questionOf(req);
      const n = calls.get(question) ?? 0;
      calls.set(question, n + 1);
      const script = SCRIPTS[question] ?? ['SELECT 1'];
      const next = script[Math.min(n, script.length - 1)]!;
      const today = /Today is (\d{4}-\d{2}-\d{2})/.exec(
        req.messages.find((m) => m.role === 'user')!.content,
      )?.[1];
      return typeof next === 'string' ? next.replace('{today}', today ?? '') : next;
    };
    const sqlCalls = (question: string) =>
      model
        .chatRequests()
        .filter((r) => r.messages[0]?.content.startsWith(SQL_PROMPT_MARKER) && questionOf(r) === question);

    beforeAll(async () => {
      zone = zoneOffTheProcessDate();
      const seed = `SET TimeZone = '${zone}';\n${FIXTURE_SQL}`;
      if (engine === 'pglite') {
        const dir = seedPgliteDataDir(mkdtempSync(join(tmpdir(), 'sqlrecall-dialect-')));
        const db = new PGlite(dir);
        await db.exec(seed);
        // PGlite sets TimeZone at start-up; only the server configuration (postgresql.auto.conf) outlasts it.
        await db.exec(`ALTER SYSTEM SET timezone = '${zone}'`);
        dbToday = (await db.query<{ d: string }>("SELECT to_char(current_date, 'YYYY-MM-DD') AS d")).rows[0]!
          .d;
        await db.close();
        dbUrl = `pglite:${dir}`;
        env = { SQLRECALL_HOME: dir, SQLRECALL_MEMORY: 'off' };
      } else {
        temp = await createTempDatabase('sqlrecall_dialect');
        const client = new pg.Client({ connectionString: temp.url });
        await client.connect();
        await client.query(seed);
        await client.query(`ALTER DATABASE "${temp.name}" SET timezone = '${zone}'`);
        dbToday = (await client.query("SELECT to_char(current_date, 'YYYY-MM-DD') AS d")).rows[0].d;
        await client.end();
        dbUrl = temp.url;
        env = {
          SQLRECALL_HOME: mkdtempSync(join(tmpdir(), 'sqlrecall-dialect-home-')),
          SQLRECALL_MEMORY: 'off',
        };
      }
      model = await startScriptedOllama({ chat: reply });
      env.OLLAMA_HOST = model.url;
    }, 60_000);
    afterAll(async () => {
      await model?.close();
      await temp?.drop();
    });

    const ask = async (question: string, extra: string[] = []) => {
      model.reset();
      calls.clear();
      const run = await runCliInProcess(['ask', '--db', dbUrl, '--json', ...extra, question], { env });
      return { code: run.code, doc: JSON.parse(run.stdout) as AskDoc, stderr: run.stderr };
    };

    /** The repair prompt the model received (the last user message of the second SQL call). */
    const repairPrompt = (question: string) => {
      const repair = sqlCalls(question)[1]!;
      expect(repair.lastUserMessage.startsWith(REPAIR_PROMPT_MARKER)).toBe(true);
      return repair.lastUserMessage;
    };

    it.each([
      ['backticks?', [['Berlin'], ['Lyon'], ['Paris'], ['São Paulo']], /syntax error at or near/],
      ['top?', [['Paris'], ['São Paulo']], /syntax error at or near "2"/],
      ['limit?', [['São Paulo'], ['Berlin']], /LIMIT #,# syntax is not supported/],
    ])(
      'repairs a parse error (%s) with the parser message and the dialect hint',
      async (question, rows, parser) => {
        const { code, doc, stderr } = await ask(question);
        expect(code, stderr).toBe(0);
        expect(doc.rows).toEqual(rows);
        expect(doc.attempts).toHaveLength(2);
        expect(doc.attempts[0]!.error).toMatch(parser);
        expect(doc.attempts[0]!.error).toContain(POSTGRES_DIALECT_HINT);
        expect(doc.attempts[1]).toEqual({ sql: doc.sql });
        expect(repairPrompt(question)).toContain(POSTGRES_DIALECT_HINT);
        expect(sqlCalls(question)).toHaveLength(2);
      },
      60_000,
    );

    it('retries a truncated reply once with a larger num_predict, then fails naming the limit', async () => {
      const { code, doc, stderr } = await ask('truncated?');
      expect(code, stderr).toBe(0);
      expect(doc.rows).toEqual([['Lyon'], ['Paris']]);
      expect(doc.attempts).toHaveLength(2);
      expect(doc.attempts[0]!.error).toMatch(/cut at the output limit of 1024 tokens; retried with 4096/);
      const [first, second] = sqlCalls('truncated?');
      expect(first!.options?.num_predict).toBe(1024);
      expect(second!.options?.num_predict).toBe(4096);

      const cut = await ask('always truncated?', ['--max-sql-tokens', '200']);
      expect(cut.code).toBe(5);
      expect(cut.doc.error?.code).toBe('model_truncated');
      expect(cut.doc.error?.message).toMatch(
        /output limit of 800 tokens.*--max-sql-tokens \(SQLRECALL_MAX_SQL_TOKENS\)/,
      );
      expect(cut.doc.attempts).toHaveLength(2);
      expect(sqlCalls('always truncated?').map((r) => r.options?.num_predict)).toEqual([200, 800]);
      const help = await runCliInProcess(['--help'], { env });
      expect(help.stdout).toContain('--max-sql-tokens');
    }, 60_000);

    it.each([
      ['sqlquery?', [['São Paulo']], /table citys does not exist; did you mean cities\?/],
      ['json?', [['Berlin']], /column nme does not exist in cities; did you mean cities\.name\?/],
    ])(
      'reads SQL in a string reply (%s) and repairs it',
      async (question, rows, error) => {
        const { code, doc, stderr } = await ask(question);
        expect(code, stderr).toBe(0);
        expect(doc.rows).toEqual(rows);
        expect(doc.attempts).toHaveLength(2);
        expect(doc.attempts[0]!.error).toMatch(error);
      },
      60_000,
    );

    it.each([
      ['case?', [[1, 'France']], "'Paris'"],
      ['accent?', [[2]], "'São Paulo'"],
    ])(
      'repairs a literal that matches nothing (%s) by naming the stored variant',
      async (question, rows, candidate) => {
        const { code, doc, stderr } = await ask(question);
        expect(code, stderr).toBe(0);
        expect(doc.rows).toEqual(rows);
        expect(doc.attempts).toHaveLength(2);
        expect(doc.attempts[0]!.error).toMatch(/^The query returned no rows/);
        expect(doc.attempts[0]!.error).toContain(`the column holds ${candidate}`);
        expect(repairPrompt(question)).toContain(candidate);
      },
      60_000,
    );

    it('says which filter matched nothing and what values exist, without a repair when nothing is close', async () => {
      const { code, doc } = await ask('nowhere?');
      expect(code).toBe(0);
      expect(doc.rows).toEqual([]);
      expect(doc.attempts).toHaveLength(1);
      expect(doc.answer).toBe(
        "No matching data: cities.name = 'Atlantis' matched nothing (values there include 'Berlin', 'Lyon', 'Paris', 'São Paulo').",
      );
      expect(sqlCalls('nowhere?')).toHaveLength(1);
    }, 60_000);

    it('repairs an unquoted special name that is a column (user) with the quoted column', async () => {
      const { code, doc, stderr } = await ask('user?');
      expect(code, stderr).toBe(0);
      expect(doc.rows).toEqual([
        [1, 'ann'],
        [2, 'ben'],
        [3, 'cy'],
      ]);
      expect(doc.attempts).toHaveLength(2);
      expect(doc.attempts[0]!.error).toMatch(
        /unquoted user is PostgreSQL's user function.*did you mean "user"\?/,
      );
    }, 60_000);

    it('suggests schema.table for an unqualified table that exists only off the search path', async () => {
      const { code, doc, stderr } = await ask('salaries?');
      expect(code, stderr).toBe(0);
      expect(doc.rows).toEqual([['350']]);
      expect(doc.attempts).toHaveLength(2);
      expect(doc.attempts[0]!.error).toMatch(
        /table salaries is not on the search path.*did you mean payroll\.salaries\?/,
      );
    }, 60_000);

    it("puts the database's own today and time zone in the prompt, not the process clock's", async () => {
      expect(dbToday).not.toBe(new Date().toISOString().slice(0, 10));
      const { code, doc, stderr } = await ask('today?');
      expect(code, stderr).toBe(0);
      expect(doc.rows).toEqual([['cy']]);
      const prompt = sqlCalls('today?')[0]!.messages.find((m) => m.role === 'user')!.content;
      expect(prompt).toContain(`Today is ${dbToday} in the database's time zone (${zone})`);
    }, 60_000);

    it('still refuses several statements at once, with no repair round', async () => {
      const { code, doc } = await ask('several?');
      expect(code).toBe(3);
      expect(doc.error?.code).toBe('guard_refused');
      expect(doc.attempts).toHaveLength(1);
      expect(sqlCalls('several?')).toHaveLength(1);
    }, 60_000);

    it('composes the CANNOT_ANSWER sentence from the reason', async () => {
      const { code, doc } = await ask('weather?');
      expect(code).toBe(0);
      expect(doc.answer).toBe(
        'This database cannot answer that question: there is no weather data in the schema.',
      );
    }, 60_000);
  });
}

suite('pglite');
describe.skipIf(!TEST_DATABASE_URL)('server', () => suite('server'));

describe('refusals are never repaired', () => {
  it('refuses every parseable attack-corpus statement after exactly one model call', async () => {
    // Only the connector's dialect (which guard applies) may be read; nothing may run on it.
    const never = new Proxy({} as DatabaseConnector, {
      get(_target, property) {
        if (property === 'dialect') return 'postgres';
        throw new Error('the connector must not be reached');
      },
    });
    let parseable = 0;
    for (const attack of ATTACKS) {
      const verdict = await guardSql(attack.sql);
      if (!verdict.ok && verdict.rule === 'parse-error') continue;
      if (verdict.ok) continue; // reads the corpus lists as allowed
      parseable += 1;
      let modelCalls = 0;
      const chat: ChatModel = {
        id: 'fixed',
        async *stream() {
          modelCalls += 1;
          yield { type: 'text-delta', text: `\`\`\`sql\n${attack.sql}\n\`\`\`` };
          yield { type: 'finish', finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
        },
      };
      const loop = generateAndRun({
        chat,
        db: never,
        messages: [],
        maxRows: 5,
        statementTimeoutMs: 1000,
        maxRepairs: 2,
        maxTokens: 100,
      });
      let error: unknown;
      try {
        for (;;) if ((await loop.next()).done) break;
      } catch (e) {
        error = e;
      }
      expect(error, attack.id).toMatchObject({
        code: expect.stringMatching(/^(guard_refused|sql_not_found)$/),
      });
      expect(modelCalls, attack.id).toBe(1);
    }
    expect(parseable).toBeGreaterThan(100);
  }, 60_000);

  it('words unanswerable reasons as a sentence', () => {
    expect(unanswerableAnswer('there is no weather data in the schema')).toBe(
      'This database cannot answer that question: there is no weather data in the schema.',
    );
    expect(unanswerableAnswer('weather forecasts')).toBe(
      'This database has no data about weather forecasts.',
    );
    expect(unanswerableAnswer('No data about salaries.')).toBe('This database has no data about salaries.');
    expect(unanswerableAnswer('')).toBe('This database has no data to answer that question.');
  });
});
