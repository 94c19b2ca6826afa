/**
 * Credentials never in the audit trail: literals of recorded SQL that look like secrets are
 * masked on the parse tree (compared to or assigned to a secret-looking column, a role's password,
 * a URL's password, `password=` pairs), on the tokens for text the parser does not take (MySQL),
 * in the question and the reason too, in the journal as it is written, and when records kept
 * before masking are listed. Ordinary literals stay as they were.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../src/audit/log.js';
import { isSecretName, maskAuditRecord, maskSqlSecrets } from '../src/audit/mask.js';
import { AuditStore } from '../src/audit/store.js';
import type { AuditRecord } from '../src/core/audit.js';
import { createPgliteClient } from '../src/memory/store/shared-pglite.js';
import type { SqlClient } from '../src/memory/store/sql-client.js';
import { loadSqlParser } from '../src/sql/parse-tree.js';
import { tempDir } from './support/temp-dir.js';

beforeAll(async () => {
  await loadSqlParser();
});

/** Hostile statements: each holds the secret `S3cr3t-pw!` and must lose it. */
const HOSTILE: [string, string][] = [
  ['equality', "SELECT id FROM users WHERE password = 'S3cr3t-pw!'"],
  ['reversed', "SELECT id FROM users WHERE 'S3cr3t-pw!' = password"],
  ['quoted, mixed case', `SELECT id FROM users u WHERE u."Password_Hash" = 'S3cr3t-pw!'`],
  ['escape string', "SELECT id FROM users WHERE passwd = E'S3cr3t-pw!'"],
  ['dollar quoted', 'SELECT id FROM users WHERE api_key = $$S3cr3t-pw!$$'],
  ['tagged dollar quote', 'SELECT id FROM users WHERE api_key = $k$S3cr3t-pw!$k$'],
  ['cast', "SELECT id FROM users WHERE token = 'S3cr3t-pw!'::text"],
  ['typed literal', "SELECT id FROM users WHERE token = text 'S3cr3t-pw!'"],
  ['IN list', "SELECT id FROM users WHERE secret IN ('a', 'S3cr3t-pw!')"],
  ['ANY array', "SELECT id FROM users WHERE secret = ANY(ARRAY['x', 'S3cr3t-pw!'])"],
  ['LIKE', "SELECT id FROM users WHERE client_secret LIKE 'S3cr3t-pw!%'"],
  ['function of the column', "SELECT id FROM users WHERE lower(refresh_token) = 'S3cr3t-pw!'"],
  ['inside a function with it', "SELECT strpos(password, 'S3cr3t-pw!') FROM users"],
  ['crypt', "SELECT id FROM users WHERE pwd = crypt('S3cr3t-pw!', pwd)"],
  ['CASE', "SELECT CASE apiKey WHEN 'S3cr3t-pw!' THEN 1 END FROM users"],
  ['JSON key', "SELECT id FROM users WHERE settings->>'api_key' = 'S3cr3t-pw!'"],
  ['subquery', "SELECT * FROM t WHERE id IN (SELECT id FROM users WHERE password = 'S3cr3t-pw!')"],
  ['CTE', "WITH x AS (SELECT * FROM users WHERE access_token = 'S3cr3t-pw!') SELECT * FROM x"],
  ['UPDATE SET', "UPDATE users SET password = 'S3cr3t-pw!' WHERE id = 1"],
  ['INSERT VALUES', "INSERT INTO users (name, password) VALUES ('ann', 'S3cr3t-pw!')"],
  ['INSERT SELECT', "INSERT INTO users (name, password) SELECT 'ann', 'S3cr3t-pw!'"],
  ['alias', "SELECT 'S3cr3t-pw!' AS secret"],
  ['named argument', "SELECT crypt(password => 'S3cr3t-pw!')"],
  ['role password', "ALTER ROLE bob PASSWORD 'S3cr3t-pw!'"],
  ['create user', "CREATE USER bob WITH LOGIN PASSWORD 'S3cr3t-pw!'"],
  ['user mapping', "CREATE USER MAPPING FOR bob SERVER s OPTIONS (user 'bob', password 'S3cr3t-pw!')"],
  [
    'URL in a literal',
    "SELECT * FROM dblink('postgresql://bob:S3cr3t-pw!@db.example/prod', 'SELECT 1') AS t(x int)",
  ],
  ['pair in a literal', "SELECT dblink_connect('host=db user=bob password=S3cr3t-pw!')"],
  ['comment', 'SELECT 1 /* password=S3cr3t-pw! */'],
  ['line comment', 'SELECT 1 -- postgres://bob:S3cr3t-pw!@h/db\n'],
  ['unicode around it', "SELECT 'é' AS name FROM users WHERE password = 'S3cr3t-pw!' AND city = 'Zürich'"],
  ['a sub-select of it', "SELECT id FROM users WHERE password IN (SELECT 'S3cr3t-pw!')"],
  ['a value list', "SELECT id FROM users WHERE password = any(values ('S3cr3t-pw!'))"],
  ['a Unicode-escape string', "SELECT id FROM users WHERE password = U&'S3cr3t-pw!'"],
  ['a JSON path', "SELECT id FROM users WHERE data #>> '{auth,password}' = 'S3cr3t-pw!'"],
  ['an ODBC connection string', "SELECT 'Server=db;Uid=bob;Pwd=S3cr3t-pw!;' AS c"],
];

describe('maskSqlSecrets on the parse tree', () => {
  it.each(HOSTILE)('%s: the secret is gone', (_name, sql) => {
    const masked = maskSqlSecrets(sql);
    expect(masked.sql).not.toContain('S3cr3t-pw!');
    expect(masked.sql).toContain('***');
    // Idempotent: masking again changes nothing.
    expect(maskSqlSecrets(masked.sql).sql).toBe(masked.sql);
  });

  it('keeps ordinary literals, numbers and names, and what is compared to an ordinary column', () => {
    const sql =
      "SELECT name, password FROM users WHERE name = 'ann' AND created > '2024-01-01' AND id = 7 AND password IS NOT NULL";
    expect(maskSqlSecrets(sql)).toEqual({ sql, secrets: [] });
    const mixed = maskSqlSecrets("SELECT id FROM users WHERE name = 'ann' AND password = 'hunter22'");
    expect(mixed.sql).toBe("SELECT id FROM users WHERE name = 'ann' AND password = '***'");
    expect(mixed.secrets).toEqual(['hunter22']);
    expect(maskSqlSecrets('SELECT 1').sql).toBe('SELECT 1');
  });

  it('keeps the text around a masked literal byte for byte (multi-byte characters before it)', () => {
    expect(maskSqlSecrets("SELECT 'ü€😀' AS x FROM t WHERE token = 'abc' AND y = 'ö'").sql).toBe(
      "SELECT 'ü€😀' AS x FROM t WHERE token = '***' AND y = 'ö'",
    );
  });
});

describe('maskSqlSecrets on text the parser does not take', () => {
  it.each([
    ['MySQL backslash escape', "SELECT id FROM `users` WHERE `password` = 'S3cr\\'3t-pw!' AND name = 'n'"],
    ['MySQL double-quoted string', 'SELECT id FROM users WHERE password = "S3cr3t-pw!"'],
    ['MySQL IDENTIFIED BY', "CREATE USER 'bob'@'%' IDENTIFIED BY 'S3cr3t-pw!'"],
    ['a syntax error', "SELECT id FROM users WHERE password = 'S3cr3t-pw!' AND"],
    [
      'JSON key',
      "SELECT id FROM users WHERE JSON_EXTRACT(s, '$.x') AND data->>'api_key' = 'S3cr3t-pw!' LIMIT",
    ],
    ['an unterminated literal', "SELECT id FROM users WHERE token = 'S3cr3t-pw!"],
    ['a URL', "SELECT * FROM t WHERE u = 'mysql://root:S3cr3t-pw!@h/db' GROUP"],
    ['SQLite GLOB', "SELECT id FROM users WHERE password GLOB 'S3cr3t-pw!'"],
    ['MySQL REGEXP', "SELECT id FROM users WHERE password REGEXP 'S3cr3t-pw!'"],
    ['MySQL sub-select', "SELECT id FROM `users` WHERE `password` IN (SELECT 'S3cr3t-pw!' FROM DUAL) LIMIT"],
  ])('%s: the secret is gone', (_name, sql) => {
    const masked = maskSqlSecrets(sql);
    expect(masked.sql).not.toMatch(/S3cr|3t-pw/);
  });

  it('keeps ordinary literals there too', () => {
    const sql = "SELECT id FROM `users` WHERE name = 'it\\'s' AND city = 'Zürich' LIMIT";
    expect(maskSqlSecrets(sql).sql).toBe(sql);
  });
});

describe('secret-looking names', () => {
  it.each([
    'password',
    'PASSWORD',
    'user_passwd',
    'passphrase',
    'apiKey',
    'API_KEY',
    'refresh_token',
    'client_secret',
    'pwd',
    'db_pass',
    'private_key',
  ])('%s is one', (name) => {
    expect(isSecretName(name)).toBe(true);
  });
  it.each(['name', 'passenger', 'bypass_count', 'compass', 'email', 'id', 'keyword'])('%s is not', (name) => {
    expect(isSecretName(name)).toBe(false);
  });
});

function record(over: Partial<AuditRecord>): AuditRecord {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    at: '2026-12-01T00:00:00.000Z',
    user: 'sam',
    frontEnd: 'cli',
    question: null,
    sql: 'SELECT 1',
    outcome: 'refused',
    origin: 'person',
    rowCount: null,
    reason: null,
    code: 'guard_refused',
    policies: [],
    ...over,
  };
}

describe('maskAuditRecord', () => {
  it('masks the values taken from the SQL in the question and the reason, and free-text secrets', () => {
    const masked = maskAuditRecord(
      record({
        sql: "ALTER ROLE bob PASSWORD 'Tr0ub4dor&3'",
        question: 'set the password of bob to Tr0ub4dor&3, connect with postgres://bob:Tr0ub4dor&3@h/db',
        reason: 'Refused: ALTER ROLE bob PASSWORD Tr0ub4dor&3 is not a read (rule statement-kind)',
      }),
    );
    expect(JSON.stringify(masked)).not.toContain('Tr0ub4dor');
    expect(masked.reason).toMatch(/\(rule statement-kind\)$/);
    expect(masked.question).toMatch(/^set the password of bob to \*\*\*/);
  });

  it('leaves a record without secrets as it was', () => {
    const plain = record({ sql: "SELECT * FROM t WHERE name = 'ann'", question: 'who is ann?', reason: 'x' });
    expect(maskAuditRecord(plain)).toEqual(plain);
  });
});

describe('the audit trail', () => {
  let client: SqlClient;
  beforeAll(() => {
    client = createPgliteClient(undefined);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('never writes the secret to the journal, and stores it masked', async () => {
    const dir = tempDir('sqlrecall-audit-mask-');
    const log = new AuditLog({ dir, retentionDays: 90, drainDelayMs: 5 });
    const listener = log.listener({
      user: 'sam',
      frontEnd: 'cli',
      question: 'log in as ann with pw Zq9-secret-77',
    });
    listener({
      sql: "SELECT * FROM users WHERE name = 'ann' AND password = 'Zq9-secret-77'",
      origin: 'person',
      outcome: 'refused',
      reason: 'Refused: users is not allowed (rule policy-table)',
      code: 'policy_refused',
    });
    const journal = readdirSync(dir)
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('');
    expect(journal).toContain("password = '***'");
    expect(journal).not.toContain('Zq9-secret-77');
    const store = new AuditStore(client);
    await log.attach(store);
    await log.close();
    const [stored] = await store.list({ user: 'sam' });
    expect(stored!.sql).toBe("SELECT * FROM users WHERE name = 'ann' AND password = '***'");
    expect(stored!.question).toBe('log in as ann with pw ***');
    const raw = await client.query<{ sql: string; question: string }>(
      "SELECT sql, question FROM sqlrecall_audit WHERE user_name = 'sam'",
    );
    expect(JSON.stringify(raw)).not.toContain('Zq9-secret-77');
  });

  it('masks records kept before masking existed when they are listed', async () => {
    const store = new AuditStore(client);
    // Written straight to the table, as an earlier version did.
    await store.insert([
      record({
        id: '00000000-0000-4000-8000-0000000000aa',
        user: 'old',
        sql: "UPDATE accounts SET api_key = 'Kx7-old-secret' WHERE id = 1",
        reason: "Refused: UPDATE accounts SET api_key = 'Kx7-old-secret' is not a read (rule statement-kind)",
      }),
    ]);
    const raw = await client.query<{ sql: string }>(
      "SELECT sql FROM sqlrecall_audit WHERE user_name = 'old'",
    );
    expect(raw[0]!.sql).toContain('Kx7-old-secret');
    const [listed] = await store.list({ user: 'old' });
    expect(listed!.sql).toBe("UPDATE accounts SET api_key = '***' WHERE id = 1");
    expect(listed!.reason).not.toContain('Kx7-old-secret');
  });
});
