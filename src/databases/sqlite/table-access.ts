/**
 * The table allowlist checked on the program SQLite compiled, not on the text: `EXPLAIN` lists
 * the bytecode of a statement, and every table or index it reads is opened by an `OpenRead` (or
 * `ReopenIdx`) whose P2 is the b-tree's root page and P3 the database (0 = `main`). The statement
 * may run only when every such root page is an allowed table's or one of its indexes'. A view is
 * compiled into the reads of its base tables, so a view runs only when the tables under it are
 * allowed too; SQLite's own catalog (`sqlite_schema`, root page 1) is never one of them.
 *
 * Virtual tables (`VOpen`) show no name in the program. They are accepted only as many times as
 * the statement calls a table-valued function that reads no table (`json_each(…)`, …), or freely
 * when an allowed table is itself virtual; any other (`dbstat`, a `pragma_*` table) is refused.
 *
 * The caller runs this inside the read transaction the statement then runs in, so the root pages
 * it reads from `sqlite_schema` are those of the snapshot the statement reads.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { isAllowedFolded, parseTablePatterns } from '../../sql/allowlist.js';
import { SQLITE_HARMLESS_TABLE_FUNCTIONS } from '../../sql/sqlite/allowlist.js';
import { lexSqlite } from '../../sql/sqlite/lexer.js';

/** Opcodes that open a b-tree cursor for reading by root page (P2) in database P3. */
const READ_OPCODES = new Set(['OpenRead', 'ReopenIdx']);

/** Opcodes that open a b-tree for writing or create one: never in an allowed read. */
const WRITE_OPCODES = new Set(['OpenWrite', 'CreateBtree', 'Destroy', 'Clear', 'ParseSchema']);

/** What the allowlist permits in one snapshot of the file. */
interface AllowedPages {
  pages: Set<number>;
  /** True when an allowed table is a virtual table. */
  virtual: boolean;
}

function allowedPages(db: BetterSqlite3.Database, allowTables: readonly string[]): AllowedPages {
  const patterns = parseTablePatterns(allowTables);
  const rows = db
    .prepare("SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema WHERE type IN ('table', 'index')")
    .all() as { type: string; name: string; tbl_name: string; rootpage: unknown; sql: unknown }[];
  const tables = new Set<string>();
  let virtual = false;
  for (const row of rows)
    if (row.type === 'table' && isAllowedFolded('main', row.name, patterns)) {
      tables.add(row.name.toLowerCase());
      if (Number(row.rootpage) === 0 && /^\s*create\s+virtual\b/i.test(String(row.sql ?? ''))) virtual = true;
    }
  const pages = new Set<number>();
  for (const row of rows) {
    const page = Number(row.rootpage);
    if (page > 0 && tables.has(row.tbl_name.toLowerCase())) pages.add(page);
  }
  return { pages, virtual };
}

/** How many times the text calls a table-valued function that reads no table. */
function harmlessTableFunctionCalls(sql: string): number {
  const lexed = lexSqlite(sql);
  if (!lexed.ok) return 0;
  return lexed.tokens.filter(
    (token, i) =>
      token.kind === 'word' &&
      SQLITE_HARMLESS_TABLE_FUNCTIONS.has(token.lower) &&
      lexed.tokens[i + 1]?.kind === 'punct' &&
      lexed.tokens[i + 1]?.text === '(',
  ).length;
}

/**
 * Checks the compiled program of `sql` against the allowlist on `db`, which must be inside the
 * read transaction the statement will run in.
 * @returns undefined when it reads only allowed tables and their indexes, else the reason
 */
export function checkTableAccess(
  db: BetterSqlite3.Database,
  sql: string,
  allowTables: readonly string[],
): string | undefined {
  const allowed = allowedPages(db, allowTables);
  const program = db.prepare(`EXPLAIN ${sql}`).all() as { opcode: string; p2: unknown; p3: unknown }[];
  // Virtual tables the text accounts for: each harmless call opens one (a call the planner
  // copies, a CTE used twice, is refused rather than guessed).
  let virtualLeft: number | undefined;
  for (const op of program) {
    if (WRITE_OPCODES.has(op.opcode)) return `the statement's program writes (${op.opcode})`;
    if (READ_OPCODES.has(op.opcode)) {
      if (Number(op.p3) !== 0) return 'the statement reads outside the main database';
      if (!allowed.pages.has(Number(op.p2)))
        return Number(op.p2) === 1
          ? "the statement reads SQLite's own catalog"
          : 'the statement reads a table that is not one of the allowed tables (through a view or a name the text check did not see)';
    } else if (op.opcode === 'VOpen') {
      virtualLeft ??= allowed.virtual ? Number.POSITIVE_INFINITY : harmlessTableFunctionCalls(sql);
      if (virtualLeft <= 0)
        return 'the statement reads a virtual table that is not one of the allowed tables';
      virtualLeft -= 1;
    }
  }
  return undefined;
}
