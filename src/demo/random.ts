/**
 * A small seeded pseudo-random generator for the demo data. Only integer and exact IEEE operations
 * (no Math.random, no Math.log/pow/exp), so the same seed gives bit-identical data on every platform
 * and Node version.
 */

/** A deterministic random source; all draws come from one 32-bit mulberry32 state. */
export interface Random {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** True with probability `p` (0..1). */
  chance(p: number): boolean;
  /** One element of a non-empty array, uniformly. */
  pick<T>(items: readonly T[]): T;
  /** One element of `items`, chosen with the matching relative (non-negative) `weights`. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T;
  /** A new array with the elements of `items` in random order (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[];
}

/**
 * Creates a mulberry32 generator (Tommy Ettinger's public-domain 32-bit PRNG).
 * @param seed any integer; only its low 32 bits are used.
 */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => {
    if (items.length === 0) throw new RangeError('pick() needs a non-empty array');
    return items[int(0, items.length - 1)] as T;
  };
  const weighted = <T>(items: readonly T[], weights: readonly number[]): T => {
    let total = 0;
    for (const w of weights) total += w;
    let r = next() * total;
    for (let i = 0; i < items.length; i += 1) {
      r -= weights[i] ?? 0;
      if (r < 0) return items[i] as T;
    }
    return items[items.length - 1] as T;
  };
  const shuffle = <T>(items: readonly T[]): T[] => {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i -= 1) {
      const j = int(0, i);
      const tmp = out[i] as T;
      out[i] = out[j] as T;
      out[j] = tmp;
    }
    return out;
  };
  return { next, int, chance: (p) => next() < p, pick, weighted, shuffle };
}

/**
 * A sampler over a fixed list of weights, O(log n) per draw via a cumulative table and binary
 * search. Use it for large lists (customers, days) drawn from many times.
 */
export function createWeightedSampler(weights: readonly number[]): (random: Random) => number {
  const cumulative: number[] = [];
  let total = 0;
  for (const w of weights) {
    total += w;
    cumulative.push(total);
  }
  return (random) => {
    const r = random.next() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cumulative[mid] as number) > r) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
}
