/**
 * What a MySQL/MariaDB user may do, read from `SHOW GRANTS` (the server's own statement of the
 * user's privileges), and the statements that create the read-only user sqlrecall recommends.
 * Used by `doctor` and `serve` to warn about a user that could write.
 */

/** Privileges that write, change the schema, run code or reach the server's files or users. */
const WRITING_PRIVILEGES = new Set([
  'ALL',
  'ALL PRIVILEGES',
  'INSERT',
  'UPDATE',
  'DELETE',
  'DELETE HISTORY',
  'CREATE',
  'DROP',
  'ALTER',
  'INDEX',
  'CREATE VIEW',
  'CREATE ROUTINE',
  'ALTER ROUTINE',
  'EXECUTE',
  'TRIGGER',
  'EVENT',
  'FILE',
  'SUPER',
  'CREATE USER',
  'CREATE TABLESPACE',
  'RELOAD',
  'SHUTDOWN',
  'GRANT OPTION',
]);

/** One privilege that can change something, and where it applies (`*.*`, `` `shop`.* ``, …). */
export interface WritingGrant {
  privilege: string;
  on: string;
}

/** Splits a privilege list on commas outside parentheses (`SELECT (a, b), INSERT`). */
function splitPrivileges(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of list) {
    if (c === '(') depth += 1;
    else if (c === ')') depth = Math.max(0, depth - 1);
    if (c === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

/**
 * The privileges of `SHOW GRANTS` lines that can change something (writes, DDL, routines, files,
 * users, `WITH GRANT OPTION`). Lines granting a role or a proxy name no privilege themselves.
 */
export function writingGrants(lines: readonly string[]): WritingGrant[] {
  const found: WritingGrant[] = [];
  for (const line of lines) {
    const match = /^\s*GRANT\s+(.+?)\s+ON\s+(.+?)\s+TO\s+/is.exec(line);
    if (!match) continue;
    const on = match[2]!.replace(/^(TABLE|FUNCTION|PROCEDURE|PACKAGE( BODY)?)\s+/i, '');
    for (const part of splitPrivileges(match[1]!)) {
      const privilege = part
        .replace(/\s*\(.*$/s, '')
        .replace(/\s+/g, ' ')
        .toUpperCase();
      if (WRITING_PRIVILEGES.has(privilege)) found.push({ privilege, on });
    }
    if (/\bWITH\b.*\bGRANT\s+OPTION\b/is.test(line)) found.push({ privilege: 'GRANT OPTION', on });
  }
  return found;
}

/** `INSERT, UPDATE on *.*; DELETE on `shop`.*`: the grants, grouped by where they apply. */
export function describeGrants(grants: readonly WritingGrant[]): string {
  const byTarget = new Map<string, string[]>();
  for (const { privilege, on } of grants) {
    const list = byTarget.get(on) ?? [];
    if (!list.includes(privilege)) list.push(privilege);
    byTarget.set(on, list);
  }
  return [...byTarget].map(([on, privileges]) => `${privileges.join(', ')} on ${on}`).join('; ');
}

/** The connected user (`user@host` as the server matched it) and the default database. */
export const MYSQL_IDENTITY_SQL = 'SELECT CURRENT_USER() AS user, DATABASE() AS db';

/** The current user's grants, one `GRANT …` line per row. */
export const MYSQL_GRANTS_SQL = 'SHOW GRANTS';

/**
 * The read-only user to connect as, created once by an administrator: SELECT and SHOW VIEW on the
 * database (`database` quoted as an identifier; a placeholder when the URL names none).
 */
export function readOnlyUserSql(database: string | undefined): string {
  const target = database ? `\`${database.replaceAll('`', '``')}\`.*` : '`your_database`.*';
  return [
    "CREATE USER 'sqlrecall_reader'@'%' IDENTIFIED BY 'choose-a-password';",
    `GRANT SELECT, SHOW VIEW ON ${target} TO 'sqlrecall_reader'@'%';`,
  ].join('\n');
}
