import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './paths.js';
import { SLOWEST_FIRST, slowestFirst } from './slowest-first.js';

describe('the slowest test files first', () => {
  it('puts the named files ahead in the named order, and keeps the order of the others', () => {
    const files = ['a', 'slow2', 'b', 'slow1', 'c'];
    expect(slowestFirst(files, (f) => f, ['slow1', 'slow2', 'gone'])).toEqual([
      'slow1',
      'slow2',
      'a',
      'b',
      'c',
    ]);
  });

  it('names only test files that exist, each once', () => {
    expect(SLOWEST_FIRST.filter((file) => !existsSync(join(REPO_ROOT, file)))).toEqual([]);
    expect(new Set(SLOWEST_FIRST).size).toBe(SLOWEST_FIRST.length);
    expect(SLOWEST_FIRST.filter((file) => !file.endsWith('.test.ts'))).toEqual([]);
  });
});
