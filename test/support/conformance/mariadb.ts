/**
 * The conformance engine `mariadb`: a MariaDB or MySQL server (TEST_MYSQL_URL), a temporary
 * database per run holding the fixture of `engine.ts` in MySQL's dialect (`region` an ENUM,
 * `placed_at` a DATETIME: MySQL's TIMESTAMP shifts by time zone, SQL's does not), questioned
 * through `openDatabase(mysql://…)`.
 */
import type { DatabaseConnector } from '../../../src/core/ports.js';
import { openDatabase } from '../../../src/databases/open.js';
import { createTempMysqlDatabase, MYSQL_AVAILABLE, TEST_MYSQL_URL } from '../mysql-db.js';
import type { ConformanceDatabase, ConformanceEngine } from './engine.js';

const FIXTURE = `
CREATE TABLE customers (
  id INT PRIMARY KEY, name TEXT NOT NULL, email TEXT, region ENUM('EMEA', 'AMER', 'APAC'), created_on DATE
) COMMENT 'People who bought something';
INSERT INTO customers VALUES
  (1, 'Ada', 'ada@example.com', 'EMEA', '2024-01-05'),
  (2, 'Grace', NULL, 'AMER', '2024-02-10'),
  (3, 'Linus', 'linus@example.com', 'EMEA', '2024-03-15');
CREATE TABLE orders (
  id INT PRIMARY KEY, customer_id INT, total DECIMAL(12,2), placed_at DATETIME,
  CONSTRAINT orders_customer FOREIGN KEY (customer_id) REFERENCES customers(id)
);
INSERT INTO orders VALUES
  (10, 1, '120.50', '2024-04-01 10:00:00'),
  (11, 1, '99999999.99', '2024-04-02 11:30:00'),
  (12, 2, '0.10', '2024-04-03 12:00:00'),
  (13, 3, NULL, '2024-04-04 09:15:00');
CREATE VIEW big_orders AS SELECT id, customer_id, total FROM orders WHERE total > 100;
`;

/** A recursive CTE counting to `n` (MySQL 8 and MariaDB 10.2+ both have them; no sequence table needed). */
const counter = (n: number) =>
  `WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${Math.floor(n)})`;

const STATEMENTS: ConformanceDatabase['sql'] = {
  values: {
    sql: `SELECT CAST(9007199254740993 AS SIGNED) AS big,
      CAST('12345678901234567890.123456789' AS DECIMAL(30,9)) AS exact, DATE '2024-02-29' AS day,
      CAST('2024-02-29 13:14:15.5' AS DATETIME(1)) AS at, TRUE AS flag,
      JSON_OBJECT('a', JSON_ARRAY(1, 'x', NULL)) AS doc, X'0001FF' AS raw, NULL AS nothing`,
    expected: {
      big: '9007199254740993',
      exact: '12345678901234567890.123456789',
      day: '2024-02-29',
      at: '2024-02-29T13:14:15.5',
      // MySQL has no boolean type: TRUE is the integer 1.
      flag: 1,
      doc: '{"a": [1, "x", null]}',
      raw: '<binary 3 bytes>',
      nothing: null,
    },
  },
  rows: (n) => `${counter(n)} SELECT n, REPEAT('x', 100) AS pad FROM g`,
  // A cross join of three 2,000-row counters: billions of rows to count, minutes of real work.
  // Not SLEEP: MySQL documents that an interrupted SLEEP returns 1 as if it had finished.
  slow: `${counter(2000)} SELECT COUNT(*) AS n FROM g a, g b, g c`,
  reads: [
    'SELECT c.name, o.total FROM customers c JOIN orders o ON o.customer_id = c.id ORDER BY o.id',
    'WITH t AS (SELECT customer_id, SUM(total) AS s FROM orders GROUP BY customer_id) SELECT * FROM t ORDER BY customer_id',
    'SELECT id, total, RANK() OVER (PARTITION BY customer_id ORDER BY total DESC) AS r FROM orders',
    'SELECT region, COUNT(*) AS n FROM customers GROUP BY region ORDER BY region',
    'SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE total > 100)',
    'SELECT * FROM big_orders ORDER BY id',
    'SELECT c.name FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.total IS NULL)',
  ],
  hostile: [
    { sql: 'DELETE FROM orders', why: 'a write' },
    { sql: "UPDATE customers SET name = 'x'", why: 'a write' },
    { sql: 'TRUNCATE orders', why: 'a write' },
    { sql: 'DROP TABLE orders', why: 'DDL' },
    { sql: 'CREATE TABLE stolen AS SELECT * FROM customers', why: 'DDL' },
    { sql: "INSERT INTO customers VALUES (4, 'Eve', NULL, 'APAC', NULL)", why: 'a write' },
    { sql: "REPLACE INTO customers VALUES (1, 'Eve', NULL, 'APAC', NULL)", why: 'a write' },
    { sql: 'SELECT 1; DELETE FROM orders', why: 'a stacked second statement' },
    { sql: 'COMMIT; DELETE FROM orders', why: 'ends the read-only transaction first' },
    { sql: "SELECT * FROM customers INTO OUTFILE '/tmp/sqlrecall-stolen.txt'", why: 'writes a server file' },
    { sql: "SELECT LOAD_FILE('/etc/hostname')", why: 'reads a server file' },
    { sql: 'SELECT * FROM orders FOR UPDATE', why: 'row locks' },
    { sql: 'SELECT * FROM orders LOCK IN SHARE MODE', why: 'row locks' },
    { sql: 'SET SESSION TRANSACTION READ WRITE', why: 'lifts read-only' },
    { sql: 'SELECT @@global.read_only := 0', why: 'a variable assignment' },
    { sql: "CREATE USER 'intruder'@'%'", why: 'a user' },
    { sql: "SELECT GET_LOCK('sqlrecall', 10)", why: 'a server-wide lock' },
    { sql: 'SELECT user, password FROM mysql.user', why: 'the privilege tables' },
    { sql: '/* just a read */ DELETE FROM orders -- really', why: 'a write behind comments' },
    { sql: 'WITH d AS (SELECT 1) DELETE FROM orders', why: 'a write after a CTE' },
    { sql: 'SELECT 1 /*! ; DELETE FROM orders */', why: 'an executable comment' },
    { sql: 'SELECT id FROM orders /*!50000 UNION SELECT SLEEP(1) */', why: 'an executable comment' },
    { sql: 'SELECT COUNT(*) INTO @n FROM orders', why: 'a variable assignment' },
    { sql: 'HANDLER orders OPEN', why: 'a handler' },
    { sql: "LOAD DATA INFILE '/etc/hostname' INTO TABLE customers", why: 'loads a server file' },
    { sql: "SET SESSION sql_mode = 'ANSI_QUOTES'", why: 'changes how SQL is read' },
    { sql: 'CALL mysql.nonexistent()', why: 'a stored procedure' },
    {
      sql: 'SELECT * FROM `orders` WHERE id = 10 UNION SELECT * FROM orders FOR UPDATE',
      why: 'row locks in a union',
    },
  ],
};

/** Every row, the tables and columns of the database, and the users: any write changes it. */
const FINGERPRINT_SQL = (database: string) => `SELECT MD5(CONCAT_WS('|',
  (SELECT GROUP_CONCAT(CONCAT_WS(',', id, name, IFNULL(email, '∅'), region, created_on) ORDER BY id SEPARATOR ';') FROM customers),
  (SELECT GROUP_CONCAT(CONCAT_WS(',', id, IFNULL(customer_id, '∅'), IFNULL(total, '∅'), placed_at) ORDER BY id SEPARATOR ';') FROM orders),
  (SELECT GROUP_CONCAT(CONCAT(table_name, '.', column_name, ':', column_type) ORDER BY table_name, ordinal_position)
     FROM information_schema.columns WHERE table_schema = '${database}'),
  (SELECT GROUP_CONCAT(CONCAT(user, '@', host) ORDER BY user, host) FROM mysql.user)
)) AS fingerprint`;

export const mariadbEngine: ConformanceEngine = {
  name: 'mariadb',
  dialect: 'mysql',
  unavailable: async () =>
    MYSQL_AVAILABLE ? undefined : `no MySQL/MariaDB server answers at TEST_MYSQL_URL (${TEST_MYSQL_URL})`,
  async setUp() {
    const temp = await createTempMysqlDatabase('sqlrecall_conform');
    let connector: DatabaseConnector | undefined;
    try {
      await temp.exec(FIXTURE);
      connector = await openDatabase(temp.url);
    } catch (error) {
      await temp.drop();
      throw error;
    }
    return {
      connector,
      url: temp.url,
      sql: STATEMENTS,
      fingerprint: async () => String((await temp.query(FINGERPRINT_SQL(temp.name)))[0]?.fingerprint),
      async dispose() {
        await connector?.close();
        await temp.drop();
      },
    };
  },
};
