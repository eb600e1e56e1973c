/** Where the tests look for shared data, and what `withData` hands back. */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './paths.js';
import { inCi, withData } from './shared-data.js';
import { candidatePaths, findShared, SHARED_FILES, sharedFolder } from './shared-files.js';

const COMMITTED = 'data/options/hod_L3_A_2016-01-05.csv';

describe('shared data lookup', () => {
  it('looks in the committed fixtures, then the named folder (else ../shared), then the downloads', () => {
    const env = { PITCHAIN_SHARED: '/data/pitchain-shared' };
    expect(candidatePaths('data/options/x.csv', env)).toEqual([
      join(REPO_ROOT, 'test/fixtures/shared/data/options/x.csv'),
      '/data/pitchain-shared/data/options/x.csv',
      join(REPO_ROOT, 'test/fixtures/downloaded/data/options/x.csv'),
    ]);
    // A relative folder is the checkout's; with the variable unset, ../shared counts only if it exists.
    expect(sharedFolder({ PITCHAIN_SHARED: '../elsewhere' })).toBe(resolve(REPO_ROOT, '../elsewhere'));
    const beside = resolve(REPO_ROOT, '../shared');
    expect(sharedFolder({})).toBe(existsSync(beside) ? beside : undefined);
    expect(sharedFolder({ PITCHAIN_SHARED: '' })).toBe(sharedFolder({}));
  });

  it('finds a committed file wherever the shared folder is, and refuses a name it does not know', () => {
    expect(SHARED_FILES[COMMITTED]?.committed).toBe(true);
    expect(findShared(COMMITTED, { PITCHAIN_SHARED: '/nonexistent' })).toBe(
      join(REPO_ROOT, 'test/fixtures/shared', COMMITTED),
    );
    expect(
      findShared('data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv', { PITCHAIN_SHARED: '/nonexistent' }),
    ).toSatisfy((found) => found === undefined || String(found).includes('test/fixtures/downloaded'));
    expect(() => findShared('data/options/nope.csv')).toThrow(
      'data/options/nope.csv is not a known shared file',
    );
  });

  it("hands back vitest's own functions when every file is here", () => {
    const gated = withData([COMMITTED]);
    expect(gated.missing).toEqual([]);
    expect(gated.it).toBe(it);
    expect(gated.describe).toBe(describe);
  });

  it('reads CI as set unless it is empty, 0 or false', () => {
    expect([{ CI: 'true' }, { CI: '1' }, {}, { CI: '' }, { CI: '0' }, { CI: 'false' }].map(inCi)).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
  });
});
