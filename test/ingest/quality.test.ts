/**
 * The data-quality summary of each ingested file: counted at ingest, printed by `pitchain ingest`, kept in
 * the manifest beside the file's provenance and shown by `pitchain info`.
 */
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stageFiles } from '../../src/ingest/ingest.js';
import { measureQuality, measureStoredQuality } from '../../src/ingest/quality.js';
import { readManifest } from '../../src/store/manifest.js';
import { SqlSession } from '../../src/store/sql.js';
import { StoreReader } from '../../src/store/store.js';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { REPO_ROOT } from '../helpers/paths.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/ingest/hod_l2_rejects.csv');
const [HEADER, ROW] = readFileSync(FIXTURE, 'utf8').split('\r\n') as [string, string];

/** The fixture's good row as another strike, with cells replaced by header position. */
function row(strike: number, changes: Record<number, string> = {}): string {
  const cells = ROW.split(',');
  const symbol = `SPXW180131C0${strike}000`;
  Object.assign(cells, { 3: symbol, 19: symbol, 8: String(strike) }, changes);
  return cells.join(',');
}

/** One row of each kind the summary counts. */
const LINES = [
  row(2700), // a good quote on 2018-01-02
  row(2700, { 1: '2710', 7: '01/03/2018' }), // stale: the same quote the next session, the index moved
  row(2705, { 10: '0', 11: '0', 13: '' }), // zero, and no open interest
  row(2710, { 10: '0', 11: '1.5' }), // one-sided
  row(2715, { 10: '1.51', 11: '1.50' }), // crossed by a cent (kept)
  row(2720, { 10: '1.5', 11: '1.5' }), // locked, counted as crossed
];
const EXPECTED = {
  rows: 6,
  sessions: 2,
  contracts: 5,
  zero: 1,
  oneSided: 1,
  crossed: 2,
  stale: 1,
  missingOpenInterest: 1,
  greeksUnits: 'none',
};

let dir: string;
let file: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-quality-'));
  file = path.join(dir, 'kinds.csv');
  await fs.writeFile(file, `${[HEADER, ...LINES].join('\r\n')}\r\n`);
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the data-quality summary', () => {
  it('counts each kind of quote a backtest cannot take as a price, per file', async () => {
    const sql = await SqlSession.open();
    try {
      const staged = await stageFiles(sql, [file], 'hod', { greeksUnits: 'none' });
      expect(staged.files[0]!.quality).toEqual(EXPECTED);
    } finally {
      sql.close();
    }
  });

  it('counts a contract on a session as missing open interest unless a figure was published that ET date', async () => {
    const sql = await SqlSession.open();
    try {
      // Only the columns the summary reads. Two-sided, distinct quotes, so no other count is touched.
      await sql.run(
        `CREATE TABLE q (option_symbol VARCHAR, session_date DATE, quote_time TIMESTAMPTZ, bid DECIMAL(12,2),
           ask DECIMAL(12,2), bid_size INTEGER, ask_size INTEGER, underlying_price DECIMAL(14,4));
         CREATE TABLE oi (option_symbol VARCHAR, published_at TIMESTAMPTZ);
         INSERT INTO q VALUES
           ('A', '2024-03-11', '2024-03-11 14:00:00+00', 1.0, 1.1, 1, 1, 100),
           ('A', '2024-03-11', '2024-03-11 15:00:00+00', 1.2, 1.3, 1, 1, 101),
           ('B', '2024-03-11', '2024-03-11 14:00:00+00', 1.0, 1.1, 1, 1, 100),
           ('C', '2024-03-08', '2024-03-08 21:00:00+00', 1.0, 1.1, 1, 1, 100),
           ('C', '2024-03-11', '2024-03-11 20:00:00+00', 1.2, 1.3, 1, 1, 101),
           ('D', '2024-03-11', '2024-03-11 20:00:00+00', 1.0, 1.1, 1, 1, 100);
         INSERT INTO oi VALUES
           -- 00:30 EDT on the 11th (the 11th in UTC too): A has its figure, for both snapshots.
           ('A', '2024-03-11 04:30:00+00'),
           -- 23:30 EDT on the 10th, though the 11th in UTC: B has none for the 11th.
           ('B', '2024-03-11 03:30:00+00'),
           -- C's figure is of the 8th only (09:30 EST); D's comes from another contract's row only.
           ('C', '2024-03-08 14:30:00+00'),
           ('E', '2024-03-11 13:30:00+00');`,
      );
      const quality = await measureQuality(
        sql,
        { option_quotes: 'q', open_interest: 'oi', contracts: 'x', stock_bars: 'x', splits: 'x' },
        { rows: 6, sessions: 2 },
      );
      // B on the 11th, C on the 11th and D on the 11th: three (contract, session) pairs, not four rows.
      expect(quality).toMatchObject({ contracts: 4, zero: 0, oneSided: 0, crossed: 0, stale: 0 });
      expect(quality.missingOpenInterest).toBe(3);
    } finally {
      sql.close();
    }
  });

  describe('pitchain ingest and info', () => {
    const cli = (...args: string[]) => runCli(args, { timeoutMs: 120_000 });
    beforeAll(ensureBuilt, 180_000);

    it('prints it after the ingest, keeps it in the manifest and shows it in info', async () => {
      const store = path.join(dir, 'store');
      const ingest = await cli('ingest', '--store', store, '--format', 'hod', '--greeks-units', 'none', file);
      expect(ingest.code, ingest.stderr).toBe(0);
      const table = [
        '  file       rows  sessions  contracts  zero  one-sided  crossed  stale  no OI  Greek units',
        '  kinds.csv     6         2          5     1          1        2      1      1  none',
      ].join('\n');
      expect(ingest.stdout).toContain(
        `data quality (quotes the store keeps as sent, which a backtest must not take as prices):\n${table}\n`,
      );
      const manifest = await readManifest(store);
      expect(manifest!.provenance[0]!.quality).toEqual(EXPECTED);
      // Measured again from the store's rows (as info does for a source that recorded none): the same counts.
      const reader = await StoreReader.open(store, { threads: 1 });
      try {
        expect(await measureStoredQuality(reader.sql)).toEqual({ ...EXPECTED, greeksUnits: null });
      } finally {
        reader.close();
      }
      const info = await cli('info', '--store', store);
      expect(info.code, info.stderr).toBe(0);
      expect(info.stdout).toContain(`data quality (per source, as its ingest measured it):\n${table}\n`);
    });
  });
});
