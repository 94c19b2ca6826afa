/**
 * `details` typed per error code: a constructor call is checked against its code's
 * entry in ErrorDetailsByCode (the `@ts-expect-error` lines fail `tsc` the day a wrong field is
 * accepted), and `isSqlrecallError(error, code)` narrows to that code's facts.
 */
import { describe, expect, it } from 'vitest';
import { isSqlrecallError, SqlrecallError, toSqlrecallError } from './errors.js';

describe('SqlrecallError details', () => {
  it('accepts each code’s own facts and the common ones', () => {
    const refused = new SqlrecallError('guard_refused', 'refused', {
      details: { rule: 'write', sql: 'DELETE' },
    });
    expect(refused.details).toEqual({ rule: 'write', sql: 'DELETE' });
    const busy = new SqlrecallError('db_busy', 'busy', {
      details: { running: 4, waiting: 2, retryable: true },
    });
    expect(busy.details.running).toBe(4);
    expect(new SqlrecallError('usage', 'bad').details).toEqual({});
  });

  it('refuses facts of another code at compile time', () => {
    // @ts-expect-error `rule` belongs to guard_refused and model_output, not usage
    const wrong = new SqlrecallError('usage', 'bad', { details: { rule: 'write' } });
    // @ts-expect-error `running` belongs to db_busy
    const alsoWrong = new SqlrecallError('db_query', 'bad', { details: { running: 1 } });
    expect([wrong.code, alsoWrong.code]).toEqual(['usage', 'db_query']);
  });

  it('narrows by code to read one code’s facts', () => {
    const error: unknown = new SqlrecallError('db_query', 'cancelled', { details: { cancelled: true } });
    expect(isSqlrecallError(error, 'db_query') && error.details.cancelled).toBe(true);
    expect(isSqlrecallError(error, 'db_busy')).toBe(false);
    expect(toSqlrecallError(error)).toBe(error);
    expect(toSqlrecallError(new Error('x')).code).toBe('internal');
  });
});
