/**
 * Issue 14, one value model end to end: one table holding every kind of value (NULL, the text
 * 'NULL', '', JSON null, big and negative numerics, money, emoji, newlines, tabs, pipes, quotes),
 * read through every surface this side owns: `sql --json`, `ask --json`, the CLI table, the
 * answer prompt (from the scripted server's request log), HTTP JSON and SSE.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_PROMPT_MARKER, SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { seedPgliteDataDir } from './support/pglite-template.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { createLocalApp, type LocalApp, parseSse } from './support/server-app.js';

const FORGED = 'ok\n6 | forged-row';
const FAMILY = '👩‍👩‍👧‍👦';

const FIXTURE = `
CREATE TYPE mood AS ENUM ('sad', 'ok');
CREATE TABLE fidelity (
  id int PRIMARY KEY, label text, big bigint, exact numeric, price money, doc jsonb, at timestamptz,
  day date, span interval, tags text[], raw bytea, feeling mood, flag boolean
);
INSERT INTO fidelity VALUES
 (1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (2, 'NULL', 9223372036854775807, -12345678901234567890.0123456789, '-92233720368547758.08', 'null',
     '2024-02-29 13:14:15.5+00', '2024-02-29', '1 day 02:03:04', ARRAY['a,b', 'NULL', NULL], '\\xdeadbeef', 'ok', true),
 (3, '', -9223372036854775808, 0.1, 120.50, '{"n": 12345678901234567890, "s": "x"}',
     '2024-01-01 00:00:00+00', '1999-12-31', '-00:00:01', '{}', '\\x', 'sad', false),
 (4, E'ok\\n6 | forged-row', 9007199254740993, 1e-20, 0, '[1, 2.5, "three"]',
     NULL, NULL, NULL, ARRAY['say "hi"'], NULL, NULL, NULL),
 (5, E'tab\\there "quoted" | pipe ${FAMILY} emoji', 0, -0.5, 1234567.89, '"just text"',
     NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (6, repeat('${FAMILY}', 70), 1, 1, 1, '{}', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
`;
const QUERY = 'SELECT * FROM fidelity ORDER BY id';

const TYPES = [
  'int4',
  'text',
  'int8',
  'numeric',
  'money',
  'jsonb',
  'timestamptz',
  'date',
  'interval',
  'text[]',
  'bytea',
  'mood',
  'bool',
];

/** The column names of {@link QUERY}, in order. */
const NAMES = [
  'id',
  'label',
  'big',
  'exact',
  'price',
  'doc',
  'at',
  'day',
  'span',
  'tags',
  'raw',
  'feeling',
  'flag',
];

/** The rows every JSON surface must return (SQL NULL → null; everything else exact). */
const ROWS: unknown[][] = [
  [1, null, null, null, null, null, null, null, null, null, null, null, null],
  [
    2,
    'NULL',
    '9223372036854775807',
    '-12345678901234567890.0123456789',
    '-92233720368547758.08',
    'null',
    '2024-02-29T13:14:15.5+00:00',
    '2024-02-29',
    '1 day 02:03:04',
    ['a,b', 'NULL', null],
    '<binary 4 bytes>',
    'ok',
    true,
  ],
  [
    3,
    '',
    '-9223372036854775808',
    '0.1',
    '120.50',
    '{"n": 12345678901234567890, "s": "x"}',
    '2024-01-01T00:00:00+00:00',
    '1999-12-31',
    '-00:00:01',
    [],
    '<binary 0 bytes>',
    'sad',
    false,
  ],
  [
    4,
    FORGED,
    '9007199254740993',
    '0.00000000000000000001',
    '0.00',
    '[1, 2.5, "three"]',
    null,
    null,
    null,
    ['say "hi"'],
    null,
    null,
    null,
  ],
  [
    5,
    `tab\there "quoted" | pipe ${FAMILY} emoji`,
    '0',
    '-0.5',
    '1234567.89',
    '"just text"',
    ...Array(7).fill(null),
  ],
  [6, FAMILY.repeat(70), '1', '1', '1.00', '{}', ...Array(7).fill(null)],
];

let dir: string;
let home: string;
let model: ScriptedOllama;
let env: Record<string, string>;

beforeAll(async () => {
  dir = seedPgliteDataDir(mkdtempSync(join(tmpdir(), 'sqlrecall-fidelity-')));
  home = mkdtempSync(join(tmpdir(), 'sqlrecall-fidelity-home-'));
  const db = new PGlite(dir);
  // The session time zone decides the timestamptz offset: UTC, as a fresh server has it.
  await db.exec(`ALTER DATABASE postgres SET timezone TO 'UTC'; ${FIXTURE}`);
  await db.close();
  model = await startScriptedOllama({
    chat: (request) => {
      if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) return `\`\`\`sql\n${QUERY}\n\`\`\``;
      if (request.messages[0]?.content.startsWith(ANSWER_PROMPT_MARKER)) return 'Six rows.';
      return 'ok';
    },
  });
  env = {
    SQLRECALL_HOME: home,
    DATABASE_URL: `pglite:${dir}`,
    OLLAMA_HOST: model.url,
    SQLRECALL_MEMORY: 'off',
    NO_COLOR: '1',
  };
}, 120_000);

afterAll(async () => {
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** The row lines of the last answer prompt, parsed (one JSON array per line). */
function answerPromptRows(): { header: string[]; rows: unknown[][] } {
  const answer = model
    .chatRequests()
    .filter((r) => r.messages[0]?.content.startsWith(ANSWER_PROMPT_MARKER))
    .at(-1);
  expect(answer).toBeDefined();
  const user = answer!.messages.at(-1)!.content;
  const block = user.slice(user.indexOf('<rows>\n') + 7, user.indexOf('\n</rows>'));
  const lines = block.split('\n');
  expect(lines[0]!.startsWith('columns: ')).toBe(true);
  expect(lines[1]).toBe(`types: ${JSON.stringify(TYPES)}`);
  const rowLines = lines.slice(2).filter((line) => !line.startsWith('('));
  return {
    header: JSON.parse(lines[0]!.slice('columns: '.length)) as string[],
    rows: rowLines.map((line) => JSON.parse(line) as unknown[]),
  };
}

describe('one value model on every surface', () => {
  it('sql --json: exact values, columnTypes, NULL distinct from "NULL", "" and JSON null', async () => {
    const run = await runCliInProcess(['sql', '--json', QUERY], { env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.columnTypes).toEqual(TYPES);
    expect(doc.rows).toEqual(ROWS);
    expect(doc.truncated).toBe(false);
    expect(doc).not.toHaveProperty('truncatedReason');
  }, 60_000);

  it('ask --json: the same rows and columnTypes; the answer prompt carries them as JSON lines', async () => {
    const run = await runCliInProcess(['ask', '--json', 'show everything'], { env });
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.sql).toBe(QUERY);
    expect(doc.columnTypes).toEqual(TYPES);
    expect(doc.rows).toEqual(ROWS);
    const prompt = answerPromptRows();
    expect(prompt.header[0]).toBe('id');
    // Exactly six rows: the newline in row 4 cannot forge a seventh; long values are cut, marked.
    expect(prompt.rows).toHaveLength(6);
    expect(prompt.rows.slice(0, 5)).toEqual(ROWS.slice(0, 5));
    expect(prompt.rows.map((row) => row.length)).toEqual(Array(6).fill(TYPES.length));
  }, 60_000);

  it('CLI table: dimmed ∅ for NULL, "NULL" and "" as text, one line per row, emoji never split', async () => {
    const run = await runCliInProcess(['sql', QUERY], { env });
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n').filter((line) => /^│\s+\d+ │/.test(line));
    expect(lines.map((line) => /^│\s+(\d+) │/.exec(line)![1])).toEqual(['1', '2', '3', '4', '5', '6']);
    const cells = (line: string) => line.split('│').slice(1, -1);
    expect(cells(lines[0]!)[1]!.trim()).toBe('∅');
    expect(cells(lines[1]!)[1]!.trim()).toBe('NULL');
    expect(cells(lines[2]!)[1]!.trim()).toBe('');
    expect(cells(lines[1]!)[5]!.trim()).toBe('null'); // JSON null is text, not ∅
    expect(cells(lines[3]!)[1]!.trim()).toBe('ok↵6 | forged-row');
    expect(cells(lines[4]!)[1]!).toContain('tab⇥here "quoted" | pipe');
    expect(run.stdout).not.toContain('\uFFFD');
    expect(run.stdout).toContain(`${FAMILY}…`);
    expect(cells(lines[1]!)[2]!).toMatch(/^ +9223372036854775807 $/); // right-aligned
  }, 60_000);
});

describe('sql accepts what users type', () => {
  it('a statement starting with a -- or /* */ comment, and - for stdin', async () => {
    const dashed = await runCliInProcess(['sql', '--json', '-- the answer\nSELECT 42 AS answer'], { env });
    expect(dashed.stderr).toBe('');
    expect(JSON.parse(dashed.stdout).rows).toEqual([[42]]);
    const block = await runCliInProcess(['sql', '/* c */ SELECT 7 AS seven', '--json'], { env });
    expect(JSON.parse(block.stdout).rows).toEqual([[7]]);
    const piped = await runCliInProcess(['sql', '--json', '-'], {
      env,
      input: '-- from stdin\nSELECT 1 AS one',
    });
    expect(JSON.parse(piped.stdout).rows).toEqual([[1]]);
  }, 60_000);
});

describe('HTTP', () => {
  let local: LocalApp;

  beforeAll(async () => {
    local = createLocalApp({ databaseUrl: `pglite:${dir}`, ollamaHost: model.url, home });
  }, 60_000);
  afterAll(async () => {
    await local?.close();
  });

  const ask = (accept: string) => local.ask('show everything', accept);

  it('POST /api/ask (JSON): the same rows and columnTypes', async () => {
    const res = await ask('application/json');
    expect(res.status).toBe(200);
    // biome-ignore lint/suspicious/noExplicitAny: the JSON document under test, read field by field
    const doc: any = await res.json();
    expect(doc.columnTypes).toEqual(TYPES);
    expect(doc.rows).toEqual(ROWS);
    // The ask document on every surface: column names, their types beside them in columnTypes.
    expect(doc.columns).toEqual(NAMES);
  }, 60_000);

  it('POST /api/ask (SSE): the rows event carries the same values; proxies must not buffer', async () => {
    const res = await ask('text/event-stream');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('cache-control')).toBe('no-cache, no-transform');
    const events = parseSse(await res.text());
    const rows = events.find((e) => e.event === 'rows')?.data as { rows: unknown[][]; columnTypes: string[] };
    expect(rows.columnTypes).toEqual(TYPES);
    expect(rows.rows).toEqual(ROWS);
    expect(events.at(-1)?.event).toBe('done');
  }, 60_000);
});
