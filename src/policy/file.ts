/**
 * The policy file an administrator keeps in version control (YAML or JSON): who may read which
 * tables, which columns do not exist for whom, which rows a user sees, and whether result values
 * may reach the model. This module parses and validates one file into a {@link PolicyDocument}
 * with canonical names and compiled row filters; `resolve.ts` turns a document and a user into the
 * user's `EffectivePolicy`.
 *
 * Validation fails closed: an unknown key (a typo such as `deny_column`), a team a user names that
 * the file does not define, a row filter that is not one boolean expression, two entries for the
 * same user — each makes the whole file invalid, never silently ignored.
 */
import { parseDocument } from 'yaml';
import type { z as Zod } from 'zod';
import { z } from 'zod';
import { userNameKey } from '../app/user-names.js';
import type { JsonObject } from '../core/json.js';
import { closest } from '../sql/identifiers.js';
import { isJsonObject, parseTree, scanTokens, walkTree } from '../sql/parse-tree.js';

/** One identifier: `"Quoted Name"` (case kept) or a bare name (folded to lower case). */
const IDENT = String.raw`(?:"(?:[^"]|"")+"|[^".\s]+)`;
const TABLE_NAME = new RegExp(`^${IDENT}(?:\\.${IDENT})?$`);
const COLUMN_NAME = new RegExp(`^${IDENT}\\.${IDENT}(?:\\.${IDENT})?$`);
/** Attribute names usable as `:name` in a row filter. */
const ATTRIBUTE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The attribute every user has: their own user name. */
export const USER_ATTRIBUTE = 'user';

const tableName = z
  .string()
  .regex(TABLE_NAME, { error: 'expected schema.table or table (quote mixed-case names: "Orders")' })
  .describe('A table or view: `schema.table`, or `table` for `public.table`.');
const columnName = z
  .string()
  .regex(COLUMN_NAME, { error: 'expected schema.table.column or table.column' })
  .describe('A column: `schema.table.column`, or `table.column` for a table of `public`.');

/** The rules a user, a team or the defaults may carry (all optional). */
const rules = {
  tables: z
    .array(tableName)
    .optional()
    .describe(
      'Allow-list: the only tables and views readable. Absent: every table the connection role can read.',
    ),
  deny_columns: z
    .array(columnName)
    .optional()
    .describe('Columns that do not exist for the user: never shown, never readable.'),
  rows: z
    .record(tableName, z.string().min(1, { error: 'a row filter must not be empty' }))
    .optional()
    .describe(
      "Row filters per table: a boolean SQL expression over that table's columns; `:name` is the user's attribute `name` (`:user` is the user name).",
    ),
  rows_to_model: z.boolean().optional().describe('False: privacy mode, no result value reaches the model.'),
};

const attributeValue = z.union([z.string(), z.number(), z.boolean()]);

/** The policy file's shape, as written (before names are made canonical). */
export const PolicyFileSchema = z
  .strictObject({
    $schema: z.string().optional().describe('The JSON schema this file follows (editors use it).'),
    users: z
      .record(
        z.string().min(1),
        z
          .strictObject({
            teams: z.array(z.string().min(1)).optional().describe('Teams of the file whose rules apply.'),
            attributes: z
              .record(
                z.string().regex(ATTRIBUTE_NAME, { error: 'expected letters, digits and _' }),
                attributeValue,
              )
              .optional()
              .describe('Values for `:name` in row filters.'),
            ...rules,
          })
          .describe("One user: their teams, attributes and own rules (added to their teams')."),
      )
      .optional(),
    teams: z.record(z.string().min(1), z.strictObject(rules).describe("One team's rules.")).optional(),
    defaults: z.strictObject(rules).optional().describe('Rules of a user who is in no team of this file.'),
  })
  .describe('sqlrecall data policy: which tables, columns and rows each user may read.');

/** The policy file as parsed, before names are made canonical. */
export type PolicyFileInput = Zod.output<typeof PolicyFileSchema>;

/** A row filter as the file wrote it, compiled: `:name` → `$n`. */
export interface CompiledRowFilter {
  /** The expression with `$1`, `$2`, … in place of `:name`, in order of first appearance. */
  expression: string;
  /** The attribute name behind each `$n` (`attributes[0]` is `$1`). */
  attributes: readonly string[];
  /** The expression as written. */
  written: string;
}

/** The rules of one entry (user, team or defaults), with canonical names. */
export interface PolicyRules {
  /** Canonical qualified names (`public.orders`); undefined: no allow-list. */
  tables?: readonly string[];
  /** Denied columns: canonical table → column names. */
  denyColumns: ReadonlyMap<string, readonly string[]>;
  /** Row filters per canonical table. */
  rows: ReadonlyMap<string, CompiledRowFilter>;
  rowsToModel?: boolean;
}

/** One user's entry. */
export interface PolicyUser {
  /** The name as the file wrote it. */
  name: string;
  teams: readonly string[];
  /** Attribute values as text (`user` excluded: it is always the user name). */
  attributes: Readonly<Record<string, string>>;
  rules: PolicyRules;
}

/** A valid policy file, names canonical. */
export interface PolicyDocument {
  /** Users keyed by {@link userNameKey} (so `Sam` and `sam` are one entry). */
  users: ReadonlyMap<string, PolicyUser>;
  teams: ReadonlyMap<string, PolicyRules>;
  /** Rules of a user in no team of the file (empty rules when the file has none). */
  defaults: PolicyRules;
}

/** One problem of a policy file: where (`teams.sales.rows.public.orders`) and what. */
export interface PolicyProblem {
  path: string;
  message: string;
}

/** Outcome of {@link parsePolicyText}. */
export type PolicyParse = { ok: true; document: PolicyDocument } | { ok: false; problems: PolicyProblem[] };

/** `yaml` or `json`: from the file name (`.json` → JSON; anything else is read as YAML, a superset). */
export function policyFormat(path: string): 'yaml' | 'json' {
  return /\.json$/i.test(path) ? 'json' : 'yaml';
}

/**
 * Parses and validates the text of a policy file. Row filters are checked with PostgreSQL's own
 * parser, which must be loaded first (`loadSqlParser()` in `sql/parse-tree.ts`).
 * Never throws for bad input: every problem found is returned, with its place in the file.
 */
export function parsePolicyText(text: string, format: 'yaml' | 'json'): PolicyParse {
  let raw: unknown;
  if (format === 'json') {
    try {
      raw = JSON.parse(text);
    } catch (error) {
      return { ok: false, problems: [{ path: '(file)', message: `not valid JSON: ${messageOf(error)}` }] };
    }
  } else {
    // `uniqueKeys` (the default) makes a key written twice an error: the second entry must not
    // silently replace the first.
    const doc = parseDocument(text, { prettyErrors: false });
    if (doc.errors.length > 0)
      return {
        ok: false,
        problems: doc.errors.map((e) => ({
          path: e.linePos ? `line ${e.linePos[0].line}` : '(file)',
          message: `not valid YAML: ${e.message.split('\n')[0]}`,
        })),
      };
    raw = doc.toJS();
  }
  if (raw === null || raw === undefined) raw = {};
  const parsed = PolicyFileSchema.safeParse(raw);
  if (!parsed.success)
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => ({
        path: issue.path.map(String).join('.') || '(file)',
        message: issue.message,
      })),
    };
  return compile(parsed.data);
}

/** Checks the cross-references of a schema-valid file and makes its names canonical. */
function compile(input: PolicyFileInput): PolicyParse {
  const problems: PolicyProblem[] = [];
  const teams = new Map<string, PolicyRules>();
  for (const [name, entry] of Object.entries(input.teams ?? {}))
    teams.set(name, compileRules(entry, `teams.${name}`, problems));
  const users = new Map<string, PolicyUser>();
  for (const [name, entry] of Object.entries(input.users ?? {})) {
    const path = `users.${name}`;
    const key = userNameKey(name);
    const twin = users.get(key);
    if (twin)
      problems.push({ path, message: `the same user as ${twin.name} (names differ only in case or form)` });
    for (const [i, team] of (entry.teams ?? []).entries()) {
      if (teams.has(team)) continue;
      const near = closest(
        team,
        [...teams.keys()].map((t) => ({ key: t, text: t })),
      );
      problems.push({
        path: `${path}.teams.${i}`,
        message: `no team ${team} in this file${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}`,
      });
    }
    const attributes: Record<string, string> = {};
    for (const [attribute, value] of Object.entries(entry.attributes ?? {})) {
      if (attribute === USER_ATTRIBUTE)
        problems.push({
          path: `${path}.attributes.${attribute}`,
          message: `the attribute ${USER_ATTRIBUTE} is always the user name; choose another name`,
        });
      else attributes[attribute] = String(value);
    }
    users.set(key, {
      name,
      teams: [...new Set(entry.teams ?? [])],
      attributes,
      rules: compileRules(entry, path, problems),
    });
  }
  const defaults = compileRules(input.defaults ?? {}, 'defaults', problems);
  restrictedReads(
    [
      ...[...teams].map(([name, rules]) => ({ path: `teams.${name}`, rules })),
      ...[...users.values()].map((user) => ({ path: `users.${user.name}`, rules: user.rules })),
      { path: 'defaults', rules: defaults },
    ],
    problems,
  );
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, document: { users, teams, defaults } };
}

/** The rule fields of one entry, as written. */
interface RulesInput {
  tables?: string[] | undefined;
  deny_columns?: string[] | undefined;
  rows?: Record<string, string> | undefined;
  rows_to_model?: boolean | undefined;
}

function compileRules(input: RulesInput, path: string, problems: PolicyProblem[]): PolicyRules {
  const denyColumns = new Map<string, string[]>();
  for (const written of input.deny_columns ?? []) {
    const { table, column } = canonicalColumn(written);
    const list = denyColumns.get(table) ?? [];
    if (!list.includes(column)) list.push(column);
    denyColumns.set(table, list);
  }
  const rows = new Map<string, CompiledRowFilter>();
  for (const [table, expression] of Object.entries(input.rows ?? {})) {
    const canonical = canonicalTable(table);
    const where = `${path}.rows.${table}`;
    if (rows.has(canonical)) {
      problems.push({ path: where, message: `a second filter for ${canonical}` });
      continue;
    }
    const compiled = compileRowFilter(expression);
    if ('problem' in compiled) problems.push({ path: where, message: compiled.problem });
    else rows.set(canonical, compiled);
  }
  return {
    ...(input.tables ? { tables: [...new Set(input.tables.map(canonicalTable))] } : {}),
    denyColumns,
    rows,
    ...(input.rows_to_model !== undefined ? { rowsToModel: input.rows_to_model } : {}),
  };
}

/** Splits a dotted name into its identifiers, unquoting quoted ones and folding bare ones. */
function identifiers(name: string): string[] {
  const parts = name.match(new RegExp(IDENT, 'g')) ?? [];
  return parts.map((p) => (p.startsWith('"') ? p.slice(1, -1).replaceAll('""', '"') : p.toLowerCase()));
}

/**
 * The canonical name of a table as the policy file writes it: `Public.Orders` → `public.orders`,
 * `orders` → `public.orders`, `public."Orders"` → `public.Orders`.
 */
export function canonicalTable(name: string): string {
  const parts = identifiers(name.trim());
  return parts.length === 1 ? `public.${parts[0]}` : `${parts[0]}.${parts[1]}`;
}

/** The canonical table and column of `schema.table.column` or `table.column` (schema `public`). */
export function canonicalColumn(name: string): { table: string; column: string } {
  const parts = identifiers(name.trim());
  return parts.length === 2
    ? { table: `public.${parts[0]}`, column: parts[1]! }
    : { table: `${parts[0]}.${parts[1]}`, column: parts[2]! };
}

/** Clauses a row filter's test statement may have: anything else came from the filter's text. */
const ALLOWED_SELECT_KEYS = new Set(['targetList', 'fromClause', 'whereClause', 'limitOption', 'op']);

/**
 * Compiles a row filter: `:name` becomes `$n` (numbered in order of first appearance, one number
 * per name), found with PostgreSQL's scanner so that `'a:b'` and `x::date` are left alone. The
 * result must parse as exactly one boolean expression: text that would close the expression and
 * add clauses or statements (`true) UNION SELECT …`, `;`, a trailing comment) is refused.
 */
export function compileRowFilter(written: string): CompiledRowFilter | { problem: string } {
  const bytes = Buffer.from(written, 'utf8');
  const tokens = scanTokens(written);
  const attributes: string[] = [];
  const pieces: string[] = [];
  let at = 0;
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    if (token.tokenName === 'PARAM')
      return { problem: `write the user's attributes as :name, not ${token.text}` };
    const next = tokens[i + 1];
    if (token.text !== ':' || !next || next.start !== token.end) continue;
    const name = bytes.subarray(next.start, next.end).toString('utf8');
    if (!ATTRIBUTE_NAME.test(name)) return { problem: `:${name} is not an attribute name` };
    let index = attributes.indexOf(name);
    if (index < 0) index = attributes.push(name) - 1;
    pieces.push(bytes.subarray(at, token.start).toString('utf8'), `$${index + 1}`);
    at = next.end;
    i += 1;
  }
  pieces.push(bytes.subarray(at).toString('utf8'));
  const expression = pieces.join('').trim();
  const shape = breakOut(expression);
  if (shape) return { problem: shape };
  let tree: ReturnType<typeof parseTree>;
  // No newline before the closing parenthesis: a trailing `--` comment would swallow whatever
  // the enforcing rewrite writes after the expression, so it makes the filter fail to parse here.
  try {
    tree = parseTree(`SELECT 1 FROM policy_table WHERE (${expression})`);
  } catch (error) {
    return { problem: `not a SQL expression: ${messageOf(error)}` };
  }
  const stmts = Array.isArray(tree.stmts) ? tree.stmts : [];
  const raw = stmts[0];
  const stmt = stmts.length === 1 && isJsonObject(raw) && isJsonObject(raw.stmt) ? raw.stmt : undefined;
  const select = stmt && isJsonObject(stmt.SelectStmt) ? stmt.SelectStmt : undefined;
  const clean =
    select !== undefined &&
    select.op === 'SETOP_NONE' &&
    Object.keys(select).every((k) => ALLOWED_SELECT_KEYS.has(k)) &&
    Array.isArray(select.fromClause) &&
    select.fromClause.length === 1 &&
    Array.isArray(select.targetList) &&
    select.targetList.length === 1;
  if (!clean) return { problem: ONE_EXPRESSION };
  // Parsed again without the parentheses: the expression must stand as the whole condition on
  // its own too, so no operator of it can bind to what the enforcing rewrite writes around it.
  try {
    if (whereOf(parseTree(`SELECT 1 FROM policy_table WHERE ${expression}\n`)) === undefined)
      return { problem: ONE_EXPRESSION };
  } catch {
    return { problem: ONE_EXPRESSION };
  }
  return { expression, attributes, written };
}

const ONE_EXPRESSION = "must be one boolean expression over the table's columns, nothing more";

/**
 * Why `expression` would not stay inside the parentheses the enforcing rewrite puts around it: a
 * parenthesis it closes without opening (`region = :region) OR (true` turns the filter into
 * `(region = $1) OR (true)`, which lets every row through once AND-ed with another filter), one it
 * leaves open, a comment or a semicolon. Undefined when it stays inside.
 */
function breakOut(expression: string): string | undefined {
  let tokens: ReturnType<typeof scanTokens>;
  try {
    tokens = scanTokens(expression);
  } catch (error) {
    return `not a SQL expression: ${messageOf(error)}`;
  }
  let depth = 0;
  for (const token of tokens) {
    if (token.tokenName === 'SQL_COMMENT' || token.tokenName === 'C_COMMENT')
      return 'not a SQL expression: a row filter holds no comment';
    if (token.text === ';') return `${ONE_EXPRESSION} (no semicolon)`;
    if (token.text === '(' || token.text === '[') depth += 1;
    if (token.text === ')' || token.text === ']') depth -= 1;
    if (depth < 0)
      return `${ONE_EXPRESSION}: a parenthesis is closed that the filter did not open, which would end the filter early`;
  }
  if (depth !== 0) return `${ONE_EXPRESSION}: a parenthesis is left open`;
  return undefined;
}

/** The WHERE clause of a one-statement `SELECT … WHERE …` tree, or undefined for anything else. */
function whereOf(tree: ReturnType<typeof parseTree>): JsonObject | undefined {
  const stmts = Array.isArray(tree.stmts) ? tree.stmts : [];
  const raw = stmts[0];
  const stmt = stmts.length === 1 && isJsonObject(raw) && isJsonObject(raw.stmt) ? raw.stmt : undefined;
  const select = stmt && isJsonObject(stmt.SelectStmt) ? stmt.SelectStmt : undefined;
  if (select?.op !== 'SETOP_NONE') return undefined;
  if (!Object.keys(select).every((k) => ALLOWED_SELECT_KEYS.has(k))) return undefined;
  return isJsonObject(select.whereClause) ? select.whereClause : undefined;
}

/**
 * The relations a compiled filter's expression reads in subqueries (`schema.name`, or the bare
 * name as written when unqualified). Expects the SQL parser loaded.
 */
export function filterReads(expression: string): string[] {
  const out: string[] = [];
  const where = whereOf(parseTree(`SELECT 1 FROM policy_table WHERE (${expression}\n)`));
  if (!where) return out;
  walkTree(where, (key, node) => {
    if (key !== 'RangeVar') return;
    const name = String(node.relname ?? '');
    out.push(typeof node.schemaname === 'string' ? `${node.schemaname}.${name}` : name);
  });
  return out;
}

/**
 * Row filters that read (in a subquery) a table some rule of the file restricts: the subquery
 * would read it unfiltered, so enforcement refuses every statement on the filtered table; the
 * file is refused instead. An unqualified name matches any restricted table of that name.
 */
function restrictedReads(
  entries: readonly { path: string; rules: PolicyRules }[],
  problems: PolicyProblem[],
): void {
  const restricted = new Set<string>();
  for (const { rules } of entries) {
    for (const table of rules.denyColumns.keys()) restricted.add(table);
    for (const table of rules.rows.keys()) restricted.add(table);
  }
  const bare = new Map([...restricted].map((t) => [t.slice(t.indexOf('.') + 1), t]));
  for (const { path, rules } of entries)
    for (const [table, filter] of rules.rows)
      for (const read of filterReads(filter.expression)) {
        const hit = restricted.has(read) ? read : read.includes('.') ? undefined : bare.get(read);
        if (hit === undefined) continue;
        problems.push({
          path: `${path}.rows.${table}`,
          message: `reads ${hit}, which a rule of this file restricts; a row filter may read only tables no rule restricts`,
        });
        break;
      }
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
}

/**
 * The JSON schema of the policy file (draft 2020-12), published as `docs/policy.schema.json` for
 * editors and CI (`npm run docs:policy-schema` writes it; a test fails when it is stale). Row
 * filters and cross-references (a user's teams) are checked by sqlrecall itself.
 */
export function policyJsonSchema(): Record<string, unknown> {
  return {
    title: 'sqlrecall data policy',
    ...z.toJSONSchema(PolicyFileSchema, { io: 'input' }),
  };
}
