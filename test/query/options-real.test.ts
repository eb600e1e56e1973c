import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { commitStaged, stageFiles } from '../../src/ingest/ingest.js';
import { chain } from '../../src/query/endpoints/options-chain.js';
import { StoreReader } from '../../src/store/store.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { sharedPath, withData } from '../helpers/shared-data.js';
import { context, dated, et } from './helpers/options-market.js';
import { columns } from './helpers/shape.js';

const SPXW = 'data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv';
const FILE = sharedPath(SPXW);
const { afterAll, beforeAll, describe, it } = withData([SPXW]);

type FileRow = {
  symbol: string;
  date: string;
  bid: number;
  ask: number;
  underlyingLast: number;
  openInterest: number;
};

/** The file's rows by ISO date (columns read by header name; no field of this file is quoted). */
function readFileRows(): Map<string, FileRow[]> {
  const [header, ...lines] = readFileSync(FILE, 'utf8')
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/);
  const names = header!.split(',').map((name) => name.trim().toLowerCase());
  const at = (cells: string[], name: string) => cells[names.indexOf(name)]!;
  const byDate = new Map<string, FileRow[]>();
  for (const line of lines) {
    const cells = line.split(',');
    const [month, day, year] = at(cells, 'quotedate').split('/');
    const date = `${year}-${month}-${day}`;
    const row = {
      symbol: at(cells, 'optionroot'),
      date,
      bid: Number(at(cells, 'bid')),
      ask: Number(at(cells, 'ask')),
      underlyingLast: Number(at(cells, 'underlying_last')),
      openInterest: Number(at(cells, 'openinterest')),
    };
    byDate.set(date, [...(byDate.get(date) ?? []), row]);
  }
  return byDate;
}

let dir: string;
let reader: StoreReader;
let fileRows: Map<string, FileRow[]>;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-options-real-'));
  const tx = await WriteTransaction.begin(dir, { create: true });
  const staged = await stageFiles(tx.sql, [FILE], 'hod');
  await commitStaged(tx, staged);
  reader = await StoreReader.open(dir);
  fileRows = readFileRows();
});
afterAll(async () => {
  reader?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('a dated chain over a real HistoricalOptionData file', () => {
  it.each(['2018-01-02', '2018-02-05', '2018-02-28'])(
    'prints on date=%s the vendor row of that date: its OI (settled the session before), no Greeks, updated 16:00 ET',
    async (session) => {
      const result = await chain.run(
        context(reader, {
          now: '2018-03-05 12:00',
          asOf: dated(session),
          path: { underlying: 'SPX' },
          query: { expiration: 'all' },
        }),
      );
      const c = columns(result);
      const expected = new Map(fileRows.get(session)!.map((row) => [row.symbol, row]));
      const symbols = c['optionSymbol'] as string[];
      expect([...symbols].sort()).toEqual([...expected.keys()].sort());
      expect(c['openInterest']).toEqual(symbols.map((symbol) => expected.get(symbol)!.openInterest));
      expect(c['bid']).toEqual(symbols.map((symbol) => expected.get(symbol)!.bid));
      expect(c['ask']).toEqual(symbols.map((symbol) => expected.get(symbol)!.ask));
      expect(c['underlyingPrice']).toEqual(symbols.map((symbol) => expected.get(symbol)!.underlyingLast));
      expect(new Set(c['updated'])).toEqual(new Set([et(`${session} 16:00`)]));
      for (const key of ['iv', 'delta', 'gamma', 'theta', 'vega']) {
        expect(new Set(c[key])).toEqual(new Set([null]));
      }
    },
  );
});
