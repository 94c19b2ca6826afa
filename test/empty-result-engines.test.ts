/**
 * The empty-result check and value hints on every engine the user may question besides
 * PostgreSQL: a SQLite file, a DuckDB file, a folder of CSV files read by DuckDB, and MariaDB
 * (TEST_MYSQL_URL). Each holds the same `sales` table of 3,000 rows, so two cities exist only
 * past the 2,000 sampled rows. The statements are written in each engine's own quoting, and each
 * filter the sample cannot explain is confirmed against the engine: a literal the engine finds,
 * compared its own way (MariaDB's default collation ignores case; SQLite's LIKE ignores ASCII
 * case), is never reported as the cause. A saved example written in the engine's quoting is
 * reused with a new value the engine confirms.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkEmptyResult,
  createColumnSampler,
  createLiteralConfirmer,
  type EmptyFilter,
  emptyRepairText,
  emptyResultAnswer,
} from '../src/agent/empty-check.js';
import { answerWithoutModel } from '../src/agent/fallback.js';
import type { DatabaseConnector, DatabaseDialectName } from '../src/core/ports.js';
import type { Schema } from '../src/core/schema.js';
import { openDatabase } from '../src/databases/open.js';
import { createValueSampler } from '../src/linking/value-hints.js';
import { betterSqliteInstalled, makeSqliteFile } from './support/conformance/sqlite.js';
import { memoryFixture } from './support/memory-fixtures.js';
import { createTempMysqlDatabase, MYSQL_AVAILABLE, type TempMysqlDatabase } from './support/mysql-db.js';
import { tempDir } from './support/temp-dir.js';

const ROWS = 3000;

interface SaleRow {
  id: number;
  region: string;
  city: string;
  segment: string;
}

/** Rows 1–2,500 in Paris and Lyon, 2,501–3,000 in Zürich and O'Hare: beyond the first 2,000 sampled. */
function saleRows(): SaleRow[] {
  return Array.from({ length: ROWS }, (_, k) => {
    const i = k + 1;
    return {
      id: i,
      region: i % 2 ? 'EMEA' : 'AMER',
      city: i <= 2500 ? (i % 2 ? 'Paris' : 'Lyon') : i % 2 ? 'Zürich' : "O'Hare",
      segment: i % 3 ? 'Retail' : 'Wholesale',
    };
  });
}

const quoted = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** INSERT statements of 500 rows each. */
function inserts(): string {
  const rows = saleRows();
  const out: string[] = [];
  for (let i = 0; i < rows.length; i += 500)
    out.push(
      `INSERT INTO sales VALUES ${rows
        .slice(i, i + 500)
        .map((r) => `(${r.id}, ${quoted(r.region)}, ${quoted(r.city)}, ${quoted(r.segment)})`)
        .join(', ')};`,
    );
  return out.join('\n');
}

/** One engine's database, and the same questions in its quoting. */
interface Engine {
  name: string;
  dialect: DatabaseDialectName;
  skip: boolean;
  open(): Promise<{ db: DatabaseConnector; dispose(): Promise<void> }>;
  /** `region = 'emea'`: matches nothing (every engine here compares region case-sensitively). */
  regionSql: string;
  /** `city = 'Zürich'`: stored only past the sample. */
  pastSampleSql: string;
  /** `city = 'o''hare'`: no row; the stored spelling O'Hare is past the sample. */
  spellingSql: string;
  /** `segment = 'retail'` on a column the engine compares with its default rules. */
  segmentSql: string;
  /** Whether the engine's `=` on `segment` ignores case (MariaDB's default collation). */
  segmentIgnoresCase: boolean;
  /** `city LIKE 'par%'`, and whether the engine's LIKE ignores case there. */
  likeSql: string;
  likeIgnoresCase: boolean;
  /** A saved example's SQL in the engine's quoting, for the question "how many sales in Paris". */
  exampleSql: string;
}

const SQLITE_DDL =
  'CREATE TABLE sales (id INTEGER PRIMARY KEY, region TEXT NOT NULL, city VARCHAR(40), segment TEXT);';
const DUCKDB_DDL =
  'CREATE TABLE sales (id INTEGER PRIMARY KEY, region VARCHAR, city VARCHAR, segment VARCHAR);';

const SQLITE_LIKE_STATEMENTS = {
  regionSql: `SELECT [id] FROM "sales" AS s WHERE s."region" = 'emea'`,
  pastSampleSql: `SELECT count(*) FROM sales WHERE city = 'Zürich' AND id > 0`,
  spellingSql: `SELECT id FROM sales WHERE (city = 'o''hare')`,
  segmentSql: `SELECT id FROM main.sales WHERE segment IN ('retail', 'Wholesale')`,
  likeSql: `SELECT id FROM sales WHERE city LIKE 'par%'`,
  exampleSql: `SELECT count(*) AS n FROM [sales] AS s WHERE s."city" = 'Paris' AND s.region = 'EMEA'`,
};

const duckdbStatements = {
  ...SQLITE_LIKE_STATEMENTS,
  regionSql: `SELECT "id" FROM "sales" AS s WHERE s."region" = 'emea'`,
  exampleSql: `SELECT count(*) AS n FROM "sales" AS s WHERE s."city" = 'Paris' AND s.region = 'EMEA'`,
};

let duckdbReady: boolean;
try {
  const { loadDuckdb } = await import('../src/databases/duckdb/load.js');
  await loadDuckdb();
  duckdbReady = true;
} catch {
  duckdbReady = false;
}

const ENGINES: Engine[] = [
  {
    name: 'SQLite file',
    dialect: 'sqlite',
    skip: !betterSqliteInstalled(),
    async open() {
      const path = await makeSqliteFile(`${SQLITE_DDL}\n${inserts()}`, tempDir('sqlrecall-empty-sqlite-'));
      const db = await openDatabase(`sqlite:${path}`);
      return { db, dispose: () => db.close() };
    },
    ...SQLITE_LIKE_STATEMENTS,
    segmentIgnoresCase: false,
    likeIgnoresCase: true,
  },
  {
    name: 'DuckDB file',
    dialect: 'duckdb',
    skip: !duckdbReady,
    async open() {
      const { writeDuckdbFile } = await import('./support/duckdb-files.js');
      const file = join(tempDir('sqlrecall-empty-duckdb-'), 'sales.duckdb');
      await writeDuckdbFile(file, `${DUCKDB_DDL}\n${inserts()}`);
      const db = await openDatabase(`duckdb:${file}`);
      return { db, dispose: () => db.close() };
    },
    ...duckdbStatements,
    segmentIgnoresCase: false,
    likeIgnoresCase: false,
  },
  {
    name: 'DuckDB over a CSV folder',
    dialect: 'duckdb',
    skip: !duckdbReady,
    async open() {
      const dir = tempDir('sqlrecall-empty-csv-');
      const csv = saleRows().map((r) => [r.id, r.region, r.city, r.segment].map((v) => `"${v}"`).join(','));
      writeFileSync(join(dir, 'sales.csv'), `id,region,city,segment\n${csv.join('\n')}\n`);
      const db = await openDatabase(dir);
      return { db, dispose: () => db.close() };
    },
    ...duckdbStatements,
    segmentIgnoresCase: false,
    likeIgnoresCase: false,
  },
  {
    name: 'MariaDB',
    dialect: 'mysql',
    skip: !MYSQL_AVAILABLE,
    async open() {
      const temp: TempMysqlDatabase = await createTempMysqlDatabase('sqlrecall_empty');
      // region and city compare byte for byte; segment keeps the default collation (case ignored).
      await temp.exec(
        'CREATE TABLE sales (id INT PRIMARY KEY, region VARCHAR(10) COLLATE utf8mb4_bin NOT NULL, city VARCHAR(40) COLLATE utf8mb4_bin, segment VARCHAR(20))',
      );
      await temp.exec(inserts());
      const db = await openDatabase(temp.url);
      return {
        db,
        async dispose() {
          await db.close();
          await temp.drop();
        },
      };
    },
    regionSql: 'SELECT `id` FROM `sales` AS s WHERE s.`region` = "emea"',
    pastSampleSql: "SELECT COUNT(*) FROM sales WHERE city = 'Zürich' AND id > 0",
    // MySQL reads \' inside a string as a quote.
    spellingSql: "SELECT id FROM sales WHERE (city = 'o\\'hare')",
    segmentSql: "SELECT id FROM sales WHERE segment IN ('retail', 'Wholesale')",
    segmentIgnoresCase: true,
    likeSql: "SELECT id FROM sales WHERE city LIKE 'par%'",
    likeIgnoresCase: false,
    exampleSql: "SELECT COUNT(*) AS n FROM `sales` AS s WHERE s.`city` = 'Paris' AND s.region = 'EMEA'",
  },
];

for (const engine of ENGINES) {
  describe.skipIf(engine.skip)(`the empty-result check on ${engine.name}`, () => {
    let db: DatabaseConnector;
    let dispose: () => Promise<void>;
    let schema: Schema;
    const check = (sql: string, confirm = true): Promise<EmptyFilter[]> =>
      checkEmptyResult(sql, schema, createValueSampler(db), createColumnSampler(db), {
        dialect: engine.dialect,
        ...(confirm ? { confirm: createLiteralConfirmer(db) } : {}),
      });

    beforeAll(async () => {
      ({ db, dispose } = await engine.open());
      schema = await db.introspect();
    }, 60_000);
    afterAll(async () => {
      await dispose?.();
    });

    it('samples value hints of the small text columns', async () => {
      const sales = schema.tables.find((t) => t.name === 'sales')!;
      const errors: unknown[] = [];
      const hints = await createValueSampler(db, { onError: (_t, error) => errors.push(error) })(sales);
      expect(errors).toEqual([]);
      const byColumn = Object.fromEntries(hints.map((h) => [h.column, h]));
      expect(byColumn.region).toMatchObject({
        values: ['AMER', 'EMEA'],
        source: 'sample',
        sampledRows: 2000,
      });
      // The first 2,000 rows only: the cities past them are not in the sample.
      expect(byColumn.city?.values).toEqual(['Lyon', 'Paris']);
    });

    it("names the stored spelling of a literal written in the engine's quoting", async () => {
      const filters = await check(engine.regionSql);
      expect(filters).toHaveLength(1);
      expect(filters[0]).toMatchObject({ column: 'region', literal: 'emea', candidates: ['EMEA'] });
      const repair = emptyRepairText(filters);
      const q = engine.dialect === 'mysql' ? '`' : '"';
      expect(repair).toContain(`${q}region${q} = 'emea'`);
      expect(repair).toContain("the column holds 'EMEA'");
    });

    it('does not blame a literal the engine finds past the sampled rows (and the sample alone would)', async () => {
      expect(await check(engine.pastSampleSql)).toEqual([]);
      // Without asking the engine, the sample (Lyon, Paris) would blame the filter wrongly.
      const unconfirmed = await check(engine.pastSampleSql, false);
      expect(unconfirmed.map((f) => f.literal)).toEqual(['Zürich']);
    });

    it('takes the stored spelling from the engine when the sample holds none, quotes included', async () => {
      const filters = await check(engine.spellingSql);
      expect(filters).toHaveLength(1);
      expect(filters[0]).toMatchObject({ column: 'city', literal: "o'hare", candidates: ["O'Hare"] });
      expect(emptyRepairText(filters)).toContain("'O''Hare'");
    });

    it('compares as the engine does: a literal its own rules match is not reported', async () => {
      const segment = await check(engine.segmentSql);
      if (engine.segmentIgnoresCase) expect(segment).toEqual([]);
      else expect(segment).toMatchObject([{ column: 'segment', literal: 'retail', candidates: ['Retail'] }]);
      const like = await check(engine.likeSql);
      if (engine.likeIgnoresCase) expect(like).toEqual([]);
      else {
        expect(like).toMatchObject([
          { column: 'city', literal: 'par%', operator: 'like', candidates: ['Paris'] },
        ]);
        expect(emptyResultAnswer(like)).toMatch(/^No matching data: .*city.* LIKE 'par%' matched nothing/);
      }
    });

    it('reports nothing for a literal that exists, and reads nothing from a hostile literal', async () => {
      expect(await check("SELECT id FROM sales WHERE region = 'EMEA' AND id < 0")).toEqual([]);
      const hostile = engine.dialect === 'mysql' ? "x\\' OR 1=1 -- " : "x'' OR 1=1 -- ";
      const filters = await check(`SELECT id FROM sales WHERE region = '${hostile}'`);
      // The literal is one value compared as a whole: nothing matches it, no row leaks through it.
      expect(filters.map((f) => f.literal)).toEqual(["x' OR 1=1 -- "]);
      expect(filters[0]!.candidates).toEqual([]);
    });

    it("reuses a saved example written in the engine's quoting, with a value the engine confirms", async () => {
      const saved = memoryFixture({
        id: '44444444-0000-4000-8000-000000000001',
        scope: { user: 'ann' },
        kind: 'example',
        text: 'how many sales in Paris for EMEA',
        sql: engine.exampleSql,
      });
      const ask = (question: string) =>
        answerWithoutModel({
          question,
          user: 'ann',
          schema,
          db,
          examples: { list: async () => [saved] },
          maxRows: 10,
          timeoutMs: 10_000,
          useRules: false,
        });
      // "zurich" is not the stored Zürich ignoring case only: never a guess. MariaDB's default
      // collation, which the spelling check compares under, also ignores accents: there it is.
      const zurich = await ask('how many sales in zurich for EMEA');
      if (engine.dialect === 'mysql') expect((zurich as { sql: string }).sql).toContain("'Zürich'");
      else expect(zurich).toBeNull();
      const lyon = await ask('how many sales in lyon for AMER');
      expect(lyon).toMatchObject({ path: 'example' });
      expect(Number((lyon as { result: { rows: unknown[][] } }).result.rows[0]![0])).toBe(1250);
      expect((lyon as { sql: string }).sql).toContain("'Lyon'");
      expect((lyon as { sql: string }).sql).toContain("'AMER'");
      // A value that is not stored is not substituted, and one holding a quote stays one literal.
      expect(await ask('how many sales in atlantis for EMEA')).toBeNull();
      const hare = await ask("how many sales in o'hare for AMER");
      expect(hare).toMatchObject({ path: 'example' });
      expect((hare as { sql: string }).sql).toContain("'O''Hare'");
      expect(Number((hare as { result: { rows: unknown[][] } }).result.rows[0]![0])).toBe(250);
    });
  });
}
