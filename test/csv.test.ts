import { describe, expect, it } from 'vitest';
import { csv } from '../src/backtest/report-files.js';
import { csvField } from '../src/csv.js';

describe('csvField', () => {
  it('quotes a cell only when it holds a quote, a comma or a line break, doubling its quotes', () => {
    expect(['plain', '', '1.5', 'a,b', 'say "hi"', 'two\nlines', 'cr\rhere', '"'].map(csvField)).toEqual([
      'plain',
      '',
      '1.5',
      '"a,b"',
      '"say ""hi"""',
      '"two\nlines"',
      '"cr\rhere"',
      '""""',
    ]);
  });

  it('is the rule the report files write by', () => {
    expect(csv(['name', 'note'], [['a,b', 'x "y"']])).toBe('name,note\n"a,b","x ""y"""\n');
  });
});
