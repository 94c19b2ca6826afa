/** The {@link SqlrecallError} a promise rejects with (any other rejection, or none, fails the test). */
import { isSqlrecallError, type SqlrecallError } from '../../src/core/errors.js';

/** Awaits `promise` and returns the SqlrecallError it rejected with; throws when it resolved. */
export async function failure(promise: Promise<unknown>): Promise<SqlrecallError> {
  try {
    await promise;
  } catch (error) {
    if (isSqlrecallError(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}
