/**
 * `doctor` on MySQL/MariaDB: a user that can write gets a warning naming its writing grants and,
 * as the fix, the statements that create a read-only user; those statements, run by an
 * administrator, give a user the check passes. The server part skips when no server answers.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { describeGrants, readOnlyUserSql, writingGrants } from '../src/databases/mysql/grants.js';
import { checkDatabaseRole, roleWarning } from '../src/runtime/doctor.js';
import { Runtime } from '../src/runtime/runtime.js';
import { createTempMysqlDatabase, MYSQL_AVAILABLE, type TempMysqlDatabase } from './support/mysql-db.js';

describe('MySQL grants', () => {
  it('finds the privileges that can change something, wherever they apply', () => {
    const grants = writingGrants([
      "GRANT USAGE ON *.* TO `reader`@`%` IDENTIFIED BY PASSWORD '*ABC'",
      'GRANT SELECT, SHOW VIEW ON `shop`.* TO `reader`@`%`',
      'GRANT SELECT (id, name), INSERT (note) ON `shop`.`customers` TO `reader`@`%`',
      'GRANT `analyst` TO `reader`@`%`',
      'GRANT EXECUTE ON PROCEDURE `shop`.`fix_totals` TO `reader`@`%`',
      'GRANT SELECT ON `shop`.`orders` TO `reader`@`%` WITH GRANT OPTION',
    ]);
    expect(grants).toEqual([
      { privilege: 'INSERT', on: '`shop`.`customers`' },
      { privilege: 'EXECUTE', on: '`shop`.`fix_totals`' },
      { privilege: 'GRANT OPTION', on: '`shop`.`orders`' },
    ]);
    expect(writingGrants(['GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION'])).toEqual([
      { privilege: 'ALL PRIVILEGES', on: '*.*' },
      { privilege: 'GRANT OPTION', on: '*.*' },
    ]);
    expect(describeGrants(writingGrants(['GRANT INSERT, UPDATE, DELETE ON `shop`.* TO `app`@`%`']))).toBe(
      'INSERT, UPDATE, DELETE on `shop`.*',
    );
    expect(
      writingGrants(['GRANT SELECT, SHOW VIEW ON `shop`.* TO `r`@`%`', 'GRANT USAGE ON *.* TO `r`@`%`']),
    ).toEqual([]);
  });

  it('writes the read-only user for the database, quoted', () => {
    expect(readOnlyUserSql('sh`op')).toBe(
      "CREATE USER 'sqlrecall_reader'@'%' IDENTIFIED BY 'choose-a-password';\nGRANT SELECT, SHOW VIEW ON `sh``op`.* TO 'sqlrecall_reader'@'%';",
    );
    expect(readOnlyUserSql(undefined)).toContain('ON `your_database`.*');
  });
});

describe.skipIf(!MYSQL_AVAILABLE)('doctor on MySQL/MariaDB', () => {
  let temp: TempMysqlDatabase;
  const suffix = randomBytes(3).toString('hex');
  const writer = `sqlrecall_w_${suffix}`;
  const reader = `sqlrecall_r_${suffix}`;

  beforeAll(async () => {
    temp = await createTempMysqlDatabase('sqlrecall_doctor');
    await temp.exec(`CREATE TABLE orders (id INT PRIMARY KEY);
      CREATE USER '${writer}'@'%' IDENTIFIED BY 'pw-${suffix}';
      GRANT SELECT, INSERT, UPDATE ON \`${temp.name}\`.* TO '${writer}'@'%';`);
  });
  afterAll(async () => {
    await temp?.exec(`DROP USER IF EXISTS '${writer}'@'%', '${reader}'@'%'`).catch(() => {});
    await temp?.drop();
  });

  /** The doctor check for `user` on the temporary database. */
  async function check(user: string | undefined) {
    const url = new URL(temp.url);
    if (user) {
      url.username = user;
      url.password = `pw-${suffix}`;
    }
    const runtime = new Runtime(
      loadConfig({ env: {}, cwd: '/nonexistent', flags: { databaseUrl: url.toString() } }),
    );
    try {
      return await checkDatabaseRole(runtime);
    } finally {
      await runtime.close();
    }
  }

  it('warns about a user with write grants, naming them, with the read-only user as the fix', async () => {
    const result = await check(writer);
    expect(result?.level).toBe('warn');
    expect(result?.message).toContain(
      `The user ${writer}@% can write (INSERT, UPDATE on \`${temp.name}\`.*)`,
    );
    expect(result?.message).not.toContain('ADMINISTRATOR');
    expect(result?.fix).toContain(`GRANT SELECT, SHOW VIEW ON \`${temp.name}\`.* TO 'sqlrecall_reader'@'%';`);
    expect(roleWarning(result)).toMatch(/can write.*sqlrecall doctor/s);
  });

  it('warns loudly about an administrator (root)', async () => {
    const result = await check(undefined);
    expect(result?.level).toBe('warn');
    expect(result?.message).toMatch(/can write \(.*ALL PRIVILEGES[^;]* on \*\.\*.*ADMINISTRATOR CONNECTION/s);
  });

  it('passes a user made by the fix’s own statements', async () => {
    const fix = (await check(writer))?.fix ?? '';
    const statements = fix
      .slice(fix.indexOf('\n') + 1)
      .replaceAll('sqlrecall_reader', reader)
      .replace('choose-a-password', `pw-${suffix}`);
    await temp.exec(statements);
    const result = await check(reader);
    expect(result).toMatchObject({ level: 'ok', message: `user ${reader}@% cannot write` });
  });
});
