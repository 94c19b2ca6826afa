import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { guardParsedSync, loadGuardParser, parseForGuard } from './guard.js';
import { parseTree, scanTokens } from './parse-tree.js';
import { type AnalysedObjects, analysedObjects, PROBE_VIEW, probeStatements } from './server-analysis.js';

/**
 * The reader as it was before it became one pass (a regular expression per kind of field, each
 * over the whole text): the reference the one-pass reader must agree with on every text.
 */
function analysedObjectsByPasses(tree: string): AnalysedObjects {
  const FUNCTION_FIELDS =
    /(?<=\s):(?:funcid|opfuncid|hashfuncid|negfuncid|aggfnoid|winfnoid|startInRangeFunc|endInRangeFunc|tsmhandler) (\d+)/g;
  const OPERATOR_FIELDS = /(?<=\s):(?:opno|eqop|sortop) (\d+)/g;
  const OPERATOR_LISTS = /(?<=\s):opnos \(o((?: \d+)*)\)/g;
  const TYPE_FIELDS =
    /(?<=\s):(?:vartype|consttype|resulttype|funcresulttype|opresulttype|paramtype|casetype|minmaxtype|row_typeid|aggtype|wintype|typeId|refcontainertype|refelemtype|refrestype) (\d+)/g;
  const RELATION_FIELDS = /(?<=\s):relid (\d+)/g;
  const SELECTED_COLUMNS = /(?<=\s):selectedCols \(b((?: \d+)*)\)/;
  const found: AnalysedObjects = {
    functions: new Set(),
    operators: new Set(),
    types: new Set(),
    relations: new Map(),
  };
  const add = (set: Set<string>, oid: string): void => {
    if (oid !== '0') set.add(oid);
  };
  for (const match of tree.matchAll(FUNCTION_FIELDS)) add(found.functions, match[1]!);
  for (const match of tree.matchAll(OPERATOR_FIELDS)) add(found.operators, match[1]!);
  for (const match of tree.matchAll(OPERATOR_LISTS))
    for (const oid of match[1]!.trim().split(/\s+/).filter(Boolean)) add(found.operators, oid);
  for (const match of tree.matchAll(TYPE_FIELDS)) add(found.types, match[1]!);
  const relations = [...tree.matchAll(RELATION_FIELDS)];
  for (const [index, match] of relations.entries()) {
    const oid = match[1]!;
    if (oid === '0') continue;
    const end = relations[index + 1]?.index ?? tree.length;
    const columns = found.relations.get(oid) ?? new Set<number>();
    const selected = SELECTED_COLUMNS.exec(tree.slice(match.index!, end));
    for (const bit of (selected?.[1] ?? '').trim().split(/\s+/).filter(Boolean)) columns.add(Number(bit) - 7);
    found.relations.set(oid, columns);
  }
  return found;
}

/** Everything a reader found, in the order it found it (so order differences show too). */
function plain(found: AnalysedObjects): unknown {
  return {
    functions: [...found.functions],
    operators: [...found.operators],
    types: [...found.types],
    relations: [...found.relations].map(([oid, columns]) => [oid, [...columns]]),
  };
}

const FIELD_NAMES = [
  'funcid',
  'opfuncid',
  'hashfuncid',
  'negfuncid',
  'aggfnoid',
  'winfnoid',
  'startInRangeFunc',
  'endInRangeFunc',
  'tsmhandler',
  'opno',
  'eqop',
  'sortop',
  'opnos',
  'vartype',
  'consttype',
  'resulttype',
  'funcresulttype',
  'opresulttype',
  'paramtype',
  'casetype',
  'minmaxtype',
  'row_typeid',
  'aggtype',
  'wintype',
  'typeId',
  'refcontainertype',
  'refelemtype',
  'refrestype',
  'relid',
  'selectedCols',
];
/** Names close to the real ones: longer, shorter, another case, other fields PostgreSQL writes. */
const NEAR_NAMES = [
  'funcidx',
  'Funcid',
  'opnosx',
  'relidx',
  'selectedcols',
  'insertedCols',
  'rtekind',
  'location',
  'opfamilies',
  'inh',
  'func',
  '',
];

/** A random text in the node-string form, with the hostile variants of each field thrown in. */
const nodeText = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...FIELD_NAMES).map((name) => `:${name}`) },
      { weight: 1, arbitrary: fc.constantFrom(...NEAR_NAMES).map((name) => `:${name}`) },
      {
        weight: 4,
        arbitrary: fc
          .tuple(fc.constantFrom(...FIELD_NAMES), fc.nat({ max: 20 }))
          .map(([name, n]) =>
            name === 'opnos'
              ? ` :opnos (o ${n})`
              : name === 'selectedCols'
                ? ` :selectedCols (b ${n})`
                : ` :${name} ${n}`,
          ),
      },
      {
        weight: 5,
        arbitrary: fc.constantFrom(
          ' ',
          ' ',
          ' ',
          '\n',
          '\t',
          '\u00a0',
          '\ufeff',
          '\u2028',
          '',
          '  ',
          ':',
          '\\ ',
          '{QUERY',
          '{RANGETBLENTRY',
          '}',
          '(',
          ')',
          'x\\ :funcid\\ 1',
        ),
      },
      {
        weight: 5,
        arbitrary: fc.oneof(
          fc.constantFrom('0', '00', '7', '16384', '007', '99999999999999999999', 'abc', '-1', '1a', '٣'),
          fc.nat({ max: 40_000 }).map(String),
        ),
      },
      {
        weight: 4,
        arbitrary: fc
          .tuple(
            fc.constantFrom('o', 'b', 'x', 'O', ''),
            fc.array(fc.oneof(fc.nat({ max: 20 }).map(String), fc.constantFrom('0', '00', 'a', '')), {
              maxLength: 5,
            }),
            fc.constantFrom(' ', '  ', '\t', ''),
            fc.constantFrom(')', ' )', '', ')x'),
          )
          .map(([tag, numbers, gap, close]) => `(${tag}${numbers.map((n) => `${gap}${n}`).join('')}${close}`),
      },
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''))
  .chain((body) => fc.constantFrom(body, ` ${body}`, body.replaceAll(':', ' :'), `({QUERY ${body}})`));

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

describe('analysedObjects, one pass', () => {
  it('finds what the reader of one pass per kind of field found, on thousands of random texts', () => {
    fc.assert(
      fc.property(nodeText, (tree) => {
        expect(plain(analysedObjects(tree))).toEqual(plain(analysedObjectsByPasses(tree)));
      }),
      { numRuns: 5_000 },
    );
  });

  it('agrees on texts built from well-formed fields in random order', () => {
    const field = fc.oneof(
      fc
        .tuple(fc.constantFrom(...FIELD_NAMES), fc.nat({ max: 20_000 }))
        .map(([name, n]) =>
          name === 'opnos'
            ? `:opnos (o ${n} ${n + 1})`
            : name === 'selectedCols'
              ? `:selectedCols (b ${n % 30})`
              : `:${name} ${n}`,
        ),
      fc.constantFrom(':selectedCols (b)', ':relid 0', ':opnos (o)', ':inh true', '{TARGETENTRY', '}'),
    );
    fc.assert(
      fc.property(fc.array(field, { maxLength: 80 }), fc.constantFrom(' ', '\n      '), (fields, gap) => {
        const tree = `({QUERY${fields.map((f) => `${gap}${f}`).join('')}})`;
        expect(plain(analysedObjects(tree))).toEqual(plain(analysedObjectsByPasses(tree)));
      }),
      { numRuns: 3_000 },
    );
  });

  it('is not fooled by hostile spellings', () => {
    for (const [tree, expected] of [
      // A string of the tree: the node writer escapes its spaces, so no field can start in it.
      ['{CONST :constvalue x\\ :funcid\\ 99}', {}],
      // No space before the colon, no space after the name, another case, a longer name.
      ['{X:funcid 5 :funcid\t6 :Funcid 7 :funcidx 8}', {}],
      // The OID 0 is none; a leading zero is kept as written.
      [' :funcid 0 :opno 0 :opnos (o 0 12) :vartype 007', { operators: ['12'], types: ['007'] }],
      // A list with two spaces, a trailing space or no closing parenthesis is not read.
      [' :opnos (o 1  2) :opnos (o 3 ) :opnos (o 4', {}],
      // Columns: the first well-formed list after a relation, not one before it or after the next.
      [
        ' :selectedCols (b 9) :relid 16390 :selectedCols (b 8 ) :selectedCols (b 8) :selectedCols (b 10) :relid 0 :selectedCols (b 11) :relid 16391',
        {
          relations: [
            ['16390', [1]],
            ['16391', []],
          ],
        },
      ],
      // Other white space before the colon counts (JavaScript's \s), as it did.
      [
        '\u00a0:funcid 1\ufeff:funcid 2\u2028:relid 16400',
        { functions: ['1', '2'], relations: [['16400', []]] },
      ],
    ] as const) {
      const want = {
        functions: [],
        operators: [],
        types: [],
        relations: [],
        ...(expected as object),
      };
      expect(plain(analysedObjects(tree)), tree).toEqual(want);
      expect(plain(analysedObjectsByPasses(tree)), tree).toEqual(want);
    }
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

  it("reuses the guard's own parse and scan of the text, with the same statements as without", () => {
    for (const sql of [
      'SELECT a, $1::int AS b FROM t WHERE c = $2',
      'EXPLAIN (COSTS OFF) SELECT $1::text AS x',
    ]) {
      let kept: Parameters<typeof probeStatements>[1];
      expect(guardParsedSync({ sql, tree: parseForGuard(sql) }, {}, (parts) => (kept = parts)).ok).toBe(true);
      expect(kept?.tokens).toBeDefined();
      expect(probeStatements(sql, kept), sql).toEqual(probeStatements(sql));
    }
    expect(probeStatements('SELECT a, $1::int AS b FROM t WHERE c = $2')[0]).toContain(
      'SELECT a, NULL::int AS b FROM t WHERE c = NULL',
    );
  });

  it('ignores a parse or scan the guard did not make of the text', () => {
    const explain = 'EXPLAIN SELECT c.f FROM t c';
    // A tree that is not the guard's parse of the text: were it believed, the EXPLAIN would be
    // analysed whole instead of its statement.
    for (const tree of [parseTree('SELECT 1'), parseForGuard('SELECT 1'), parseTree(explain)])
      expect(probeStatements(explain, { sql: explain, tree })[0]).toContain('(\nSELECT c.f FROM t c\n)');
    // Tokens without the parameter: were they believed, `$1` would reach the view.
    const sql = 'SELECT $1::int AS a';
    for (const tokens of [scanTokens('SELECT 1'), scanTokens(sql)])
      expect(
        probeStatements(sql, { sql, tree: parseForGuard(sql), tokens: tokens.slice(0, 1) })[0],
      ).toContain('SELECT NULL::int AS a');
  });
});
