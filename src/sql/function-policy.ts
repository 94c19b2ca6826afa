/**
 * The function policy: the second half of the read-only guard, which needs the target database's
 * catalog. `guard.ts` refuses built-ins with side effects by name; this module judges every
 * function the statement will make the server run, with the rules in `function-rules.ts`.
 *
 * With a connector that offers {@link DatabaseConnector.probe}, the server itself analyses the
 * statement (`server-analysis.ts`) and the policy judges the exact objects of the analysed tree:
 * functions by OID however they are written (`f(x)`, `(x).f`, `row.f`, casts), operators wherever
 * they occur, domain CHECKs, type functions, views and row-level-security policies of the
 * relations read. Without it, or when the server cannot analyse the statement, a conservative
 * name-based check answers (every name that may be a call, operators by name, every implicit cast).
 * It fails closed: a body it cannot read, a catalog it cannot query or a chain deeper than
 * {@link MAX_BODY_DEPTH} refuses the statement.
 *
 * {@link withFunctionPolicy} wraps a {@link DatabaseConnector} so that every `execute` is judged
 * first (catalog rows and verdicts are cached per connector for {@link POLICY_CACHE_MS}).
 */

import { SqlrecallError } from '../core/errors.js';
import type { Json, JsonObject } from '../core/json.js';
import type { DatabaseConnector, ExecuteOptions, QueryResult } from '../core/ports.js';
import { guardRefusal } from '../core/refusal.js';
import {
  CHECKED_LANGUAGES,
  COMPILED_LANGUAGES,
  DENIED_EXTENSIONS,
  MAX_BODY_DEPTH,
  POLICY_CACHE_MS,
  SESSION_TEXT_FUNCTIONS,
  SESSION_TEXT_RELATIONS,
} from './function-rules.js';
import { loadGuardParser } from './guard.js';
import { GUARD_RULES, matchesPattern } from './guard-rules.js';
import { parseTree, walkTree } from './parse-tree.js';
import { analysedObjects, FIRST_USER_OID, PROBE_VIEW, probeStatements } from './server-analysis.js';

/** A possibly schema-qualified name as written (unquoted names already lower-cased by the parser). */
export interface QualifiedName {
  schema?: string;
  name: string;
}

/** What a statement or body reaches: called functions, operators and read relations. */
export interface References {
  functions: QualifiedName[];
  operators: QualifiedName[];
  relations: QualifiedName[];
  /** PL/pgSQL only: the body runs dynamic SQL (`EXECUTE`), which cannot be checked. */
  dynamic?: boolean;
}

/** Verdict of {@link FunctionPolicy.check}; `rule` ids start with `function-`. */
export type PolicyVerdict = { ok: true } | { ok: false; reason: string; rule: string };

/** Runs one catalog query and returns its rows as text columns (null for SQL NULL). */
export type CatalogQuery = (sql: string) => Promise<Record<string, string | null>[]>;

/**
 * Runs fixed statements in one transaction that is always rolled back and returns the last one's
 * rows as text ({@link DatabaseConnector.probe}).
 */
export type ProbeQuery = (statements: readonly string[]) => Promise<Record<string, string | null>[]>;

/** Options of {@link FunctionPolicy} and {@link withFunctionPolicy}. */
export interface FunctionPolicyOptions {
  /**
   * `--allow-functions` / `SQLRECALL_ALLOW_FUNCTIONS`: patterns `schema.name` or `name` (`*`
   * matches any characters, case-insensitive) of functions allowed without any check. Default none.
   */
  allowFunctions?: readonly string[];
  /** Clock for the cache (ms); default `Date.now`. */
  now?: () => number;
  /**
   * The server's analysis of a statement (`server-analysis.ts`); without it, or when the server
   * refuses it, statements get the conservative name-based check.
   */
  probe?: ProbeQuery;
  /**
   * The answer of an analysis someone else just ran with exactly these probe statements (the data
   * policy's, of the same final text), taken instead of probing again; undefined: probe.
   */
  takeAnalysis?: (statements: readonly string[]) => Record<string, string | null>[] | undefined;
}

function stringsOf(list: Json | undefined): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item) => String(((item as JsonObject)?.String as JsonObject | undefined)?.sval ?? ''));
}

function qualified(parts: string[]): QualifiedName | undefined {
  const name = parts[parts.length - 1];
  if (!name) return undefined;
  return parts.length > 1 ? { schema: parts[parts.length - 2]!, name } : { name };
}

/**
 * Every function call, operator and relation in a parse tree (any depth: subqueries, CTEs,
 * function arguments, `sql_body` of CREATE FUNCTION as printed by `pg_get_functiondef`).
 */
export function treeReferences(root: Json): References {
  const refs: References = { functions: [], operators: [], relations: [] };
  walkTree(root, (key, child) => {
    if (key === 'FuncCall') {
      const name = qualified(stringsOf(child.funcname));
      if (name) refs.functions.push(name);
    } else if (key === 'A_Indirection') {
      // `(x).f` calls f(x) when x has no field f: every field name is a possible call.
      for (const part of Array.isArray(child.indirection) ? child.indirection : []) {
        const name = ((part as JsonObject)?.String as JsonObject | undefined)?.sval;
        if (typeof name === 'string') refs.functions.push({ name });
      }
    } else if (key === 'ColumnRef') {
      // `t.f` calls f(t) when the row t has no column f: a qualified column name may be a call.
      const parts = stringsOf(child.fields).filter((part) => part !== '');
      if (parts.length >= 2) refs.functions.push({ name: parts[parts.length - 1]! });
    } else if (key === 'A_Expr') {
      const name = qualified(stringsOf(child.name));
      if (name) refs.operators.push(name);
    } else if (key === 'RangeVar' && typeof child.relname === 'string') {
      refs.relations.push(
        typeof child.schemaname === 'string' && child.schemaname !== ''
          ? { schema: child.schemaname, name: child.relname }
          : { name: child.relname },
      );
    }
  });
  return refs;
}

/**
 * The references of SQL text (one or more statements).
 * @throws Error when the text does not parse (callers refuse: fail closed)
 */
export function sqlReferences(sql: string): References {
  return treeReferences(parseTree(sql));
}

const IDENT = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_\u0080-\uffff][\w$\u0080-\uffff]*)`;
const CALL = new RegExp(String.raw`(${IDENT})(?:\s*\.\s*(${IDENT}))?\s*\(`, 'gu');
const WORD = new RegExp(IDENT, 'gu');

function identifier(text: string): string {
  return text.startsWith('"') ? text.slice(1, -1).replaceAll('""', '"') : text.toLowerCase();
}

/**
 * Conservative references of a PL/pgSQL body: every `name(` or `schema.name(` anywhere (string
 * literals and comments included, so nothing can hide there) is a function call, every word may
 * be a relation, and the word `EXECUTE` anywhere marks dynamic SQL.
 */
export function plpgsqlReferences(body: string): References {
  const refs: References = { functions: [], operators: [], relations: [] };
  for (const match of body.matchAll(CALL)) {
    const first = identifier(match[1]!);
    refs.functions.push(match[2] ? { schema: first, name: identifier(match[2]) } : { name: first });
  }
  // `(x).f` and `r.f` may call f(x) / f(r): every name after a dot is a possible call too.
  for (const match of body.matchAll(new RegExp(String.raw`\.\s*(${IDENT})`, 'gu')))
    refs.functions.push({ name: identifier(match[1]!) });
  const words = new Set<string>();
  for (const match of body.matchAll(WORD)) words.add(identifier(match[0]));
  for (const word of words) refs.relations.push({ name: word });
  refs.dynamic = /\bexecute\b/i.test(body);
  // Operators: any run of operator characters; the catalog lookup only keeps user-defined ones.
  for (const match of body.matchAll(/[~!@#%^&|`?+\-*/<>=]+/g)) refs.operators.push({ name: match[0] });
  return refs;
}

interface ProcRow {
  oid: string;
  schema: string;
  name: string;
  volatility: string;
  secdef: boolean;
  /** The function has SET clauses (`proconfig`), e.g. `SET role = …`. */
  config: string | null;
  language: string;
  kind: string;
  src: string | null;
  def: string | null;
  extension: string | null;
  parts: string[];
}

const PROC_COLUMNS = `p.oid::text AS oid, n.nspname::text AS schema, p.proname::text AS name,
  p.provolatile::text AS volatility, p.prosecdef::text AS secdef, l.lanname::text AS language,
  p.proconfig::text AS config,
  p.prokind::text AS kind,
  CASE WHEN l.lanname IN ('sql', 'plpgsql') THEN p.prosrc END AS src,
  CASE WHEN l.lanname = 'sql' AND p.prokind = 'f' AND coalesce(p.prosrc, '') = ''
       THEN pg_catalog.pg_get_functiondef(p.oid) END AS def,
  (SELECT e.extname::text FROM pg_catalog.pg_depend d
     JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
    WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid
      AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'
    LIMIT 1) AS extension,
  (SELECT concat_ws(',', a.aggtransfn::oid, nullif(a.aggfinalfn::oid, 0), nullif(a.aggcombinefn::oid, 0),
                    nullif(a.aggmtransfn::oid, 0), nullif(a.aggminvtransfn::oid, 0), nullif(a.aggmfinalfn::oid, 0))
     FROM pg_catalog.pg_aggregate a WHERE a.aggfnoid = p.oid) AS parts
  FROM pg_catalog.pg_proc p
  JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
  JOIN pg_catalog.pg_language l ON l.oid = p.prolang`;

/** A JSON array of strings as an SQL expression, hex-encoded so no quoting can go wrong. */
function jsonList(values: readonly string[]): string {
  const hex = Buffer.from(JSON.stringify(values), 'utf8').toString('hex');
  return `(SELECT pg_catalog.json_array_elements_text(pg_catalog.convert_from(pg_catalog.decode('${hex}', 'hex'), 'UTF8')::pg_catalog.json))`;
}

function procRow(row: Record<string, string | null>): ProcRow {
  return {
    oid: row.oid ?? '',
    schema: row.schema ?? '',
    name: row.name ?? '',
    volatility: row.volatility ?? 'v',
    secdef: row.secdef === 'true',
    config: row.config ?? null,
    language: row.language ?? '',
    kind: row.kind ?? 'f',
    src: row.src ?? null,
    def: row.def ?? null,
    extension: row.extension ?? null,
    parts: (row.parts ?? '').split(',').filter((part) => /^\d+$/.test(part) && part !== '0'),
  };
}

interface Cached<T> {
  value: T;
  at: number;
}

/** Where unqualified names are looked up: the session's search path, or any schema. */
type Resolution = 'search-path' | 'any-schema';

/**
 * Judges statements against the catalog of one database. Create one per connection (or
 * connector); it caches catalog rows and verdicts for {@link POLICY_CACHE_MS}.
 */
export class FunctionPolicy {
  private readonly procsByName = new Map<string, Cached<ProcRow[]>>();
  private readonly procsByOid = new Map<string, Cached<ProcRow | undefined>>();
  private readonly operatorsByName = new Map<string, Cached<{ schema: string; code: string }[]>>();
  private readonly viewsByName = new Map<string, Cached<{ schema: string; def: string }[]>>();
  private readonly verdicts = new Map<string, Cached<PolicyVerdict>>();
  private searchPath: Cached<string[]> | undefined;
  private otherSessions: Cached<boolean> | undefined;
  private eventTriggers: Cached<boolean> | undefined;
  private readonly rowsByOid = new Map<string, Cached<Record<string, string | null> | undefined>>();
  private readonly probe: ProbeQuery | undefined;
  private readonly takeAnalysis: FunctionPolicyOptions['takeAnalysis'];
  private readonly allow: readonly string[];
  private readonly now: () => number;

  constructor(
    private readonly query: CatalogQuery,
    options: FunctionPolicyOptions = {},
  ) {
    this.allow = options.allowFunctions ?? [];
    this.now = options.now ?? Date.now;
    this.probe = options.probe;
    this.takeAnalysis = options.takeAnalysis;
  }

  /**
   * Judges one statement (already accepted by the guard). Never throws for a policy reason;
   * `db_unreachable`, `db_timeout` and cancellation errors of the catalog query are rethrown as-is
   * (any other catalog failure refuses: fail closed).
   */
  async check(sql: string): Promise<PolicyVerdict> {
    let refs: References;
    try {
      await loadGuardParser();
      refs = sqlReferences(sql);
    } catch (error) {
      return refuse(
        'function-parse',
        `refused: the statement could not be parsed for the function check (${messageOf(error)})`,
      );
    }
    try {
      const analysed = await this.analyse(sql);
      if (analysed)
        return await this.judgeTree(analysed.tree, 0, new Set([`rel:${analysed.view}`]), 'the statement');
      const byName = await this.judgeReferences(refs, 'search-path', 0, new Set());
      if (!byName.ok) return byName;
      const relations = await this.judgeNamedRelations(refs.relations);
      if (!relations.ok) return relations;
      return await this.judgeCastsAndDomains(typeNamesOf(sql));
    } catch (error) {
      if (error instanceof SqlrecallError && (error.code === 'db_unreachable' || error.code === 'db_timeout'))
        throw error;
      if (error instanceof SqlrecallError && error.code === 'guard_refused')
        return refuse(String(error.details.rule ?? 'function-catalog'), error.message);
      return refuse(
        'function-catalog',
        `refused: the functions the statement calls could not be checked in the catalog (${messageOf(error)})`,
      );
    }
  }

  /**
   * The server's analysed tree of `sql` and the probe view's OID, or undefined when there is no
   * probe or the server would not analyse it (read-only server, no TEMP privilege, a statement
   * that does not analyse): the caller then checks by name. Unreachable/timeout errors rethrow.
   */
  private async analyse(sql: string): Promise<{ tree: string; view: string } | undefined> {
    if (!this.probe || (await this.hasEventTriggers())) return undefined;
    let statements: string[];
    try {
      statements = probeStatements(sql);
    } catch {
      return undefined;
    }
    try {
      const [row] = this.takeAnalysis?.(statements) ?? (await this.probe(statements));
      return row?.tree && row.view ? { tree: row.tree, view: row.view } : undefined;
    } catch (error) {
      if (
        error instanceof SqlrecallError &&
        (error.code === 'db_unreachable' || error.code === 'db_timeout' || error.code === 'guard_refused')
      )
        throw error;
      return undefined;
    }
  }

  /**
   * True when the database has an enabled event trigger: `CREATE TEMP VIEW` would fire it, running
   * the administrator's code for our probe, so the probe is not used there.
   */
  private async hasEventTriggers(): Promise<boolean> {
    if (!this.fresh(this.eventTriggers)) {
      const rows = await this.query(
        `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_event_trigger WHERE evtenabled <> 'D')::text AS present`,
      );
      this.eventTriggers = { value: rows[0]?.present !== 'false', at: this.now() };
    }
    return this.eventTriggers.value;
  }

  /** True when this connection's role can read other sessions' statements (superuser, pg_read_all_stats). */
  private async seesOtherSessions(): Promise<boolean> {
    if (!this.fresh(this.otherSessions)) {
      const rows = await this.query(
        `SELECT pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE')::text AS sees`,
      );
      this.otherSessions = { value: rows[0]?.sees !== 'false', at: this.now() };
    }
    return this.otherSessions.value;
  }

  /**
   * Judges an analysed query tree (the statement's, a view's, a row-level-security policy's or a
   * domain CHECK's): every function it calls by OID, the functions of its operators (and, for
   * user-defined operators, their selectivity estimators and operator-class support functions),
   * the CHECKs and I/O functions of user-defined types, the views, policies and session-text
   * columns of the relations it reads.
   */
  private async judgeTree(
    tree: string,
    depth: number,
    visiting: Set<string>,
    where: string,
  ): Promise<PolicyVerdict> {
    if (depth > MAX_BODY_DEPTH)
      return refuse(
        'function-depth',
        `refused: functions, views and policies nest more than ${MAX_BODY_DEPTH} levels deep, too deep to check`,
      );
    const objects = analysedObjects(tree);
    const functions = new Set(objects.functions);
    if (objects.operators.size > 0) {
      const oids = [...objects.operators];
      const rows = await this.catalogRows(
        'operator',
        oids,
        (list) =>
          `SELECT o.oid::text AS oid, o.oprname::text AS name,
                pg_catalog.concat_ws(',', o.oprcode::oid, o.oprrest::oid, o.oprjoin::oid,
                  (SELECT pg_catalog.string_agg(DISTINCT p.amproc::oid::text, ',')
                     FROM pg_catalog.pg_amop a JOIN pg_catalog.pg_amproc p ON p.amprocfamily = a.amopfamily
                    WHERE a.amopopr = o.oid AND o.oid >= ${FIRST_USER_OID})) AS procs
           FROM pg_catalog.pg_operator o WHERE o.oid::text IN ${list}`,
      );
      if (rows.some((row) => row === undefined))
        return refuse(
          'function-catalog',
          `refused: an operator of ${where} could not be found in the catalog`,
        );
      for (const row of rows) for (const oid of oidList(row?.procs)) functions.add(oid);
    }
    const types = new Set([...objects.types].filter((oid) => Number(oid) >= FIRST_USER_OID));
    const seenTypes = new Set<string>();
    while (types.size > 0) {
      const batch = [...types].filter((oid) => !seenTypes.has(oid));
      types.clear();
      if (batch.length === 0) break;
      for (const oid of batch) seenTypes.add(oid);
      const found = await this.catalogRows(
        'type',
        batch,
        (list) =>
          `SELECT t.oid::text AS oid, pg_catalog.format_type(t.oid, NULL) AS name,
                pg_catalog.concat_ws(',', nullif(t.typbasetype::oid, 0), nullif(t.typelem::oid, 0)) AS related,
                pg_catalog.concat_ws(',', t.typinput::oid, t.typoutput::oid, t.typreceive::oid, t.typsend::oid,
                  t.typsubscript::oid,
                  (SELECT pg_catalog.concat_ws(',', r.rngcanonical::oid, r.rngsubdiff::oid)
                     FROM pg_catalog.pg_range r WHERE r.rngtypid = t.oid)) AS procs,
                (SELECT pg_catalog.json_agg(c.conbin::text) FROM pg_catalog.pg_constraint c
                  WHERE c.contypid = t.oid AND c.contype = 'c') AS checks
           FROM pg_catalog.pg_type t WHERE t.oid::text IN ${list}`,
      );
      for (const row of found) {
        if (!row) continue; // no such type: nothing of it can run
        for (const oid of oidList(row.procs)) functions.add(oid);
        for (const oid of oidList(row.related)) if (Number(oid) >= FIRST_USER_OID) types.add(oid);
        for (const check of JSON.parse(row.checks ?? '[]') as string[]) {
          const verdict = await this.judgeTree(
            check,
            depth + 1,
            visiting,
            `a CHECK of the domain ${row.name}`,
          );
          if (!verdict.ok) return withContext(verdict, `in a CHECK of the domain ${row.name}`);
        }
      }
    }
    const relations = new Map([...objects.relations].filter(([oid]) => !visiting.has(`rel:${oid}`)));
    if (relations.size > 0) {
      const verdict = await this.judgeRelations(relations, depth, visiting);
      if (!verdict.ok) return verdict;
    }
    if (functions.size > 0) {
      const oids = [...functions];
      const procs = await this.procsWithOids(oids);
      for (const [index, proc] of procs.entries()) {
        if (!proc)
          return refuse(
            'function-catalog',
            `refused: the function ${oids[index]} that ${where} calls could not be found in the catalog`,
          );
        const verdict = await this.judgeProc(proc, depth, visiting);
        if (!verdict.ok) return verdict;
      }
    }
    return { ok: true };
  }

  /**
   * Judges relations a tree reads (OID → attribute numbers read, 0 for the whole row): the
   * statement-text columns of other sessions, the query of a (non-system) view, and the
   * row-level-security policies that apply (at depth 0 only when active for this role; inside a
   * view always, since they apply to the view's owner).
   */
  private async judgeRelations(
    relations: Map<string, Set<number>>,
    depth: number,
    visiting: Set<string>,
  ): Promise<PolicyVerdict> {
    const found = await this.catalogRows(
      'relation',
      [...relations.keys()],
      (list) =>
        `SELECT c.oid::text AS oid, n.nspname::text AS schema, c.relname::text AS name,
              c.relrowsecurity::text AS rls,
              CASE WHEN c.relrowsecurity THEN pg_catalog.row_security_active(c.oid)::text END AS rls_active,
              CASE WHEN c.relkind = 'v' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
                   THEN (SELECT r.ev_action::text FROM pg_catalog.pg_rewrite r
                          WHERE r.ev_class = c.oid AND r.ev_type = '1' LIMIT 1) END AS tree,
              CASE WHEN c.relrowsecurity THEN (SELECT pg_catalog.json_agg(pg_catalog.concat_ws(' ', p.polqual::text, p.polwithcheck::text))
                     FROM pg_catalog.pg_policy p WHERE p.polrelid = c.oid) END AS policies,
              (SELECT a.attnum::text FROM pg_catalog.pg_attribute a
                WHERE a.attrelid = c.oid AND a.attname = 'query' AND NOT a.attisdropped) AS query_column
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.oid::text IN ${list}`,
    );
    for (const row of found) {
      if (!row) continue; // gone, or the probe's own view: nothing of it is read
      const oid = row.oid ?? '';
      const full = `${row.schema}.${row.name}`;
      const columns = relations.get(oid) ?? new Set([0]);
      if (
        matchesPattern(row.name ?? '', SESSION_TEXT_RELATIONS) &&
        row.query_column !== null &&
        (columns.has(0) || columns.has(Number(row.query_column))) &&
        (await this.seesOtherSessions())
      )
        return refuse(
          'session-text',
          `refused: ${full}.query shows the statements of other sessions (passwords included), and this connection's role may see them; select other columns, or connect as a role without pg_read_all_stats`,
        );
      // A view reading a credential catalog would show it under the view's name.
      const secret = GUARD_RULES.find(
        (r) => 'relations' in r.match && matchesPattern(row.name ?? '', r.match.relations),
      );
      if (secret) return refuse(secret.id, secret.reason.replaceAll('{name}', row.name ?? ''));
      const key = `rel:${oid}`;
      if (visiting.has(key)) continue;
      visiting.add(key);
      try {
        if (row.tree) {
          const verdict = await this.judgeTree(row.tree, depth + 1, visiting, `the view ${full}`);
          if (!verdict.ok) return withContext(verdict, `in the view ${full}`);
        }
        if (row.rls === 'true' && (depth > 0 || row.rls_active === 'true')) {
          for (const policy of JSON.parse(row.policies ?? '[]') as string[]) {
            const verdict = await this.judgeTree(` ${policy}`, depth + 1, visiting, `a policy of ${full}`);
            if (!verdict.ok) return withContext(verdict, `in a row-level-security policy of ${full}`);
          }
        }
      } finally {
        visiting.delete(key);
      }
    }
    return { ok: true };
  }

  /**
   * The conservative check of relations named in a statement that the server did not analyse:
   * every relation of that name the search path may reach is judged as read whole.
   */
  private async judgeNamedRelations(refs: readonly QualifiedName[]): Promise<PolicyVerdict> {
    if (refs.length === 0) return { ok: true };
    const rows = await this.query(
      `SELECT c.oid::text AS oid, n.nspname::text AS schema, c.relname::text AS name
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relname IN ${jsonList(refs.map((ref) => ref.name))}`,
    );
    const relations = new Map<string, Set<number>>();
    for (const row of rows) {
      for (const ref of refs) {
        if (ref.name !== row.name) continue;
        const inPath =
          ref.schema !== undefined
            ? ref.schema === row.schema
            : (await this.path()).includes(row.schema ?? '') || row.schema?.startsWith('pg_temp');
        if (inPath) relations.set(row.oid ?? '', new Set([0]));
      }
    }
    return relations.size > 0 ? this.judgeRelations(relations, 0, new Set()) : { ok: true };
  }

  /**
   * The conservative check of casts and domains for a statement the server did not analyse: the
   * domains and types named in it (their CHECKs, I/O functions and the user-defined casts to them)
   * and every user-defined IMPLICIT cast of the database, since any expression may invoke one.
   */
  private async judgeCastsAndDomains(typeNames: readonly string[]): Promise<PolicyVerdict> {
    const types =
      typeNames.length === 0
        ? []
        : await this.query(
            `SELECT t.oid::text AS oid FROM pg_catalog.pg_type t
              WHERE t.oid >= ${FIRST_USER_OID} AND t.typname IN ${jsonList(typeNames)}`,
          );
    const typeOids = types.map((row) => row.oid ?? '0');
    const casts = await this.query(
      `SELECT c.castfunc::oid::text AS fn FROM pg_catalog.pg_cast c
        WHERE c.castfunc::oid >= ${FIRST_USER_OID}
          AND (c.castcontext = 'i' OR c.casttarget::oid::text IN ${jsonList(typeOids.length > 0 ? typeOids : ['0'])})`,
    );
    if (typeOids.length === 0 && casts.length === 0) return { ok: true };
    // The same judgement as an analysed tree that used these types and called these functions.
    const tree = [
      ...typeOids.map((oid) => ` :resulttype ${oid}`),
      ...casts.map((row) => ` :funcid ${row.fn}`),
    ].join('');
    return withContext(
      await this.judgeTree(tree, 0, new Set(), 'a cast or domain'),
      'a cast or domain the statement may use; the server could not analyse the statement, so every user-defined implicit cast counts',
    );
  }

  /**
   * Catalog rows by OID (`kind` separates the caches), each cached for {@link POLICY_CACHE_MS}:
   * one query for the OIDs not cached; undefined for an OID the catalog does not have.
   */
  private async catalogRows(
    kind: string,
    oids: readonly string[],
    sql: (list: string) => string,
  ): Promise<(Record<string, string | null> | undefined)[]> {
    const key = (oid: string): string => `${kind}:${oid}`;
    const missing = [...new Set(oids)].filter((oid) => !this.fresh(this.rowsByOid.get(key(oid))));
    if (missing.length > 0) {
      const rows = await this.query(sql(jsonList(missing)));
      const at = this.now();
      for (const oid of missing)
        this.rowsByOid.set(key(oid), { value: rows.find((row) => row.oid === oid), at });
    }
    return oids.map((oid) => this.rowsByOid.get(key(oid))!.value);
  }

  private fresh<T>(entry: Cached<T> | undefined): entry is Cached<T> {
    return entry !== undefined && this.now() - entry.at < POLICY_CACHE_MS;
  }

  /** True when `--allow-functions` names this function (`schema.name` or bare `name` patterns). */
  private allowed(schema: string, name: string): boolean {
    return this.allow.some((pattern) =>
      pattern.includes('.')
        ? matchesPattern(`${schema}.${name}`, [pattern])
        : matchesPattern(name, [pattern]),
    );
  }

  private async path(): Promise<string[]> {
    if (!this.fresh(this.searchPath)) {
      const rows = await this.query(
        'SELECT pg_catalog.array_to_json(pg_catalog.current_schemas(true))::text AS path',
      );
      this.searchPath = { value: JSON.parse(rows[0]?.path ?? '[]') as string[], at: this.now() };
    }
    return this.searchPath.value;
  }

  private async procsNamed(names: readonly string[]): Promise<Map<string, ProcRow[]>> {
    const missing = [...new Set(names)].filter((name) => !this.fresh(this.procsByName.get(name)));
    if (missing.length > 0) {
      const rows = (await this.query(`SELECT ${PROC_COLUMNS} WHERE p.proname IN ${jsonList(missing)}`)).map(
        procRow,
      );
      const at = this.now();
      for (const name of missing)
        this.procsByName.set(name, { value: rows.filter((r) => r.name === name), at });
    }
    return new Map(names.map((name) => [name, this.procsByName.get(name)!.value]));
  }

  private async procsWithOids(oids: readonly string[]): Promise<(ProcRow | undefined)[]> {
    const missing = [...new Set(oids)].filter((oid) => !this.fresh(this.procsByOid.get(oid)));
    if (missing.length > 0) {
      const rows = (await this.query(`SELECT ${PROC_COLUMNS} WHERE p.oid::text IN ${jsonList(missing)}`)).map(
        procRow,
      );
      const at = this.now();
      for (const oid of missing) this.procsByOid.set(oid, { value: rows.find((r) => r.oid === oid), at });
    }
    return oids.map((oid) => this.procsByOid.get(oid)!.value);
  }

  private async operatorsNamed(
    names: readonly string[],
  ): Promise<Map<string, { schema: string; code: string }[]>> {
    const missing = [...new Set(names)].filter((name) => !this.fresh(this.operatorsByName.get(name)));
    if (missing.length > 0) {
      const rows = await this.query(
        `SELECT o.oprname::text AS name, n.nspname::text AS schema, o.oprcode::oid::text AS code
           FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
          WHERE n.nspname <> 'pg_catalog' AND o.oprname IN ${jsonList(missing)}`,
      );
      const at = this.now();
      for (const name of missing)
        this.operatorsByName.set(name, {
          value: rows
            .filter((r) => r.name === name)
            .map((r) => ({ schema: r.schema ?? '', code: r.code ?? '0' })),
          at,
        });
    }
    return new Map(names.map((name) => [name, this.operatorsByName.get(name)!.value]));
  }

  private async viewsNamed(
    names: readonly string[],
  ): Promise<Map<string, { schema: string; def: string }[]>> {
    const missing = [...new Set(names)].filter((name) => !this.fresh(this.viewsByName.get(name)));
    if (missing.length > 0) {
      const rows = await this.query(
        `SELECT c.relname::text AS name, n.nspname::text AS schema, pg_catalog.pg_get_viewdef(c.oid) AS def
           FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind = 'v' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
            AND c.relname IN ${jsonList(missing)}`,
      );
      const at = this.now();
      for (const name of missing)
        this.viewsByName.set(name, {
          value: rows
            .filter((r) => r.name === name)
            .map((r) => ({ schema: r.schema ?? '', def: r.def ?? '' })),
          at,
        });
    }
    return new Map(names.map((name) => [name, this.viewsByName.get(name)!.value]));
  }

  /** True when a catalog object in `schema` is what `ref` may resolve to. */
  private async reaches(ref: QualifiedName, schema: string, resolution: Resolution): Promise<boolean> {
    if (ref.schema !== undefined) return ref.schema === schema;
    return resolution === 'any-schema' || (await this.path()).includes(schema);
  }

  private async judgeReferences(
    refs: References,
    resolution: Resolution,
    depth: number,
    visiting: Set<string>,
  ): Promise<PolicyVerdict> {
    if (depth > MAX_BODY_DEPTH)
      return refuse(
        'function-depth',
        `refused: functions and views nest more than ${MAX_BODY_DEPTH} levels deep, too deep to check`,
      );
    // Built-ins refused by name (guard-rules.ts) are refused inside bodies and views too.
    for (const ref of refs.functions) {
      const rule = GUARD_RULES.find(
        (r) => 'functions' in r.match && matchesPattern(ref.name, r.match.functions),
      );
      if (rule && !this.allowed(ref.schema ?? '', ref.name))
        return refuse(rule.id, rule.reason.replaceAll('{name}', ref.name));
    }
    for (const ref of refs.relations) {
      const rule = GUARD_RULES.find(
        (r) => 'relations' in r.match && matchesPattern(ref.name, r.match.relations),
      );
      if (rule && depth > 0) return refuse(rule.id, rule.reason.replaceAll('{name}', ref.name));
    }
    const procs = await this.procsNamed(refs.functions.map((ref) => ref.name));
    for (const ref of refs.functions) {
      for (const proc of procs.get(ref.name) ?? []) {
        if (proc.schema === 'pg_catalog' || !(await this.reaches(ref, proc.schema, resolution))) continue;
        const verdict = await this.judgeProc(proc, depth, visiting);
        if (!verdict.ok) return verdict;
      }
    }
    if (refs.operators.length > 0) {
      const operators = await this.operatorsNamed(refs.operators.map((ref) => ref.name));
      for (const ref of refs.operators) {
        for (const operator of operators.get(ref.name) ?? []) {
          if (!(await this.reaches(ref, operator.schema, resolution))) continue;
          const [proc] = await this.procsWithOids([operator.code]);
          if (!proc)
            return refuse('function-catalog', `refused: the operator ${ref.name} has no readable function`);
          const verdict = await this.judgeProc(proc, depth, visiting);
          if (!verdict.ok) return verdict;
        }
      }
    }
    if (refs.relations.length > 0) {
      const views = await this.viewsNamed(refs.relations.map((ref) => ref.name));
      for (const ref of refs.relations) {
        for (const view of views.get(ref.name) ?? []) {
          if (!(await this.reaches(ref, view.schema, resolution))) continue;
          const key = `view:${view.schema}.${ref.name}`;
          if (visiting.has(key)) continue;
          visiting.add(key);
          let inner: References;
          try {
            inner = sqlReferences(view.def);
          } catch (error) {
            return refuse(
              'function-body',
              `refused: the view ${view.schema}.${ref.name} could not be read (${messageOf(error)})`,
            );
          }
          const verdict = await this.judgeReferences(inner, 'search-path', depth + 1, visiting);
          visiting.delete(key);
          if (!verdict.ok) return verdict;
        }
      }
    }
    return { ok: true };
  }

  /** The verdict on one function (cached by oid). */
  private async judgeProc(proc: ProcRow, depth: number, visiting: Set<string>): Promise<PolicyVerdict> {
    const cached = this.verdicts.get(proc.oid);
    if (this.fresh(cached)) return cached.value;
    if (visiting.has(proc.oid)) return { ok: true }; // recursion: judged by the outer call
    visiting.add(proc.oid);
    try {
      const verdict = await this.judgeProcUncached(proc, depth, visiting);
      this.verdicts.set(proc.oid, { value: verdict, at: this.now() });
      return verdict;
    } finally {
      visiting.delete(proc.oid);
    }
  }

  private async judgeProcUncached(
    proc: ProcRow,
    depth: number,
    visiting: Set<string>,
  ): Promise<PolicyVerdict> {
    const full = `${proc.schema}.${proc.name}`;
    const hint = `; if it is safe, allow it with --allow-functions ${full}`;
    if (this.allowed(proc.schema, proc.name)) return { ok: true };
    if (matchesPattern(proc.name, SESSION_TEXT_FUNCTIONS) && (await this.seesOtherSessions()))
      return refuse(
        'session-text',
        `refused: ${full} shows the statements of other sessions (passwords included), and this connection's role may see them`,
      );
    if (proc.schema === 'pg_catalog') {
      const rule = GUARD_RULES.find(
        (r) => 'functions' in r.match && matchesPattern(proc.name, r.match.functions),
      );
      return rule ? refuse(rule.id, rule.reason.replaceAll('{name}', proc.name)) : { ok: true };
    }
    if (proc.extension !== null && DENIED_EXTENSIONS[proc.extension] !== undefined)
      return refuse(
        'function-extension',
        `refused: ${full} belongs to the extension ${proc.extension}, which ${DENIED_EXTENSIONS[proc.extension]}${hint}`,
      );
    if (proc.secdef)
      return refuse(
        'function-security-definer',
        `refused: ${full} is SECURITY DEFINER: it runs with its owner's rights, not the connection's${hint}`,
      );
    if (proc.config !== null)
      return refuse(
        'function-security-definer',
        `refused: ${full} has SET clauses (${proc.config}): like SECURITY DEFINER, it may run with another role or settings than the connection's${hint}`,
      );
    if (proc.volatility === 'v')
      return refuse(
        'function-volatile',
        `refused: ${full} is VOLATILE, so it may change data or state; only IMMUTABLE and STABLE functions are allowed${hint}`,
      );
    for (const part of await this.procsWithOids(proc.parts)) {
      if (!part)
        return refuse(
          'function-catalog',
          `refused: a support function of the aggregate ${full} is unreadable`,
        );
      const verdict = await this.judgeProc(part, depth + 1, visiting);
      if (!verdict.ok) return verdict;
    }
    if (COMPILED_LANGUAGES.includes(proc.language)) {
      return proc.extension !== null
        ? { ok: true }
        : refuse(
            'function-language',
            `refused: ${full} is compiled (${proc.language}) code that belongs to no extension, so it cannot be checked${hint}`,
          );
    }
    if (!CHECKED_LANGUAGES.includes(proc.language))
      return refuse(
        'function-language',
        `refused: ${full} is written in ${proc.language}, whose body the guard cannot check${hint}`,
      );
    let refs: References;
    if (proc.language === 'plpgsql') {
      refs = plpgsqlReferences(proc.src ?? '');
      if (refs.dynamic)
        return refuse(
          'function-dynamic-sql',
          `refused: ${full} runs dynamic SQL (EXECUTE), which the guard cannot check${hint}`,
        );
    } else {
      const body = proc.src && proc.src.trim() !== '' ? proc.src : (proc.def ?? '');
      try {
        refs = sqlReferences(body);
      } catch (error) {
        return refuse(
          'function-body',
          `refused: the body of ${full} could not be read (${messageOf(error)})${hint}`,
        );
      }
    }
    const inner = await this.judgeReferences(refs, 'any-schema', depth + 1, visiting);
    if (inner.ok) return inner;
    return refuse(inner.rule, `${inner.reason} (called by ${full})`);
  }
}

/**
 * Wraps a connector so that every statement is judged by a {@link FunctionPolicy} on the same
 * database before it runs; catalog lookups run through the connector's own read-only path.
 * @throws SqlrecallError `guard_refused` from `execute` when the policy refuses (rule in
 *   `details.rule`)
 */
export function withFunctionPolicy(
  db: DatabaseConnector,
  options: FunctionPolicyOptions = {},
): DatabaseConnector {
  const now = options.now ?? Date.now;
  const analyses = new Map<string, { rows: Record<string, string | null>[]; at: number }>();
  const policy = new FunctionPolicy(
    async (sql) => {
      const result = await db.execute(sql, { maxRows: 100_000, timeoutMs: 15_000 });
      if (result.truncated) throw new Error('the catalog answer was too large');
      const names = result.columns.map((column) => column.name);
      return result.rows.map((row) =>
        Object.fromEntries(
          names.map((name, i) => [name, row[i] === null || row[i] === undefined ? null : String(row[i])]),
        ),
      );
    },
    {
      ...options,
      probe: db.probe ? (statements) => db.probe!(statements, { timeoutMs: 15_000 }) : undefined,
      takeAnalysis: (statements) => {
        const key = statements.join('\u0000');
        const entry = analyses.get(key);
        if (!entry) return undefined;
        analyses.delete(key);
        return now() - entry.at <= ANALYSIS_HANDOVER_MS ? entry.rows : undefined;
      },
    },
  );
  return {
    dialect: db.dialect,
    get displayName() {
      return db.displayName;
    },
    ping: () => db.ping(),
    introspect: (introspectOptions) => db.introspect(introspectOptions),
    close: () => db.close(),
    // The data policy analyses each statement of a policed user with the same probe, then runs
    // that statement here: its analysis is kept for this policy's check of the same text, so the
    // server analyses it once. Only an analysis probe is kept, taken once, and for a few seconds.
    ...(db.probe
      ? {
          probe: async (statements, probeOptions) => {
            const rows = await db.probe!(statements, probeOptions);
            if (isAnalysisProbe(statements)) {
              analyses.set(statements.join('\u0000'), { rows, at: now() });
              while (analyses.size > ANALYSES_KEPT) analyses.delete(analyses.keys().next().value as string);
            }
            return rows;
          },
        }
      : {}),
    async execute(sql: string, executeOptions: ExecuteOptions): Promise<QueryResult> {
      const verdict = await policy.check(sql);
      if (!verdict.ok) throw guardRefusal(verdict.reason, verdict.rule);
      return db.execute(sql, executeOptions);
    },
  };
}

/** How long an analysis run through the wrapper's probe waits for the check of its statement (ms). */
const ANALYSIS_HANDOVER_MS = 5_000;

/** Analyses kept for the check at most (the oldest go first). */
const ANALYSES_KEPT = 16;

/** True for the probe statements of a statement's analysis (`probeStatements`). */
function isAnalysisProbe(statements: readonly string[]): boolean {
  return statements.length === 2 && statements[0]!.startsWith(`CREATE TEMP VIEW ${PROBE_VIEW} AS `);
}

/** The last name part of every type named in `sql` (casts, `CAST(… AS t)`, declarations). */
function typeNamesOf(sql: string): string[] {
  const names = new Set<string>();
  walkTree(parseTree(sql), (key, node) => {
    if (key !== 'TypeName') return;
    const parts = stringsOf(node.names);
    const last = parts[parts.length - 1];
    if (last) names.add(last);
  });
  return [...names];
}

/** OIDs in a comma-separated list, without 0 (none). */
function oidList(text: string | null | undefined): string[] {
  return (text ?? '').split(',').filter((part) => /^\d+$/.test(part) && part !== '0');
}

/** Adds where a refused function was reached, once. */
function withContext(verdict: PolicyVerdict, context: string): PolicyVerdict {
  if (verdict.ok || verdict.reason.includes(context)) return verdict;
  return { ...verdict, reason: `${verdict.reason} (${context})` };
}

function refuse(rule: string, reason: string): PolicyVerdict {
  return { ok: false, reason, rule };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
