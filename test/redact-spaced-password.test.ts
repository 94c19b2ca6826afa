/**
 * A password holding a space (not valid in a URL, but pasted all the same) is masked in the CLI's
 * connection error and in doctor, and in free text, while ports and e-mail addresses next to a
 * password-free URL are left readable.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maskUrl, redactSecrets } from '../src/core/redact.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { tempDir } from './support/temp-dir.js';

// Port 1 on the loopback is closed: the connection is refused at once, no server needed.
const URL = 'postgres://postgres:S3cret Pw@127.0.0.1:1/x';

describe('passwords with spaces in connection URLs', () => {
  it('maskUrl and redactSecrets mask up to the last @ before the host', () => {
    expect(maskUrl(URL)).toBe('postgres://postgres:***@127.0.0.1:1/x');
    expect(redactSecrets(`Cannot connect to ${URL}: connection refused.`)).toBe(
      'Cannot connect to postgres://postgres:***@127.0.0.1:1/x: connection refused.',
    );
    expect(redactSecrets('postgres://u:a b@c d@host/db')).toBe('postgres://u:***@host/db');
    expect(redactSecrets('postgres://u:p@h/db and postgres://v:S3 x@h2/db ok')).toBe(
      'postgres://u:***@h/db and postgres://v:***@h2/db ok',
    );
    // Not user info: a port, and an address after an already masked URL.
    const plain = 'postgres://host:5432/db failed, mail admin@example.com';
    expect(redactSecrets(plain)).toBe(plain);
    expect(redactSecrets('postgres://u:p@h/db, mail admin@example.com')).toBe(
      'postgres://u:***@h/db, mail admin@example.com',
    );
  });

  it('the CLI connection error and doctor never print the password', async () => {
    const env = {
      SQLRECALL_HOME: join(tempDir('sqlrecall-spaced-pw-'), 'home'),
      OLLAMA_HOST: 'http://127.0.0.1:1',
    };
    const sql = await runCliInProcess(['--db', URL, 'sql', 'select 1'], { env });
    expect(sql.code).toBe(4);
    expect(sql.stderr).toContain('Cannot connect to postgres://postgres:***@127.0.0.1:1/x');
    const doctor = await runCliInProcess(['--db', URL, 'doctor'], { env });
    expect(doctor.code).not.toBe(0);
    expect(doctor.stdout).toContain('Cannot connect to postgres://postgres:***@127.0.0.1:1/x');
    for (const out of [sql.stdout, sql.stderr, doctor.stdout, doctor.stderr]) {
      expect(out).not.toContain('S3cret');
      expect(out).not.toContain(' Pw@');
    }
  }, 60_000);
});
