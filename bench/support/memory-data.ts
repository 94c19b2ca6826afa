/**
 * The synthetic schema words and memory texts shared by `bench/pipeline-overhead.ts` and
 * `bench/search-recall.ts` (the second measures search on the first one's data).
 */

/** Words the generated table and column names are made of. */
export const WORDS = [
  'order',
  'customer',
  'invoice',
  'shipment',
  'refund',
  'region',
  'product',
  'margin',
  'churn',
  'visit',
] as const;

/** Name of generated table `i`, e.g. `t_007_shipment`. */
export const tableName = (i: number): string => `t_${String(i).padStart(3, '0')}_${WORDS[i % WORDS.length]}`;

/** Memory `i` for a schema of `tableCount` tables: a metric every third, otherwise a term. */
export function memoryText(i: number, tableCount: number): { kind: 'term' | 'metric'; text: string } {
  const w = WORDS[i % WORDS.length];
  const t = tableName(i % tableCount);
  return i % 3 === 0
    ? {
        kind: 'metric',
        text: `${w} score ${i} is the average of ${t} c${(i % 9) + 1} over the last ${(i % 12) + 1} months`,
      }
    : {
        kind: 'term',
        text: `a ${w} of type ${i} means a row of ${t} whose c${(i % 9) + 1} is above ${i % 1000}`,
      };
}
