import { describe, expect, it } from 'vitest';
import { withoutCommentLines } from '../../bench/lib.js';

// The cached bench stores are rebuilt when the digest of the store's writing code changes; what goes
// into that digest decides whether an edit costs most of an hour of rebuilding.
describe('withoutCommentLines', () => {
  const source = [
    '/**',
    ' * Writes the file.',
    ' */',
    'export function write(rows: number): number {',
    '  // Why: the reader wants whole pages.',
    '  return rows * 2; // trailing comment',
    '}',
  ].join('\n');

  it('leaves the digest unchanged when only a whole-line comment changes', () => {
    const reworded = source.replace('Writes the file.', 'Writes the whole file.').replace('Why:', 'Because:');
    expect(withoutCommentLines(reworded)).toBe(withoutCommentLines(source));
    expect(withoutCommentLines(source)).not.toContain('Writes');
  });

  it('changes with any code, a trailing comment or code after a comment on its line', () => {
    const base = withoutCommentLines(source);
    expect(withoutCommentLines(source.replace('rows * 2', 'rows * 3'))).not.toBe(base);
    expect(withoutCommentLines(source.replace('trailing comment', 'other'))).not.toBe(base);
    const after = withoutCommentLines(`/* a */ const x = 1;\n${source}`);
    expect(after.startsWith('const x = 1;')).toBe(true);
  });

  it('keeps lines that only look like comments inside code', () => {
    const code = "const glob = '/* not a comment';\nconst y = 2;";
    expect(withoutCommentLines(code)).toBe(code);
  });
});
