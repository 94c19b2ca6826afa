/**
 * Retries that exist (issue 18), database side: opening a connection sends no statement, so a
 * connection the server resets is retried under the shared policy (core/retry.ts), a bounded number
 * of times; a statement is never repeated. A local TCP server that resets or times out plays the
 * database server.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isSqlrecallError, SqlrecallError } from '../src/core/errors.js';
import { DEFAULT_RETRY_POLICY } from '../src/core/retry.js';
import { createPostgresConnector } from '../src/databases/postgres/connector.js';
import { isRefusedOrReset } from '../src/databases/postgres/errors.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A TCP server that handles every connection with `onSocket`; returns its port and a connection count. */
async function fakeServer(
  onSocket: (socket: Socket) => void,
): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  server = createServer((socket) => {
    connections += 1;
    onSocket(socket);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  return { port: address.port, connections: () => connections };
}

describe('database connection retries', () => {
  it('a server that resets every connection: db_unreachable after exactly the policy bound', async () => {
    const fake = await fakeServer((socket) => socket.resetAndDestroy());
    const connector = createPostgresConnector({ url: `postgres://u@127.0.0.1:${fake.port}/db` });
    try {
      const error = await connector.ping().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isSqlrecallError(error, 'db_unreachable')).toBe(true);
      expect(fake.connections()).toBe(DEFAULT_RETRY_POLICY.attempts);
    } finally {
      await connector.close();
    }
  });

  it('retries refused or reset connections only, never a failed statement', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const timeout = Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' });
    const badPassword = Object.assign(new Error('password authentication failed'), { code: '28P01' });
    const syntax = Object.assign(new Error('syntax error'), { code: '42601' });
    expect(isRefusedOrReset(reset)).toBe(true);
    expect(isRefusedOrReset(refused)).toBe(true);
    expect(isRefusedOrReset(new SqlrecallError('db_unreachable', 'x', { cause: refused }))).toBe(true);
    expect(isRefusedOrReset(timeout)).toBe(false);
    expect(isRefusedOrReset(badPassword)).toBe(false);
    expect(isRefusedOrReset(syntax)).toBe(false);
  });
});
