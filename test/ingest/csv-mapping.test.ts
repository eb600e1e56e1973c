import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IngestError, UsageError } from '../../src/errors.js';
import {
  csvMappingFormat,
  loadOptionMapping,
  parseOptionMapping,
} from '../../src/ingest/formats/csv-mapping.js';
import { formatNamed } from '../../src/ingest/formats/index.js';
import { stageFiles } from '../../src/ingest/ingest.js';
import { SqlSession } from '../../src/store/sql.js';
import { sharedPath, withData } from '../helpers/shared-data.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/ingest/${name}`, import.meta.url));
const at = (iso: string) => Date.parse(iso) / 1000;
const CHAIN = fixture('mapped_chain.csv');
const MAPPING = fixture('mapped_chain.mapping.json');

async function withSql<T>(run: (sql: SqlSession) => Promise<T>): Promise<T> {
  const sql = await SqlSession.open();
  try {
    return await run(sql);
  } finally {
    sql.close();
  }
}

describe('csv (option chains described by a mapping)', () => {
  it('is the registry entry csv', () => {
    expect(formatNamed('csv')).toBe(csvMappingFormat);
  });

  it('builds symbols from key columns, scales prices, reads quote times in the mapping zone', async () => {
    await withSql(async (sql) => {
      const result = await stageFiles(sql, [CHAIN], 'csv', { mapping: MAPPING, skipInvalid: true });
      expect(result.rejects).toEqual([
        { file: CHAIN, line: 6, reason: 'wrong type: CP "Straddle" is not one of Call, Put' },
      ]);
      expect(
        await sql.columns(
          `SELECT _line, option_symbol, underlying, session_date, quote_time, volume_time, bid, ask, bid_size, last,
                  volume, underlying_price, iv
           FROM option_quotes ORDER BY _line`,
        ),
      ).toEqual({
        names: [
          '_line',
          'option_symbol',
          'underlying',
          'session_date',
          'quote_time',
          'volume_time',
          'bid',
          'ask',
          'bid_size',
          'last',
          'volume',
          'underlying_price',
          'iv',
        ],
        columns: [
          [2, 3, 4, 5],
          // strike 500000 × 0.001; a Saturday expiration (2013-01-19) is written with the Friday
          ['SPY240419C00500000', 'SPY240419P00500000', 'SPY240419P00500000', 'QQQ130118C00070000'],
          ['SPY', 'SPY', 'SPY', 'QQQ'],
          ['2024-03-15', '2024-03-15', '2024-03-08', '2013-01-02'],
          // 14:45 in Chicago is 15:45 in New York on both sides of the 2024-03-10 DST change
          [
            at('2024-03-15T15:45:00-04:00'),
            at('2024-03-15T15:45:00-04:00'),
            at('2024-03-08T15:45:00-05:00'),
            at('2013-01-02T15:45:00-05:00'),
          ],
          // volumeTime "close": the session's close
          [
            at('2024-03-15T16:00:00-04:00'),
            at('2024-03-15T16:00:00-04:00'),
            at('2024-03-08T16:00:00-05:00'),
            at('2013-01-02T16:00:00-05:00'),
          ],
          // priceScale 100: prices are in cents
          [1.25, 10.25, 10.2, 2],
          [1.3, 10.4, 10.35, 2.1],
          [10, 5, 5, 1],
          [1.28, null, null, null],
          [1500, 0, 0, 0],
          [512.34, 512.34, 510, 69],
          [0.15, 0.16, 0.16, 0.2],
        ],
      });
    });
  });

  it('files OI with settled "same": from the row’s own session, published the next session 09:30 ET', async () => {
    await withSql(async (sql) => {
      await stageFiles(sql, [CHAIN], 'csv', { mapping: MAPPING, skipInvalid: true });
      expect(
        await sql.columns(
          'SELECT _line, settled_session, published_at, open_interest FROM open_interest ORDER BY _line',
        ),
      ).toEqual({
        names: ['_line', 'settled_session', 'published_at', 'open_interest'],
        columns: [
          [2, 3, 4, 5],
          ['2024-03-15', '2024-03-15', '2024-03-08', '2013-01-02'],
          [
            at('2024-03-18T09:30:00-04:00'),
            at('2024-03-18T09:30:00-04:00'),
            at('2024-03-11T09:30:00-04:00'),
            at('2013-01-03T09:30:00-05:00'),
          ],
          [20000, 15000, 15100, 5],
        ],
      });
    });
  });

  const SPXW = 'data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv';
  withData([SPXW]).it(
    're-describes the HistoricalOptionData L2 file: the same staged tables as the hod format',
    async () => {
      const file = sharedPath(SPXW);
      const staged = async (format: string, options: { mapping?: string }) =>
        withSql(async (sql) => {
          await stageFiles(sql, [file], format, options);
          return {
            quotes: await sql.columns('SELECT * FROM option_quotes ORDER BY _line'),
            oi: await sql.columns('SELECT * FROM open_interest ORDER BY _line'),
          };
        });
      const viaMapping = await staged('csv', { mapping: fixture('hod_l2.mapping.json') });
      expect(viaMapping.quotes.columns[0]).toHaveLength(14438);
      expect(viaMapping).toEqual(await staged('hod', {}));
    },
  );

  it('validates mappings with zod and names the problem', async () => {
    expect(() => parseOptionMapping({ bid: 'Bid' })).toThrow(UsageError);
    expect(() => parseOptionMapping({ optionSymbol: 'S', sessionDate: 'D', bidd: 'x' })).toThrow(/bidd/);
    expect(() => parseOptionMapping({ optionSymbol: 'S', sessionDate: 'D', quoteTime: '25:00' })).toThrow(
      /wall time/,
    );
    expect(parseOptionMapping({ optionSymbol: 'S', sessionDate: 'D' })).toMatchObject({
      quoteTime: '16:00',
      volumeTime: 'quote',
      timeZone: 'America/New_York',
      priceScale: 1,
    });
    await expect(loadOptionMapping(undefined)).rejects.toThrow('format csv needs --mapping <file.json>');
    await expect(loadOptionMapping('{"optionSymbol": "S", "sessionDate": "D"}')).resolves.toMatchObject({
      optionSymbol: 'S',
    });
  });

  it('refuses a mapping that names a column the file does not have', async () => {
    await withSql(async (sql) => {
      await expect(
        stageFiles(sql, [CHAIN], 'csv', {
          mapping: '{"optionSymbol": "Symbol", "sessionDate": "Date", "delimiter": ";"}',
        }),
      ).rejects.toThrow(new IngestError(CHAIN, 1, 'no column "Symbol" in the file'));
    });
  });
});

describe('loading a mapping', () => {
  it('reads and validates a mapping once per ingest, and again once its file changes', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-mapping-'));
    try {
      const file = path.join(dir, 'vendor.json');
      await fs.writeFile(
        file,
        JSON.stringify({ optionSymbol: 'Symbol', quoteTime: '16:00', sessionDate: 'Day' }),
      );
      const first = await loadOptionMapping(file);
      expect(await loadOptionMapping(file)).toBe(first);
      expect(await loadOptionMapping('optionsdx')).toBe(await loadOptionMapping('optionsdx'));
      await fs.writeFile(
        file,
        JSON.stringify({ optionSymbol: 'OSI', quoteTime: '15:45', sessionDate: 'Day' }),
      );
      expect(await loadOptionMapping(file)).toMatchObject({ optionSymbol: 'OSI', quoteTime: '15:45' });
      await fs.rm(file);
      await expect(loadOptionMapping(file)).rejects.toThrow(UsageError);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
