/**
 * A no-data answer names the scope's nearest sessions with data on either side (`noDataAround`). They are
 * looked for in widening spans of days, not by one statement over every file: these tests hold the search
 * to that one statement's answer, for every kind of scope, from sessions next to data, across gaps of
 * every width the spans grow through, and from outside the data on either side; from the session column
 * files too, with no statement, for an underlying and a root.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sessionEndSeconds } from '../../../src/pit/as-of.js';
import { noDataAround } from '../../../src/query/options/no-data-around.js';
import type { Scope } from '../../../src/query/options/scope.js';
import { StoreCache } from '../../../src/store/cache.js';
import { repairDerivedFiles } from '../../../src/store/session-columns-repair.js';
import { StoreReader } from '../../../src/store/store.js';
import { copySampleStore } from '../../helpers/paths.js';

let reader: StoreReader;
beforeAll(async () => {
  reader = await StoreReader.open('data/sample', { threads: 1 });
});
afterAll(() => reader.close());

/** The rule: the latest session with data before `first` and the earliest after `last`, in one statement. */
async function byOneStatement(scope: Scope, first: string, last: string) {
  const params: Record<string, string> = { underlying: scope.underlying, first, last };
  let where = 'underlying = $underlying';
  if ('optionSymbol' in scope) {
    where += ' AND option_symbol = $symbol';
    params['symbol'] = scope.optionSymbol;
  } else if (scope.root !== undefined) {
    where += ' AND option_symbol IN (SELECT option_symbol FROM contracts WHERE root = $root)';
    params['root'] = scope.root;
  }
  const [row] = await reader.sql.all<{ previous: string | null; next: string | null }>(
    `SELECT CAST(max(session_date) FILTER (WHERE session_date < CAST($first AS DATE)) AS VARCHAR) AS previous,
            CAST(min(session_date) FILTER (WHERE session_date > CAST($last AS DATE)) AS VARCHAR) AS next
     FROM option_quotes WHERE ${where}`,
    params,
  );
  return {
    kind: 'no_data',
    nextTime: row?.next == null ? null : sessionEndSeconds(row.next),
    prevTime: row?.previous == null ? null : sessionEndSeconds(row.previous),
  };
}

describe('the nearest sessions with data around a no-data answer', () => {
  it('are the ones a statement over every file finds, for every scope, near and far from the data', async () => {
    // Contracts whose quotes end early in the store's two years: asked later, their last session is
    // days, months or a year behind.
    const { columns } = await reader.sql.typedColumns(
      `SELECT option_symbol FROM option_quotes WHERE underlying = 'SPY'
       GROUP BY option_symbol HAVING max(session_date) < DATE '2019-03-01' ORDER BY option_symbol LIMIT 2`,
    );
    const early = columns[0] as string[];
    expect(early).toHaveLength(2);
    // The shipped sample has no session column files: every look is a statement.
    const cache = new StoreCache(() => reader.dataVersion);
    const scopes: Scope[] = [
      { underlying: 'SPY' },
      { underlying: 'SPX', root: 'SPXW' },
      { underlying: 'SPX', root: 'SPX' },
      { underlying: 'QQQ' },
      ...early.map((optionSymbol) => ({ optionSymbol, underlying: 'SPY' })),
      { optionSymbol: 'SPY190118C09990000', underlying: 'SPY' },
    ];
    // Before the data (far and near), its first and last sessions, inside it, after it (near and far);
    // ranges as the quotes endpoint asks them.
    const around: [string, string][] = [
      ['2010-06-01', '2010-06-01'],
      ['2018-12-20', '2018-12-31'],
      ['2019-01-02', '2019-01-02'],
      ['2019-03-15', '2019-03-15'],
      ['2019-06-03', '2019-09-30'],
      ['2020-02-14', '2020-02-14'],
      ['2020-12-31', '2020-12-31'],
      ['2021-01-11', '2021-01-11'],
      ['2026-03-02', '2026-03-02'],
    ];
    for (const scope of scopes) {
      for (const [first, last] of around) {
        expect(
          await noDataAround(reader.sql, cache, scope, first, last),
          `${JSON.stringify(scope)} ${first}`,
        ).toEqual(await byOneStatement(scope, first, last));
      }
    }
  }, 60_000);
});

describe('the nearest sessions with data, from the session column files', () => {
  let dir: string;
  let withFiles: StoreReader;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-no-data-around-'));
    await copySampleStore(dir);
    await repairDerivedFiles(dir);
    withFiles = await StoreReader.open(dir, { threads: 1 });
  }, 120_000);
  afterAll(async () => {
    withFiles?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it("are the statement's for an underlying and a root, found with no statement", async () => {
    const cache = new StoreCache(() => withFiles.dataVersion);
    // SPXW has no monthly: its front month is no data on every session, and its nearest are next to it.
    const scopes: Scope[] = [
      { underlying: 'SPY' },
      { underlying: 'SPX', root: 'SPXW' },
      { underlying: 'SPX', root: 'SPX' },
      { underlying: 'SPX', root: 'SPXQ' },
      { underlying: 'AAPL' },
    ];
    const around: [string, string][] = [
      ['2010-06-01', '2010-06-01'],
      ['2019-01-02', '2019-01-02'],
      ['2019-03-15', '2019-03-15'],
      ['2019-06-03', '2019-09-30'],
      ['2020-02-14', '2020-02-14'],
      ['2020-12-31', '2020-12-31'],
      ['2026-03-02', '2026-03-02'],
    ];
    for (const scope of scopes) {
      for (const [first, last] of around) {
        const statements = vi.spyOn(withFiles.sql, 'value');
        try {
          expect(
            await noDataAround(withFiles.sql, cache, scope, first, last),
            `${JSON.stringify(scope)} ${first}`,
          ).toEqual(await byOneStatement(scope, first, last));
          expect(statements.mock.calls.length, `${JSON.stringify(scope)} ${first}`).toBe(0);
        } finally {
          statements.mockRestore();
        }
      }
    }
  }, 60_000);
});
