import { describe, expect, it } from 'vitest';
import { foldValue, valueVariants } from './empty-check.js';
import { looksEmpty } from './generate.js';

describe('value variants for the empty-result check', () => {
  it('folds case, accents and whitespace', () => {
    expect(foldValue('  São   Paulo ')).toBe('sao paulo');
    expect(valueVariants('paris', ['Paris', 'Lyon'])).toEqual(['Paris']);
    expect(valueVariants('Sao Paulo', ['São Paulo', 'Paris'])).toEqual(['São Paulo']);
    expect(valueVariants('new  york', ['New York'])).toEqual(['New York']);
  });
  it('accepts a near spelling of a longer value, not of a short one, and nothing when the value is stored', () => {
    expect(valueVariants('Berlinn', ['Berlin', 'Bern'])).toEqual(['Berlin']);
    expect(valueVariants('abc', ['abd'])).toEqual([]);
    expect(valueVariants('Paris', ['Paris', 'paris'])).toEqual([]);
    expect(valueVariants('Atlantis', ['Paris', 'Lyon'])).toEqual([]);
  });
  it('counts no rows, and one aggregate row of NULL or zero, as empty', () => {
    const base = { columns: [], truncated: false, durationMs: 0 };
    expect(looksEmpty({ ...base, rows: [], rowCount: 0 })).toBe(true);
    expect(looksEmpty({ ...base, rows: [[null]], rowCount: 1 })).toBe(true);
    expect(looksEmpty({ ...base, rows: [['0']], rowCount: 1 })).toBe(true);
    expect(looksEmpty({ ...base, rows: [['3']], rowCount: 1 })).toBe(false);
    expect(looksEmpty({ ...base, rows: [], rowCount: 0, truncated: true })).toBe(false);
  });
});
