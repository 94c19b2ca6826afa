/**
 * Decoy tables for schema-linking tests and benchmarks (issue 5, "padded schemas"): plausible
 * enterprise tables (`crm_campaign_history`, `inv_warehouse_bin`, …) with plausible columns, some
 * sharing column names with the real tables, a few rows of low-cardinality values each, generated
 * deterministically from a seed. Never named like a real table.
 */
import { quoteIdent } from '../../src/sql/render.js';

/** Deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PREFIXES = 'hr crm fin inv ops mkt log qa it legal proc mfg acct svc web ml etl bi pay sec'.split(' ');
const ENTITIES = (
  'employee shift payroll benefit invoice ledger journal warehouse bin shipment carrier route campaign lead ' +
  'ticket asset license vendor contract audit policy supplier purchase requisition budget forecast device sensor ' +
  'reading alert incident release build deployment job task queue session event click impression segment cohort ' +
  'subscription plan coupon refund chargeback dispute account branch region territory quota target skill training ' +
  'course exam certificate document attachment comment review rating survey response question answer product sku ' +
  'category price discount tax currency rate transfer balance statement customer order payment address contact city'
).split(' ');
const SUFFIXES = [
  '',
  '',
  '',
  'history',
  'log',
  'snapshot',
  'archive',
  'daily',
  'map',
  'detail',
  'stats',
  'config',
  'staging',
  'v2',
];
const GENERIC_COLUMNS: [string, string][] = [
  ['created_at', 'timestamp without time zone'],
  ['updated_at', 'timestamp without time zone'],
  ['status', 'text'],
  ['name', 'text'],
  ['code', 'character varying(20)'],
  ['amount', 'numeric(12,2)'],
  ['description', 'text'],
  ['is_active', 'boolean'],
  ['priority', 'integer'],
  ['notes', 'text'],
  ['external_ref', 'text'],
  ['region', 'text'],
  ['owner_id', 'bigint'],
  ['score', 'double precision'],
  ['valid_from', 'date'],
  ['valid_to', 'date'],
  ['quantity', 'integer'],
  ['category', 'text'],
  ['source', 'text'],
  ['channel', 'text'],
];
const VALUES: Record<string, string[]> = {
  status: ['active', 'inactive', 'pending', 'closed', 'archived', 'open', 'failed'],
  region: ['north', 'south', 'east', 'west', 'emea', 'apac', 'latam'],
  category: ['standard', 'premium', 'basic', 'internal', 'external'],
  source: ['import', 'manual', 'api', 'batch'],
  channel: ['email', 'sms', 'web', 'phone', 'partner'],
};

/**
 * Words that make a real column name plausible in any business table (`name`, `city_name`,
 * `rating`, `year`, `email`): in `generic` mode only such real columns are copied into decoys.
 * Domain keys (`restaurant_id`, `citation_num`, `lake_name`) would not appear in an HR table.
 */
const GENERIC_WORDS = new Set(
  'name title year month day date time city state country region email phone address street zip code status type description rating score price amount total count number first last created updated start end'.split(
    ' ',
  ),
);

/** True when every word of `column` is a generic business word. */
export function isGenericColumn(column: string): boolean {
  const words = column
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return words.length > 0 && words.every((w) => GENERIC_WORDS.has(w));
}

/** One decoy table: its DDL statement and insert statement. */
export interface Decoy {
  name: string;
  sql: string;
}

/**
 * `count` decoy tables in `schema` (default `public`), avoiding the names in `taken`. About a third
 * carry 1–3 column names (and types) of `realColumns`, so names alone cannot tell them apart:
 * only generic ones (`city_name`, `rating`, `year`; see {@link isGenericColumn}) unless `hostile`,
 * which copies any real column, domain keys included (`restaurant_id` in an HR table).
 */
export function generateDecoys(
  count: number,
  options: {
    seed?: number;
    schema?: string;
    taken?: Iterable<string>;
    realColumns?: readonly [string, string][];
    hostile?: boolean;
  } = {},
): Decoy[] {
  const random = prng(options.seed ?? 5);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const taken = new Set([...(options.taken ?? [])].map((n) => n.toLowerCase()));
  const schema = options.schema ?? 'public';
  const real = (options.realColumns ?? []).filter(([name]) => options.hostile || isGenericColumn(name));
  const decoys: Decoy[] = [];
  let attempts = 0;
  while (decoys.length < count && attempts < count * 50) {
    attempts += 1;
    const entity = pick(ENTITIES);
    const parts = [pick(PREFIXES), entity];
    if (random() < 0.4) parts.push(pick(ENTITIES));
    const suffix = pick(SUFFIXES);
    if (suffix) parts.push(suffix);
    const name = parts.join('_');
    if (taken.has(name)) continue;
    taken.add(name);
    const columns: [string, string][] = [['id', 'bigint']];
    const other = pick(ENTITIES);
    if (other !== entity) columns.push([`${other}_id`, 'bigint']);
    const generic = [...GENERIC_COLUMNS].sort(() => random() - 0.5).slice(0, 3 + Math.floor(random() * 6));
    columns.push(...generic);
    if (real.length > 0 && random() < 0.35) {
      for (let k = 0, n = 1 + Math.floor(random() * 3); k < n; k += 1) {
        const column = pick(real);
        if (!columns.some(([c]) => c === column[0])) columns.push(column);
      }
    }
    const relation = `${quoteIdent(schema)}.${quoteIdent(name)}`;
    const ddl = `CREATE TABLE ${relation} (${columns.map(([c, t]) => `${quoteIdent(c)} ${t}`).join(', ')});`;
    const rows: string[] = [];
    const rowCount = 2 + Math.floor(random() * 5);
    for (let r = 0; r < rowCount; r += 1) {
      rows.push(
        `(${columns
          .map(([c, t]) => {
            if (c === 'id') return String(r + 1);
            const vocabulary = VALUES[c];
            if (vocabulary) return `'${pick(vocabulary)}'`;
            if (/int|numeric|double/.test(t)) return String(Math.floor(random() * 1000));
            if (t === 'boolean') return random() < 0.5 ? 'true' : 'false';
            if (/date|timestamp/.test(t))
              return `'2024-0${1 + Math.floor(random() * 9)}-1${Math.floor(random() * 9)}'`;
            return 'NULL';
          })
          .join(', ')})`,
      );
    }
    const insert = `INSERT INTO ${relation} VALUES ${rows.join(', ')};`;
    decoys.push({ name, sql: `${ddl}\n${insert}` });
  }
  return decoys;
}
