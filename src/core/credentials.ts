/**
 * Credential detection: finds passwords, tokens, API keys and private keys in free text, so that
 * they are never stored as memories (every teaching path refuses them) and are masked in questions
 * before those reach conversation history and logs.
 *
 * Shapes found (each a {@link CredentialKind}):
 * - `url-password`: user info with a password in a URL, `postgres://report:S3cret@db/prod`;
 * - `password-pair`: `password=…`, `pwd=…`, `passwd: …`, `"password":"…"`, `PGPASSWORD=…` (also the
 *   `Password=…;` of ADO.NET/JDBC connection strings);
 * - `bearer-token`: `Authorization: Bearer …` / `Bearer …` with a token of 16 characters or more;
 * - `api-key`: OpenAI/Anthropic-style `sk-…`, Stripe `sk_live_…`/`rk_live_…`;
 * - `github-token`: `ghp_…`, `gho_…`, `ghu_…`, `ghs_…`, `ghr_…`, `github_pat_…`;
 * - `aws-access-key`: `AKIA…` / `ASIA…` access key ids;
 * - `slack-token`: `xoxb-…`, `xoxp-…`, `xoxa-…`, `xoxo-…`, `xoxs-…`, `xoxr-…`;
 * - `jwt`: three base64url parts, the first two starting `eyJ`;
 * - `sqlrecall-token`: sqlrecall's own access tokens (`sqr_…`), anywhere in the text;
 * - `password-phrase`: a password said in words, `my password is hunter2` (also passcode,
 *   passphrase, pwd); the value must look like a secret (quoted, or holding a digit or a symbol,
 *   or the last word of the sentence and not an ordinary describing word), so "the password
 *   column is never shown" is left alone;
 * - `token-phrase`: `my api key is …`, `the token is …`, `secret: …` followed by a token-like value
 *   (no spaces, 6 characters or more, letters mixed with digits, or a known key prefix);
 * - `private-key`: a PEM `-----BEGIN … PRIVATE KEY-----` block (to its END line or the end of text).
 *
 * The patterns follow the published token formats (GitHub, AWS, Slack, RFC 7519, RFC 7468); they
 * are deliberately a little wide: a false refusal costs the user a rephrase, a miss stores a
 * secret that is then shown to teammates and sent to the model.
 */

/** The shapes {@link findCredentials} recognises. */
export type CredentialKind =
  | 'url-password'
  | 'password-pair'
  | 'bearer-token'
  | 'api-key'
  | 'github-token'
  | 'aws-access-key'
  | 'slack-token'
  | 'jwt'
  | 'sqlrecall-token'
  | 'password-phrase'
  | 'token-phrase'
  | 'private-key';

/** One credential found in a text. */
export interface CredentialFinding {
  kind: CredentialKind;
  /** Plain-language name, e.g. "a password in a connection URL". */
  label: string;
  /** Offsets of the secret part in the text (UTF-16 code units, end exclusive). */
  start: number;
  end: number;
  /** The match with its secret part masked, safe to show (`postgres://report:***@db/prod`, `sk-l***`). */
  masked: string;
}

/** What replaces the secret part of a credential. */
export const CREDENTIAL_MASK = '***';

interface Shape {
  kind: CredentialKind;
  label: string;
  pattern: RegExp;
  /** Index of the capture group holding the secret; the whole match when absent. */
  group?: number;
  /** The recognisable prefix of the secret kept before the mask (`ghp_`, `AKIA`); none when absent. */
  prefix?: RegExp;
  /** Second look at a match (the secret and the text after it); the match is skipped when false. */
  accept?: (secret: string, after: string) => boolean;
}

/** How much of `secret` {@link maskCredentials} keeps for `shape`. */
function kept(shape: Shape | undefined, secret: string): string {
  return shape?.prefix?.exec(secret)?.[0] ?? '';
}

const PASSWORD_KEYS =
  'password|passwd|passcode|passphrase|pwd|sslpassword|pgpassword|pgsslpassword|pgsslkey|sslkey';

/**
 * Words that describe a password rather than being one ("the password is required."): the last
 * word of a sentence after "password is" counts as a secret only when it is not one of these.
 */
const DESCRIBING_WORDS = new Set(
  (
    'required optional hashed encrypted salted stored hidden masked secret private sensitive ' +
    'confidential empty blank null missing unknown invalid wrong incorrect correct valid set unset ' +
    'changed expired reset needed mandatory shown visible never redacted protected same different ' +
    'long short weak strong ok okay fine there here it this that what wrong too'
  ).split(' '),
);

/** A value after "password is": unquoted, ends before whitespace or sentence punctuation. */
function passwordLike(secret: string, after: string): boolean {
  if (/^["']/.test(secret)) return true;
  if (/[^A-Za-z]/.test(secret)) return true;
  const endsSentence = /^\s*(?:[.!?;,)]|$)/.test(after);
  return endsSentence && secret.length >= 4 && !DESCRIBING_WORDS.has(secret.toLowerCase());
}

/** A value after "api key is" / "token is": letters mixed with digits, or a known key prefix. */
function tokenLike(secret: string): boolean {
  const bare = secret.replace(/^["']|["']$/g, '');
  if (/^(?:sk-|sk_live|sqr_)/i.test(bare)) return true;
  return /[A-Za-z]/.test(bare) && /[0-9]/.test(bare);
}

const SHAPES: Shape[] = [
  {
    kind: 'private-key',
    label: 'a private key',
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*-----|$)/g,
  },
  {
    kind: 'url-password',
    label: 'a password in a connection URL',
    // scheme://user:password@host — the password runs to the last `@` before whitespace, so an odd
    // password holding `@` or `/` is over-masked rather than leaked.
    pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:@/?#]*:(\S+)@(?=[^\s@]*(?:\s|$))/gi,
    group: 1,
  },
  {
    kind: 'jwt',
    label: 'a JSON Web Token',
    pattern: /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}/g,
    prefix: /^eyJ/,
  },
  {
    kind: 'bearer-token',
    label: 'a bearer token',
    pattern: /\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)/gi,
    group: 1,
  },
  {
    kind: 'github-token',
    label: 'a GitHub token',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g,
    prefix: /^(?:gh[pousr]_|github_pat_)/,
  },
  {
    kind: 'aws-access-key',
    label: 'an AWS access key',
    pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
    prefix: /^(?:AKIA|ASIA)/,
  },
  {
    kind: 'slack-token',
    label: 'a Slack token',
    pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
    prefix: /^xox[abposr]-/,
  },
  {
    kind: 'api-key',
    label: 'an API key',
    pattern: /(?<![A-Za-z0-9_-])(?:sk-[A-Za-z0-9_-]{16,}|[sr]k_(?:live|test)_[A-Za-z0-9]{10,})/g,
    prefix: /^(?:sk-|[sr]k_(?:live|test)_)/,
  },
  {
    kind: 'sqlrecall-token',
    label: 'a sqlrecall token',
    pattern: /(?<![A-Za-z0-9_-])sqr_[A-Za-z0-9_-]{6,}/g,
    prefix: /^sqr_/,
  },
  {
    kind: 'password-phrase',
    label: 'a password',
    // "my password is hunter2", "passphrase is 'open sesame'": the word after "is" is the secret
    // when passwordLike says it looks like one.
    pattern:
      /(?<![a-z0-9_])(?:password|passwd|passcode|passphrase|pwd)\s+is\s+('[^'\n]+'|"[^"\n]+"|[^\s'"]+?)(?=[.!?;,)]?(?:\s|$))/gi,
    group: 1,
    accept: passwordLike,
  },
  {
    kind: 'token-phrase',
    label: 'an API key or token',
    // "my api key is sk-live-abc123", "the token is 9f8e7d6c", "secret: a1b2c3d4": a token-like
    // value only, so "the token is valid" or "orders with status 'token'" are left alone.
    pattern:
      /(?<![a-z0-9])(?:api[\s_-]?key|access[\s_-]?key|token|secret)\s*(?:\s(?:is|was)|:)\s*(["']?[A-Za-z0-9][A-Za-z0-9_\-.+/=]{5,}["']?)(?![A-Za-z0-9_\-+/=])/gi,
    group: 1,
    accept: tokenLike,
  },
  {
    kind: 'password-pair',
    label: 'a password',
    // key = value, key: value, "key":"value", quoted or bare; the value is the secret.
    pattern: new RegExp(
      `(?<![a-z0-9_])["']?(?:${PASSWORD_KEYS})["']?\\s*[=:]\\s*('(?:[^'\\\\]|\\\\.)+'|"(?:[^"\\\\]|\\\\.)+"|[^\\s,;}&'"]+)`,
      'gi',
    ),
    group: 1,
  },
];

/**
 * Every credential in `text`, in order of position; overlapping findings are merged into the first
 * (a JWT after `Bearer` is reported once). Never throws; linear in the text for each shape.
 */
export function findCredentials(text: string): CredentialFinding[] {
  if (typeof text !== 'string' || text.length === 0) return [];
  const found: (CredentialFinding & { matchStart: number; matchEnd: number })[] = [];
  for (const shape of SHAPES) {
    shape.pattern.lastIndex = 0;
    for (const match of text.matchAll(shape.pattern)) {
      const whole = match[0];
      const matchStart = match.index ?? 0;
      const secret = shape.group === undefined ? whole : (match[shape.group] ?? '');
      if (secret.length === 0) continue;
      const offset = shape.group === undefined ? 0 : whole.lastIndexOf(secret);
      if (shape.accept && !shape.accept(secret, text.slice(matchStart + offset + secret.length))) continue;
      const start = matchStart + offset;
      const end = start + secret.length;
      if (found.some((f) => start < f.end && end > f.start)) continue;
      const masked = `${whole.slice(0, offset)}${kept(shape, secret)}${CREDENTIAL_MASK}${whole.slice(offset + secret.length)}`;
      found.push({
        kind: shape.kind,
        label: shape.label,
        start,
        end,
        masked: shape.kind === 'private-key' ? '-----BEGIN PRIVATE KEY----- ***' : masked,
        matchStart,
        matchEnd: matchStart + whole.length,
      });
    }
  }
  return found
    .sort((a, b) => a.start - b.start)
    .map(({ matchStart: _s, matchEnd: _e, ...finding }) => finding);
}

/**
 * `text` with the secret part of every credential replaced by {@link CREDENTIAL_MASK} (recognisable
 * prefixes such as `ghp_` kept). Text without credentials comes back unchanged; idempotent.
 */
export function maskCredentials(text: string): string {
  const findings = findCredentials(text);
  if (findings.length === 0) return text;
  let out = '';
  let at = 0;
  for (const f of findings) {
    const secret = text.slice(f.start, f.end);
    out +=
      text.slice(at, f.start) +
      kept(
        SHAPES.find((s) => s.kind === f.kind),
        secret,
      ) +
      CREDENTIAL_MASK;
    at = f.end;
  }
  return out + text.slice(at);
}

/**
 * One sentence naming what was found, masked: `a password in a connection URL
 * (postgres://report:***@db.internal/prod) and an API key (sk-***)`. Empty for no findings.
 */
export function describeCredentials(findings: CredentialFinding[]): string {
  const parts = findings.map((f) => `${f.label} (${clipMasked(f.masked)})`);
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

function clipMasked(masked: string): string {
  const oneLine = masked.replace(/\s+/g, ' ');
  return oneLine.length > 80 ? `${oneLine.slice(0, 79)}…` : oneLine;
}
