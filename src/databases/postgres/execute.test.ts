import { describe, expect, it } from 'vitest';
import { SqlrecallError } from '../../core/errors.js';
import { queryError, unreachableError } from './errors.js';
import { beginForced, isCursorable, PARSING_SETTINGS, sessionSettings } from './execute.js';

describe('isCursorable', () => {
  it.each([
    ['SELECT 1', true],
    ['  select 1', true],
    ['WITH a AS (SELECT 1) SELECT * FROM a', true],
    ['VALUES (1)', true],
    ['TABLE orders', true],
    ['(SELECT 1) UNION (SELECT 2)', true],
    ['-- comment\nSELECT 1', true],
    ['/* a /* nested */ comment */ select 1', true],
    ['EXPLAIN SELECT 1', false],
    ['/* x */ explain analyze select 1', false],
    ['SHOW search_path', false],
    ['DELETE FROM t', false],
    ['selectivity', false],
    ['', false],
  ])('%j → %s', (sql, expected) => {
    expect(isCursorable(sql)).toBe(expected);
  });
});

describe('sessionSettings', () => {
  it('sets the timeout only where the engine enforces it', () => {
    expect(sessionSettings(300, true)).toContain('SET LOCAL statement_timeout = 300');
    expect(sessionSettings(300, false).join(';')).not.toContain('statement_timeout');
    expect(sessionSettings(0.2, true)).toContain('SET LOCAL statement_timeout = 1');
  });
});

describe('error mapping', () => {
  const target = { displayName: 'postgres://u:***@h/db' };

  it('maps SQLSTATEs', () => {
    const timeout = queryError(
      { code: '57014', message: 'canceling statement due to statement timeout' },
      {
        ...target,
        timeoutMs: 30_000,
      },
    );
    expect(timeout.code).toBe('db_timeout');
    expect(timeout.message).toBe('The query ran longer than the 30 s statement timeout and was cancelled.');
    const cancelled = queryError(
      { code: '57014', message: 'canceling statement due to user request' },
      {
        ...target,
        aborted: true,
      },
    );
    expect(cancelled.code).toBe('db_query');
    expect(cancelled.details).toMatchObject({ cancelled: true });
    const readOnly = queryError(
      { code: '25006', message: 'cannot execute DELETE in a read-only transaction' },
      target,
    );
    expect(readOnly).toMatchObject({
      code: 'db_query',
      message: 'cannot execute DELETE in a read-only transaction (SQLSTATE 25006)',
      details: { sqlState: '25006' },
    });
    expect(queryError({ code: '57P01', message: 'terminating connection' }, target).code).toBe(
      'db_unreachable',
    );
    expect(queryError(new Error('Connection terminated unexpectedly'), target).code).toBe('db_unreachable');
  });

  it('passes SqlrecallErrors through and never leaks a password', () => {
    const own = new SqlrecallError('db_query', 'x');
    expect(queryError(own, target)).toBe(own);
    const leaky = queryError(
      { code: '42000', message: 'bad thing near postgres://bob:pw123@host/db' },
      target,
    );
    expect(leaky.message).not.toContain('pw123');
  });

  it('names the reason of a connection failure', () => {
    const refused = Object.assign(
      new AggregateError([Object.assign(new Error(''), { code: 'ECONNREFUSED' })], ''),
      {
        code: 'ECONNREFUSED',
      },
    );
    expect(unreachableError(target.displayName, refused).message).toBe(
      'Cannot connect to postgres://u:***@h/db: connection refused. Is PostgreSQL running?',
    );
    const auth = { code: '28P01', message: 'password authentication failed for user "u"' };
    const error = unreachableError(target.displayName, auth);
    expect(error.message).toBe(
      'Cannot connect to postgres://u:***@h/db: password authentication failed for user "u".',
    );
    expect(error.details).toMatchObject({ sqlState: '28P01', url: target.displayName });
    expect(unreachableError(target.displayName, new Error('timeout expired')).message).toMatch(
      /within 5 s\.$/,
    );
  });
});

describe('parsing settings', () => {
  it('every execution forces the settings that change how text is parsed, first', () => {
    const settings = sessionSettings(300, true);
    expect(settings.slice(0, PARSING_SETTINGS.length)).toEqual(PARSING_SETTINGS);
    expect(settings).toContain('SET LOCAL standard_conforming_strings = on');
  });

  it('a server that refuses one of them refuses the statement with a reason', async () => {
    const refusing = {
      begin: async () => {
        throw new Error('parameter "standard_conforming_strings" cannot be changed now');
      },
    };
    const error = await beginForced(refusing, sessionSettings(300, true)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqlrecallError);
    expect(error).toMatchObject({ code: 'guard_refused', details: { rule: 'parsing-settings' } });
    expect((error as Error).message).toMatch(/standard_conforming_strings.*read the statement differently/);
    // Any other failure is passed on as it was.
    const other = new Error('connection reset');
    await expect(beginForced({ begin: () => Promise.reject(other) }, [])).rejects.toBe(other);
  });
});
