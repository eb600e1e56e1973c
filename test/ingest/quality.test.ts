/**
 * The data-quality summary of each ingested file: counted at ingest, printed by `pitchain ingest`, kept in
 * the manifest beside the file's provenance and shown by `pitchain info`.
 */
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stageFiles } from '../../src/ingest/ingest.js';
import { readManifest } from '../../src/store/manifest.js';
import { SqlSession } from '../../src/store/sql.js';
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
      const info = await cli('info', '--store', store);
      expect(info.code, info.stderr).toBe(0);
      expect(info.stdout).toContain(`data quality (per source, as its ingest measured it):\n${table}\n`);
    });
  });
});
