/**
 * Test access to a MySQL or MariaDB server. `TEST_MYSQL_URL` (default
 * `mysql://root@127.0.0.1:3306/test`, what `.ci/run` provides) must name a user that may CREATE
 * DATABASE; each suite gets a throw-away database. Suites skip when no server answers.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';

/** The server URL tests use. */
export const TEST_MYSQL_URL: string = process.env.TEST_MYSQL_URL || 'mysql://root@127.0.0.1:3306/test';

function options(database?: string): mysql.ConnectionOptions {
  const url = new URL(TEST_MYSQL_URL.replace(/^(mysql|mariadb):/, 'http:'));
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username || 'root'),
    password: decodeURIComponent(url.password),
    ...(database ? { database } : {}),
    multipleStatements: true,
    connectTimeout: 2_000,
  };
}

/** True when the test server answers (checked once, at collection time). */
export const MYSQL_AVAILABLE: boolean = await mysql
  .createConnection(options())
  .then(async (conn) => {
    await conn.end();
    return true;
  })
  .catch(() => false);

/** A database created for one suite; `exec` runs admin SQL in it (several statements allowed). */
export interface TempMysqlDatabase {
  name: string;
  /** `mysql://…/<name>` for the connector under test. */
  url: string;
  exec(sql: string): Promise<void>;
  /** Rows of an admin query in this database, as objects. */
  query(sql: string): Promise<Record<string, unknown>[]>;
  drop(): Promise<void>;
}

/** Creates an empty database named `<prefix>_<random>` and an admin connection to it. */
export async function createTempMysqlDatabase(prefix: string): Promise<TempMysqlDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`.toLowerCase();
  const admin = await mysql.createConnection(options());
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  await admin.query(`USE \`${name}\``);
  const url = new URL(TEST_MYSQL_URL.replace(/^(mysql|mariadb):/, 'http:'));
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString().replace(/^http:/, 'mysql:'),
    exec: async (sql) => {
      await admin.query(sql);
    },
    query: async (sql) => {
      const [rows] = await admin.query(sql);
      return rows as Record<string, unknown>[];
    },
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => {});
      await admin.end().catch(() => {});
    },
  };
}
