import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCycles, importEdges, upwardImports } from '../../scripts/import-cycles.js';
import { REPO_ROOT } from '../helpers/paths.js';

/**
 * Circles being taken apart elsewhere, named by a file each holds. Each entry must still match a circle
 * (remove it once the circle is gone); no other circle may appear.
 */
const KNOWN: string[] = [];

describe('import circles', () => {
  const cycles = importCycles(importEdges(join(REPO_ROOT, 'src')), REPO_ROOT);

  it('finds a circle, type-only or not, and tells them apart', () => {
    const edge = (from: string, to: string, typeOnly: boolean) => ({
      from: join(REPO_ROOT, from),
      to: join(REPO_ROOT, to),
      typeOnly,
    });
    const found = importCycles(
      [edge('a.ts', 'b.ts', false), edge('b.ts', 'a.ts', true), edge('b.ts', 'c.ts', false)],
      REPO_ROOT,
    );
    expect(found).toEqual([{ files: ['a.ts', 'b.ts'], runtime: false }]);
    const runtime = importCycles([edge('a.ts', 'b.ts', false), edge('b.ts', 'a.ts', false)], REPO_ROOT);
    expect(runtime).toEqual([{ files: ['a.ts', 'b.ts'], runtime: true }]);
  });

  it('reads the source: the generic endpoint contract imports nothing of the option core', () => {
    const types = join(REPO_ROOT, 'src/query/types.ts');
    const edges = importEdges(join(REPO_ROOT, 'src'));
    expect(edges.some((e) => e.from === types)).toBe(true);
    expect(edges.filter((e) => e.from === types && e.to.includes('/query/options/'))).toEqual([]);
  });

  it('has no circle among the source modules', () => {
    const unexpected = cycles.filter((cycle) => !KNOWN.some((file) => cycle.files.includes(file)));
    expect(unexpected).toEqual([]);
  });

  it('lists no circle that is gone', () => {
    const gone = KNOWN.filter((file) => !cycles.some((cycle) => cycle.files.includes(file)));
    expect(gone).toEqual([]);
  });

  it('imports only down the layers of ARCHITECTURE.md', () => {
    const src = join(REPO_ROOT, 'src');
    expect(upwardImports(importEdges(src), src, REPO_ROOT)).toEqual([]);
    const edge = (from: string, to: string) => ({ from: join(src, from), to: join(src, to), typeOnly: true });
    expect(
      upwardImports(
        [
          edge('query/types.ts', 'service/modes.ts'),
          edge('library/view.ts', 'query/types.ts'),
          edge('x/a.ts', 'occ/index.ts'),
        ],
        src,
        REPO_ROOT,
      ),
    ).toEqual(['src/query/types.ts → src/service/modes.ts', 'src/x/a.ts → src/occ/index.ts']);
  });
});
