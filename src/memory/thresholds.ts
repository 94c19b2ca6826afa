/**
 * Similarity thresholds of reconciliation, per embedding model. Similarity is
 * 1 − cosine distance. At or above `high` a new fact is a NOOP (the same fact said again); between
 * `low` and `high` the model decides; below `low` it is added.
 */

/** The two thresholds. */
export interface SimilarityThresholds {
  /** Below: ADD without asking the model. Default 0.70. */
  low: number;
  /** At or above: NOOP. Default 0.95. */
  high: number;
}

/** Defaults for models without an entry (the v1 values). */
export const DEFAULT_THRESHOLDS: SimilarityThresholds = { low: 0.7, high: 0.95 };

/**
 * Parses a per-model table such as `all-minilm=0.70:0.95,nomic-embed-text=0.60:0.92` (model name
 * without tag matches any tag). Returns undefined for a malformed table.
 */
export function parseThresholdTable(text: string): Record<string, SimilarityThresholds> | undefined {
  const table: Record<string, SimilarityThresholds> = {};
  for (const entry of text
    .split(/[,;]/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const match = /^([^=\s]+)\s*=\s*([0-9.]+)\s*:\s*([0-9.]+)$/.exec(entry);
    if (!match) return undefined;
    const low = Number(match[2]);
    const high = Number(match[3]);
    if (!(low >= -1 && low <= high && high <= 1)) return undefined;
    table[match[1]!.toLowerCase()] = { low, high };
  }
  return table;
}

/** The thresholds for `model` from `table` (exact name, then the name without its tag), else the defaults. */
export function thresholdsFor(
  model: string,
  table: Record<string, SimilarityThresholds> = {},
  defaults: SimilarityThresholds = DEFAULT_THRESHOLDS,
): SimilarityThresholds {
  const name = model.toLowerCase();
  return (
    table[name] ?? table[name.replace(/:latest$/, '')] ?? table[name.split(':')[0]!] ?? table['*'] ?? defaults
  );
}
