/** CSV export of the web UI (issue 10 item 9, issue 14): formula neutralising, NULL vs ''. */
import { describe, expect, it } from 'vitest';
import { csvField, toCsv } from '../web/src/csv.js';

describe('web CSV export', () => {
  it('quote-prefixes every cell a spreadsheet would read as a formula', () => {
    expect(csvField('=HYPERLINK("http://evil.example","x")')).toBe(
      `"'=HYPERLINK(""http://evil.example"",""x"")"`,
    );
    expect(csvField('+1+2')).toBe("'+1+2");
    expect(csvField('-2+3')).toBe("'-2+3");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('\tcmd')).toBe("'\tcmd");
    expect(csvField('\rcmd')).toBe(`"'\rcmd"`);
    expect(csvField('a=b')).toBe('a=b');
  });

  it('keeps NULL (empty, unquoted) apart from the empty string ("")', () => {
    expect(csvField(null)).toBe('');
    expect(csvField('')).toBe('""');
    expect(csvField('NULL')).toBe('NULL');
    const doc = toCsv(
      [{ name: 'a' }, { name: 'b' }],
      [
        [null, ''],
        ['x', null],
      ],
    );
    expect(doc).toBe('a,b\r\n,""\r\nx,');
  });

  it('writes numbers unchanged, negative ones too, in numeric columns only', () => {
    expect(csvField(-12.5)).toBe('-12.5');
    expect(csvField('-9223372036854775808', true)).toBe('-9223372036854775808');
    expect(csvField('-9223372036854775808', false)).toBe("'-9223372036854775808");
    expect(csvField('-1+1', true)).toBe("'-1+1");
  });

  it('quotes commas, quotes and newlines, and writes JSON values as their text', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('ok\n6 | forged')).toBe('"ok\n6 | forged"');
    expect(csvField({ k: [1, null] })).toBe('"{""k"":[1,null]}"');
    expect(csvField('null')).toBe('null');
    expect(toCsv([{ name: '=x' }], [])).toBe("'=x");
  });
});
