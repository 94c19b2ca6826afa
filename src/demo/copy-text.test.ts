import { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { inMemoryPgliteOptions } from '../../test/support/pglite-template.js';
import { copyTextField, toCopyText } from './copy-text.js';

describe('COPY text format', () => {
  it('escapes the characters COPY treats specially', () => {
    expect(copyTextField('a\tb\nc\rd\\e')).toBe('a\\tb\\nc\\rd\\\\e');
    expect(copyTextField(null)).toBe('\\N');
    expect(copyTextField(12)).toBe('12');
    expect(copyTextField('\\N')).toBe('\\\\N');
    expect(
      toCopyText([
        [1, 'x'],
        [2, null],
      ]),
    ).toBe('1\tx\n2\t\\N\n');
    expect(toCopyText([])).toBe('');
  });

  it('round-trips hostile strings through a real COPY', async () => {
    const db = new PGlite(inMemoryPgliteOptions());
    try {
      await db.exec('CREATE TABLE t (id int, s text)');
      const values = [
        "O'Brien",
        'tab\there',
        'line\nbreak',
        'back\\slash',
        '\\N',
        'crlf\r\n',
        'São Paulo ✓',
        '',
        ' ',
      ];
      const rows = values.map((s, i) => [i, s] as const);
      await db.query(`COPY t FROM '/dev/blob'`, [], { blob: new Blob([toCopyText([...rows, [99, null]])]) });
      const back = await db.query<{ id: number; s: string | null }>('SELECT id, s FROM t ORDER BY id');
      expect(back.rows).toEqual([...values.map((s, id) => ({ id, s })), { id: 99, s: null }]);
    } finally {
      await db.close();
    }
  });
});
