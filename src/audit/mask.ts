/**
 * Credentials never reach the audit trail: the literals of a recorded statement that look like
 * secrets are masked before the record is written, and again when records are listed (rows kept
 * by an earlier version are masked on the way out).
 *
 * What counts as a secret, found on PostgreSQL's own parse tree:
 * - a string constant compared to, or assigned to, a column whose name looks secret (`password`,
 *   `passwd`, `secret`, `token`, `api_key`, …): `WHERE password = 'x'`, `password IN ('a', 'b')`,
 *   `UPDATE … SET token = 'x'`, `INSERT INTO u (api_key) VALUES ('x')`, `SELECT 'x' AS secret`,
 *   `crypt(password => 'x')`, `strpos(password, 'x')`, `CASE password WHEN 'x'`, a JSON key or
 *   path of that kind (`data->>'password' = 'x'`, `data #>> '{auth,password}' = 'x'`), the values
 *   of a sub-select or value list compared to one (`password IN (SELECT 'x')`);
 * - the option of a role or server that holds a password (`ALTER ROLE r PASSWORD 'x'`,
 *   `OPTIONS (password 'x')`);
 * - inside any string constant or comment: a password in a URL (`scheme://user:pass@host`) and
 *   `password=…` pairs, as `core/redact.ts` masks free text.
 * A statement the parser does not take (another engine's dialect, a syntax error) is masked by the
 * on its tokens: when a secret-looking name appears anywhere, every string constant is masked.
 * The values masked in the statement are masked in the record's question and reason too.
 */
import type { AuditRecord } from '../core/audit.js';
import type { Json, JsonObject } from '../core/json.js';
import { MASK, redactSecrets } from '../core/redact.js';
import { isJsonObject, parseTree, type SqlToken, scanTokens } from '../sql/parse-tree.js';

/** What a masked string constant becomes. */
export const MASKED_LITERAL = `'${MASK}'`;

/** Name fragments that make a column, key or option a secret (matched without `_`, any case). */
const SECRET_FRAGMENTS =
  /password|passwd|passphrase|secret|token|apikey|accesskey|privatekey|secretkey|credential|authkey|sessionkey/;

/** Whole words of a name (split at `_`, `-`, `.` and case changes) that make it a secret alone. */
const SECRET_WORDS = new Set(['pass', 'pwd', 'pw']);

/**
 * True when `name` (a column, a JSON key, an option) looks like it holds a secret:
 * `password`, `user_passwd`, `apiKey`, `API_KEY`, `refresh_token`, `client_secret`, `pwd`.
 */
export function isSecretName(name: string): boolean {
  const compact = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (SECRET_FRAGMENTS.test(compact)) return true;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((w) => SECRET_WORDS.has(w));
}

/** A statement with its secrets masked, and the secret values taken out of it. */
export interface MaskedSql {
  sql: string;
  /** The values masked (the literals' contents), for masking the same values elsewhere. */
  secrets: string[];
}

/**
 * Masks the secrets of `sql` (see the module comment). Never throws; text without a string
 * constant or comment is returned as it is. Uses the parse tree when the SQL parser is loaded and
 * the text parses, the tokens otherwise. Idempotent.
 */
export function maskSqlSecrets(sql: string): MaskedSql {
  if (typeof sql !== 'string' || !/['"$#]|--|\/\*|:\/\//.test(sql) || !mayHoldSecret(sql))
    return { sql, secrets: [] };
  let tree: MaskedSql = { sql, secrets: [] };
  let parsed = false;
  try {
    tree = maskWithTree(sql);
    parsed = true;
  } catch {
    // Not PostgreSQL (or the parser is not loaded): the tokens alone decide.
  }
  // The tokens' rules run after the tree's too: a text PostgreSQL parses may be another dialect's
  // (MySQL's `password = "x"` is a string there, a column name here), and masking more is safe.
  try {
    const tokens = maskWithTokens(tree.sql, !parsed);
    return { sql: tokens.sql, secrets: [...tree.secrets, ...tokens.secrets] };
  } catch {
    // Never leak on an error: mask what free text would.
    return { sql: redactSecrets(tree.sql), secrets: tree.secrets };
  }
}

/**
 * False when no rule could mask anything in `sql`: no secret-looking name or key anywhere (its
 * letters and digits searched as one run, a superset of every name in it) and no URL. Spares
 * the parse of most statements.
 */
function mayHoldSecret(sql: string): boolean {
  if (sql.includes('://')) return true;
  const compact = sql.toLowerCase().replace(/[^a-z0-9]/g, '');
  return SECRET_FRAGMENTS.test(compact) || /pass|pwd|pw|sslkey/.test(compact);
}

/**
 * A record with the secrets of its SQL masked, and those values and free-text secrets masked in
 * its question and reason. Returns a copy; never throws.
 */
export function maskAuditRecord(record: AuditRecord): AuditRecord {
  const masked = maskSqlSecrets(record.sql);
  const text = (value: string | null) =>
    value === null ? null : maskValues(redactSecrets(value), masked.secrets);
  return { ...record, sql: masked.sql, question: text(record.question), reason: text(record.reason) };
}

/** `text` with every occurrence of a secret value (four characters or more) replaced by the mask. */
function maskValues(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length))
    if (secret.length >= 4 && secret !== MASK) out = out.split(secret).join(MASK);
  return out;
}

// ---------------------------------------------------------------------------------------------
// With the parse tree

const STRING_TOKENS = new Set(['SCONST', 'USCONST', 'BCONST', 'XCONST']);
const COMMENT_TOKENS = new Set(['SQL_COMMENT', 'C_COMMENT']);

function maskWithTree(sql: string): MaskedSql {
  const tree = parseTree(sql);
  const tokens = scanTokens(sql);
  const strings = tokens.filter((t) => STRING_TOKENS.has(t.tokenName));
  const secretStarts = new Set<number>();
  const markConstants = (node: Json | undefined) => {
    visit(node, (key, value) => {
      if (key === 'A_Const' && isJsonObject(value.sval) && typeof value.location === 'number')
        secretStarts.add(value.location);
    });
  };
  visit(tree, (key, node) => {
    if (key === 'SubLink' && readsSecret(node.testexpr)) {
      // `password IN (SELECT 'x')`, `password = ANY (VALUES ('x'))`: the values the sub-select gives.
      markConstants(node.subselect);
    } else if (key === 'A_Expr') {
      if (readsSecret(node.lexpr)) markConstants(node.rexpr);
      if (readsSecret(node.rexpr)) markConstants(node.lexpr);
    } else if (key === 'ResTarget' || key === 'NamedArgExpr') {
      if (typeof node.name === 'string' && isSecretName(node.name)) markConstants(node.val ?? node.arg);
    } else if (key === 'DefElem') {
      // `PASSWORD 'x'` of a role, `OPTIONS (password 'x')` of a server or user mapping: the
      // option's value is a plain string node without a place, so the first string after it.
      if (
        typeof node.defname === 'string' &&
        isSecretName(node.defname) &&
        typeof node.location === 'number'
      ) {
        const at = node.location;
        const next = strings.find((t) => t.start >= at);
        if (next) secretStarts.add(next.start);
      }
    } else if (key === 'InsertStmt') {
      markInsertedSecrets(node, markConstants);
    } else if (key === 'FuncCall' || key === 'CoalesceExpr' || key === 'MinMaxExpr') {
      // `strpos(password, 'x')`, `crypt('x', password)`: the other arguments of a secret one.
      const args = Array.isArray(node.args) ? node.args : [];
      if (args.some((arg) => readsSecret(arg)))
        for (const arg of args) if (!readsSecret(arg)) markConstants(arg);
    } else if (key === 'CaseExpr' && readsSecret(node.arg)) {
      // `CASE password WHEN 'x' THEN …`: the values it is compared to.
      for (const when of Array.isArray(node.args) ? node.args : [])
        if (isJsonObject(when) && isJsonObject(when.CaseWhen)) markConstants(when.CaseWhen.expr);
    }
  });
  return rebuild(sql, tokens, (token) => {
    // A string constant's place, from the tree: whatever the scanner calls the token (it names a
    // Unicode-escape string `U&'…'` UNKNOWN).
    if (secretStarts.has(token.start)) return 'secret';
    return STRING_TOKENS.has(token.tokenName) ||
      COMMENT_TOKENS.has(token.tokenName) ||
      /^u&'/i.test(token.text ?? '')
      ? 'text'
      : 'keep';
  });
}

/** `INSERT INTO t (a, password) VALUES (…, 'x')` / `SELECT …, 'x'`: the values of secret columns. */
function markInsertedSecrets(insert: JsonObject, mark: (node: Json | undefined) => void): void {
  const cols = Array.isArray(insert.cols) ? insert.cols : [];
  const secret = cols.map((c) => {
    const target = isJsonObject(c) && isJsonObject(c.ResTarget) ? c.ResTarget : undefined;
    return typeof target?.name === 'string' && isSecretName(target.name);
  });
  if (!secret.includes(true)) return;
  const select =
    isJsonObject(insert.selectStmt) && isJsonObject(insert.selectStmt.SelectStmt)
      ? insert.selectStmt.SelectStmt
      : undefined;
  if (!select) return;
  const rows: Json[][] = [];
  for (const list of Array.isArray(select.valuesLists) ? select.valuesLists : [])
    if (isJsonObject(list) && isJsonObject(list.List) && Array.isArray(list.List.items))
      rows.push(list.List.items);
  if (Array.isArray(select.targetList)) rows.push(select.targetList);
  for (const row of rows) for (const [i, item] of row.entries()) if (secret[i]) mark(item);
}

/**
 * True when an expression reads a secret: a column whose name looks secret, or a JSON key of that
 * kind (`data->>'password'`, `data->'token'`).
 */
function readsSecret(node: Json | undefined): boolean {
  let found = false;
  visit(node, (key, value) => {
    if (found) return;
    if (key === 'ColumnRef' && Array.isArray(value.fields)) {
      const last = value.fields[value.fields.length - 1];
      const name = isJsonObject(last) && isJsonObject(last.String) ? last.String.sval : undefined;
      if (typeof name === 'string' && isSecretName(name)) found = true;
    } else if (key === 'A_Expr' && isJsonArrowKey(value)) {
      found = true;
    }
  });
  return found;
}

/** `x -> 'password'` / `x ->> 'api_key'`: a JSON key that looks secret. */
function isJsonArrowKey(expr: JsonObject): boolean {
  const name = Array.isArray(expr.name) ? expr.name[0] : undefined;
  const op = isJsonObject(name) && isJsonObject(name.String) ? name.String.sval : undefined;
  if (op !== '->' && op !== '->>' && op !== '#>' && op !== '#>>') return false;
  const key =
    isJsonObject(expr.rexpr) && isJsonObject(expr.rexpr.A_Const) ? expr.rexpr.A_Const.sval : undefined;
  // A path (`#>> '{auth,password}'`) is secret when any of its keys is.
  return isJsonObject(key) && typeof key.sval === 'string' && isSecretName(key.sval);
}

/** Visits every object of a parse tree as (its key, its value), depth first, in any field. */
function visit(node: Json | undefined, fn: (key: string, value: JsonObject) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) visit(item, fn);
    return;
  }
  if (!isJsonObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if (isJsonObject(value)) fn(key, value);
    visit(value, fn);
  }
}

/**
 * `sql` rebuilt token by token (byte offsets, as the scanner gives them): a `secret` token
 * becomes {@link MASKED_LITERAL}, a `text` token (any other string or comment) is masked as free
 * text, the rest is copied.
 */
function rebuild(
  sql: string,
  tokens: readonly SqlToken[],
  kind: (t: SqlToken) => 'secret' | 'text' | 'keep',
): MaskedSql {
  const bytes = Buffer.from(sql, 'utf8');
  const out: string[] = [];
  const secrets: string[] = [];
  let at = 0;
  for (const token of tokens) {
    const what = kind(token);
    if (what === 'keep') continue;
    const text = bytes.subarray(token.start, token.end).toString('utf8');
    const replaced = what === 'secret' ? MASKED_LITERAL : redactInside(text);
    if (replaced === text) continue;
    if (what === 'secret') secrets.push(literalContent(text));
    out.push(bytes.subarray(at, token.start).toString('utf8'), replaced);
    at = token.end;
  }
  if (at === 0) return { sql, secrets };
  out.push(bytes.subarray(at).toString('utf8'));
  return { sql: out.join(''), secrets: secrets.filter((s) => s !== '' && s !== MASK) };
}

/**
 * A string literal or comment with the free-text secrets inside it masked (URL passwords,
 * `password=…`): only the content, so the quotes that close a literal are never taken for part of
 * a value.
 */
function redactInside(text: string): string {
  const dollar = /^(\$[^$]*\$)([\s\S]*)(\1)$/.exec(text);
  const quoted = dollar ?? /^([A-Za-z&_0-9]*['"`])([\s\S]*)(['"`])$/.exec(text);
  if (!quoted) return redactSecrets(text);
  return `${quoted[1]}${redactSecrets(quoted[2]!)}${quoted[3]}`;
}

/** The content of a string literal token: `'a''b'` → `a'b`, `E'x'` → `x`, `$t$x$t$` → `x`. */
function literalContent(text: string): string {
  const dollar = /^(\$[^$]*\$)([\s\S]*)\1$/.exec(text);
  if (dollar) return dollar[2]!;
  const quoted = /^[A-Za-z&]*'([\s\S]*)'$/.exec(text);
  return quoted ? quoted[1]!.replaceAll("''", "'") : text;
}

// ---------------------------------------------------------------------------------------------
// With the tokens only (text the parser does not take)

/** One token of {@link lexLoosely}: offsets are UTF-16 indexes into the text. */
interface LooseToken {
  type: 'string' | 'quoted' | 'word' | 'punct' | 'comment';
  start: number;
  end: number;
  text: string;
}

/**
 * Tokens of text in any SQL dialect, read loosely: `'…'` strings with doubled quotes and backslash
 * escapes (MySQL's default: PostgreSQL text reaches here only when it does not parse, and reading
 * an escape too many only makes a string longer, so more is masked, never less), `"…"` and
 * `` `…` `` quoted names (a MySQL string may be written `"…"` too), `$tag$…$tag$`, comments
 * (`--`, `#`, `/* *\/`), words and single punctuation. Never throws.
 */
function lexLoosely(sql: string): LooseToken[] {
  const tokens: LooseToken[] = [];
  let i = 0;
  const push = (type: LooseToken['type'], end: number) => {
    tokens.push({ type, start: i, end, text: sql.slice(i, end) });
    i = end;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    if (/\s/.test(c)) {
      i += 1;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === '\\' && c !== '`') j += 2;
        else if (sql[j] === c && sql[j + 1] === c) j += 2;
        else if (sql[j] === c) break;
        else j += 1;
      }
      push(c === "'" ? 'string' : 'quoted', Math.min(j + 1, sql.length));
    } else if ((c === '-' && sql[i + 1] === '-') || c === '#') {
      const nl = sql.indexOf('\n', i);
      push('comment', nl < 0 ? sql.length : nl);
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      push('comment', close < 0 ? sql.length : close + 2);
    } else if (c === '$' && /^\$[A-Za-z_]*\$/.test(sql.slice(i))) {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))![0];
      const close = sql.indexOf(tag, i + tag.length);
      push('string', close < 0 ? sql.length : close + tag.length);
    } else if (/[A-Za-z0-9_\u0080-\uffff]/.test(c)) {
      const m = /^[A-Za-z0-9_$\u0080-\uffff]+/.exec(sql.slice(i, i + 256))!;
      // A prefixed string (`E'…'`, `N'…'`, `X'…'`, `_utf8'…'`) is read as the string it starts.
      if (sql[i + m[0].length] === "'") i += m[0].length;
      else push('word', i + m[0].length);
    } else {
      push('punct', i + 1);
    }
  }
  return tokens;
}

/** Operators and words that may stand between a secret-looking name and its value. */
const BETWEEN = new Set([
  '=',
  '<',
  '>',
  '!',
  ':',
  '(',
  ')',
  ',',
  '[',
  ']',
  'like',
  'ilike',
  'in',
  'not',
  'is',
  'by',
  'distinct',
  'from',
  'any',
  'all',
  'array',
  'identified',
  'with',
]);

/** `everyString`: the text did not parse, so every string literal is masked when a secret is named. */
function maskWithTokens(sql: string, everyString: boolean): MaskedSql {
  const tokens = lexLoosely(sql);
  const significant = tokens.filter((t) => t.type !== 'comment');
  const secret = new Set<LooseToken>();
  // Text PostgreSQL does not parse is read without its structure: a statement that names a secret
  // anywhere has every string literal masked (operators such as GLOB or REGEXP, sub-selects and
  // value lists put a value too many ways from the name for a walk to follow).
  const namesSecret =
    everyString &&
    significant.some(
      (t) =>
        ((t.type === 'word' || t.type === 'quoted') &&
          isSecretName(t.type === 'quoted' ? t.text.slice(1, -1) : t.text)) ||
        (t.type === 'string' && isSecretName(literalContent(t.text))),
    );
  if (everyString && namesSecret) for (const t of significant) if (t.type === 'string') secret.add(t);
  significant.forEach((token, i) => {
    if (token.type !== 'string' && token.type !== 'quoted') return;
    if (nextToSecretName(significant, i, -1) || nextToSecretName(significant, i, 1)) secret.add(token);
  });
  const out: string[] = [];
  const secrets: string[] = [];
  let at = 0;
  for (const token of tokens) {
    if (token.type === 'word' || token.type === 'punct') continue;
    const replaced = secret.has(token) ? MASKED_LITERAL : redactInside(token.text);
    if (replaced === token.text) continue;
    if (secret.has(token)) secrets.push(literalContent(token.text));
    out.push(sql.slice(at, token.start), replaced);
    at = token.end;
  }
  if (at === 0) return { sql, secrets };
  out.push(sql.slice(at));
  return { sql: out.join(''), secrets: secrets.filter((s) => s !== '' && s !== MASK) };
}

/**
 * True when, walking from token `i` in `direction`, a secret-looking name is reached over at most
 * eight tokens that may stand between a name and its value (operators, `IN (`, other literals of
 * the same list).
 */
function nextToSecretName(tokens: readonly LooseToken[], i: number, direction: 1 | -1): boolean {
  for (let j = i + direction, steps = 0; j >= 0 && j < tokens.length && steps < 8; j += direction, steps++) {
    const token = tokens[j]!;
    if (token.type === 'word' || token.type === 'quoted') {
      const name = token.type === 'quoted' ? token.text.slice(1, -1) : token.text;
      // MySQL's `IDENTIFIED BY 'x'` (an account's password).
      const before = tokens[j - 1];
      if (direction === -1 && /^by$/i.test(name) && before && /^identified$/i.test(before.text)) return true;
      if (isSecretName(name)) return true;
      if (token.type === 'word' && !BETWEEN.has(name.toLowerCase())) return false;
      continue;
    }
    if (token.type === 'punct' && BETWEEN.has(token.text)) continue;
    if (token.type === 'punct' && token.text === '.') continue;
    // A JSON key (`data->>'api_key' = 'x'`) names the value as a column does.
    if (token.type === 'string' && isSecretName(literalContent(token.text))) return true;
    if (token.type === 'string' && direction === -1) continue;
    return false;
  }
  return false;
}
