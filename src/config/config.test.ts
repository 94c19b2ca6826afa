import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/temp-dir.js';
import { SqlrecallError } from '../core/errors.js';
import { loadConfig } from './config.js';

const emptyDir = () => tempDir('sqlrecall-config-');

function configError(fn: () => unknown): SqlrecallError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SqlrecallError);
    return error as SqlrecallError;
  }
  throw new Error('expected a configuration error');
}

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({ env: {}, cwd: emptyDir() });
    expect(config).toMatchObject({
      databaseUrl: undefined,
      ollamaHost: 'http://127.0.0.1:11434',
      model: 'qwen2.5-coder:7b',
      embedModel: 'all-minilm',
      maxRows: 1000,
      statementTimeoutMs: 30_000,
      maxResultBytes: 64 * 1024 * 1024,
      schemas: [],
      maxRepairs: 2,
    });
    expect(loadConfig({ env: { SQLRECALL_MAX_RESULT_BYTES: '2048' }, cwd: emptyDir() }).maxResultBytes).toBe(
      2048,
    );
    expect(config.home.endsWith('.sqlrecall')).toBe(true);
    expect(config.user.length).toBeGreaterThan(0);
  });

  it('applies flags over environment over .env', () => {
    const dir = emptyDir();
    writeFileSync(
      join(dir, '.env'),
      'SQLRECALL_MODEL=from-dotenv\nSQLRECALL_MAX_ROWS=5\nSQLRECALL_USER=dot\n',
    );
    const config = loadConfig({
      env: { SQLRECALL_MODEL: 'from-env', SQLRECALL_USER: 'envuser' },
      cwd: dir,
      flags: { user: 'flaguser' },
    });
    expect(config.model).toBe('from-env');
    expect(config.maxRows).toBe(5);
    expect(config.user).toBe('flaguser');
  });

  it('names the setting and masks the password in a bad URL', () => {
    const err = configError(() =>
      loadConfig({ env: { DATABASE_URL: 'oracle://root:hunter2@db/shop' }, cwd: emptyDir() }),
    );
    expect(err.code).toBe('config');
    expect(err.message).toContain('DATABASE_URL');
    expect(err.message).not.toContain('hunter2');
    expect(err.message).toContain('postgres://');
    expect(err.message.split('\n')).toHaveLength(1);
  });

  it('rejects a non-numeric row cap naming the flag', () => {
    const err = configError(() => loadConfig({ env: {}, cwd: emptyDir(), flags: { maxRows: 'lots' } }));
    expect(err.message).toMatch(/--max-rows.*whole number/);
    expect(err.exitCode).toBe(2);
  });

  it('rejects a zero timeout from .env and says where it came from', () => {
    const dir = emptyDir();
    writeFileSync(join(dir, '.env'), 'SQLRECALL_STATEMENT_TIMEOUT_MS=0\n');
    const err = configError(() => loadConfig({ env: {}, cwd: dir }));
    expect(err.message).toContain('SQLRECALL_STATEMENT_TIMEOUT_MS (from .env)');
  });

  it('accepts pglite: and postgres URLs, normalises the Ollama host and splits schemas', () => {
    const config = loadConfig({
      env: {
        DATABASE_URL: 'pglite:/tmp/x',
        OLLAMA_HOST: 'localhost:11434/',
        SQLRECALL_SCHEMAS: 'public, sales',
      },
      cwd: emptyDir(),
    });
    expect(config.databaseUrl).toBe('pglite:/tmp/x');
    expect(config.ollamaHost).toBe('http://localhost:11434');
    expect(config.schemas).toEqual(['public', 'sales']);
  });

  it('refuses a user id `users add` would refuse (a hostile one too), naming the rule', () => {
    for (const user of ["' OR '1'='1", 'two words', 'a:b', 'x'.repeat(101)])
      expect(() => loadConfig({ env: { SQLRECALL_USER: user }, cwd: emptyDir() })).toThrow(
        expect.objectContaining({
          code: 'config',
          exitCode: 2,
          message: expect.stringMatching(
            /user name is 1 to 100 letters, digits, dots, underscores, @ or hyphens/,
          ),
        }),
      );
    expect(loadConfig({ env: { SQLRECALL_USER: 'priya.k@example' }, cwd: emptyDir() }).user).toBe(
      'priya.k@example',
    );
  });
});
