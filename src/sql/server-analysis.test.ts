import { beforeAll, describe, expect, it } from 'vitest';
import { loadGuardParser } from './guard.js';
import { analysedObjects, PROBE_VIEW, probeStatements } from './server-analysis.js';

describe('analysedObjects', () => {
  it('reads calls, operators, sort operators, row comparisons, types and columns (PostgreSQL 15 form)', () => {
    const tree = `({QUERY :rtable ({RANGETBLENTRY :rtekind 0 :relid 16410 :relkind r :requiredPerms 2
      :selectedCols (b 7 9) :insertedCols (b)}) :targetList ({TARGETENTRY :expr {FUNCEXPR :funcid 3826
      :funcresulttype 25 :args ({CONST :consttype 16412 :constvalue 4 [ 1 0 0 0 ]})}} {TARGETENTRY :expr
      {OPEXPR :opno 96 :opfuncid 65 :opresulttype 16} :resname x\\ :funcid\\ 1}
      {TARGETENTRY :expr {ROWCOMPAREEXPR :rctype 1 :opnos (o 97 16500) :opfamilies (o 1976 1976)}})
      :sortClause ({SORTGROUPCLAUSE :tleSortGroupRef 1 :eqop 98 :sortop 664})})`;
    const found = analysedObjects(tree);
    expect([...found.functions].sort()).toEqual(['3826', '65']);
    expect([...found.operators].sort()).toEqual(['16500', '664', '96', '97', '98']);
    expect(found.types.has('16412')).toBe(true);
    expect([...(found.relations.get('16410') ?? [])]).toEqual([0, 2]);
  });

  it('finds the columns read in PostgreSQL 16+ permission entries', () => {
    const tree = `({QUERY :rtable ({RANGETBLENTRY :rtekind 0 :relid 16384 :inh true :perminfoindex 1})
      :rteperminfos ({RTEPERMISSIONINFO :relid 16384 :inh true :requiredPerms 2 :selectedCols (b 8)})})`;
    expect([...(analysedObjects(tree).relations.get('16384') ?? [])]).toEqual([1]);
  });
});

describe('probeStatements', () => {
  beforeAll(() => loadGuardParser());

  it('wraps the statement in a temporary view and reads its tree', () => {
    const [create, read] = probeStatements('SELECT 1 AS a, 1 AS a');
    expect(create).toBe(
      `CREATE TEMP VIEW ${PROBE_VIEW} AS SELECT 1 FROM (\nSELECT 1 AS a, 1 AS a\n) AS sqlrecall_probe_s`,
    );
    expect(read).toMatch(/ev_action::text AS tree/);
  });

  it('analyses the statement an EXPLAIN explains, whatever its options', () => {
    for (const sql of [
      'EXPLAIN SELECT c.f FROM t c',
      'EXPLAIN (FORMAT JSON, VERBOSE) SELECT c.f FROM t c',
      'EXPLAIN VERBOSE SELECT c.f FROM t c',
    ])
      expect(probeStatements(sql)[0], sql).toContain('(\nSELECT c.f FROM t c\n)');
  });
});
