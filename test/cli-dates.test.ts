/**
 * Every command flag that takes a plain date reads it with market-time's `isIsoDate`: a date of the right
 * shape that is no day of the calendar (February 30th) is refused with exit 2 and what was given, rather
 * than rolled into March or handed to the store.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from './helpers/build.js';

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'pitchain-cli-dates-'));
}, 300_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('date flags', () => {
  it.each([
    [
      'backtest',
      [
        'backtest',
        'examples/spy-short-put.ts',
        '--store',
        'data/sample',
        '--from',
        '2020-02-30',
        '--to',
        '2020-03-10',
      ],
    ],
    [
      'export',
      ['export', '--store', 'data/sample', '--table', 'splits', '--from', '2020-02-30', 'OUT/x.parquet'],
    ],
    [
      'mirror',
      [
        'mirror',
        '--url',
        'http://127.0.0.1:9',
        '--underlyings',
        'SPY',
        '--from',
        '2020-02-30',
        '--to',
        '2020-03-10',
        '--store',
        'OUT/store',
        '--dry-run',
      ],
    ],
  ])('%s refuses --from 2020-02-30 with exit 2, writing nothing', async (_, args) => {
    const result = await runCli(args.map((arg) => arg.replace('OUT', dir)));
    expect([result.code, result.stdout]).toEqual([2, '']);
    expect(result.stderr).toMatch(/--from .*'2020-02-30'/);
    expect(await readdir(dir)).toEqual([]);
  });
});
