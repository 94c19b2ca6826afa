import { describe, expect, it } from 'vitest';
import { describeCredentials, findCredentials, maskCredentials } from './credentials.js';

describe('credential detector', () => {
  it.each([
    ['postgres://report:S3cretPw@db.internal/prod', 'url-password', 'postgres://report:***@db.internal/prod'],
    ['host=db password=hunter2 dbname=x', 'password-pair', 'host=db password=*** dbname=x'],
    ['Server=db;User Id=sa;Pwd=Pa55word!;', 'password-pair', 'Server=db;User Id=sa;Pwd=***;'],
    ['{"password": "a b c"}', 'password-pair', '{"password": ***}'],
    ['Authorization: Bearer abcdefghijklmnopqrstuvwx', 'bearer-token', 'Authorization: Bearer ***'],
    ['key sk-live-abcdefghijklmnop1234', 'api-key', 'key sk-***'],
    ['rk_live_abcdefghijklmnop', 'api-key', 'rk_live_***'],
    ['ghp_0123456789abcdefghijABCDEFGHIJ012345', 'github-token', 'ghp_***'],
    ['github_pat_11ABCDEFG0123456789_abcdefghijk', 'github-token', 'github_pat_***'],
    ['AKIAIOSFODNN7EXAMPLE', 'aws-access-key', 'AKIA***'],
    ['xoxp-1234567890-abcdef', 'slack-token', 'xoxp-***'],
    ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdEFGH_ijk', 'jwt', 'eyJ***'],
    [
      'x -----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY----- y',
      'private-key',
      'x *** y',
    ],
  ])('finds and masks %s', (text, kind, masked) => {
    expect(findCredentials(text).map((f) => f.kind)).toEqual([kind]);
    expect(maskCredentials(text)).toBe(masked);
    expect(maskCredentials(maskCredentials(text))).toBe(masked);
  });

  it.each([
    "customers.country = 'India'",
    'Always show me customers from India',
    'orders with a total over 10000 are big; the pass rate is a metric',
    'see https://example.com/docs?page=2 and postgres://db.internal/prod',
    'the task-runner skips sk-1 and ASIA as a region name',
  ])('leaves %s alone', (text) => {
    expect(findCredentials(text)).toEqual([]);
    expect(maskCredentials(text)).toBe(text);
  });

  it('describes what it found without the secret', () => {
    const text = 'db postgres://u:pw123456@h/d and sk-abcdefghijklmnopqrstu';
    const said = describeCredentials(findCredentials(text));
    expect(said).toBe('a password in a connection URL (postgres://u:***@) and an API key (sk-***)');
    expect(said).not.toMatch(/pw123456|abcdefghij/);
  });
});
