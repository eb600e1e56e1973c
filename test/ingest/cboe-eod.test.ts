import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestError } from '../../src/errors.js';
import { cboeEodFormat } from '../../src/ingest/formats/cboe-eod.js';
import { formatNamed } from '../../src/ingest/formats/index.js';
import { stageFiles } from '../../src/ingest/ingest.js';
import { SqlSession } from '../../src/store/sql.js';
import { sharedPath } from '../helpers/shared-data.js';

const VIX = sharedPath('data/options/cboe_datashop_VIX_2016-06-01.csv');
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/ingest/${name}`, import.meta.url));
const at = (iso: string) => Date.parse(iso) / 1000;

const SNAPSHOT_SQL = `SELECT quote_time, bid, ask, bid_size, ask_size, last, volume, volume_time, underlying_price, iv, delta
  FROM option_quotes WHERE option_symbol = $1 ORDER BY quote_time`;

describe('cboe-eod (Cboe DataShop Option EOD Summary)', () => {
  let sql: SqlSession;
  beforeAll(async () => {
    sql = await SqlSession.open();
    await stageFiles(sql, [VIX], 'cboe-eod');
  });
  afterAll(() => sql.close());

  it('is the registry entry cboe-eod', () => {
    expect(formatNamed('cboe-eod')).toBe(cboeEodFormat);
  });

  it('stages two snapshots per row and one OI per row, for the underlying VIX (roots VIX and BVZ)', async () => {
    expect(
      await sql.all(
        `SELECT underlying, count(*) AS quotes, count(DISTINCT option_symbol) AS contracts,
                count(DISTINCT _line) AS lines, array_sort(list(DISTINCT regexp_extract(option_symbol, '^[A-Z]+'))) AS roots
         FROM option_quotes GROUP BY underlying`,
      ),
    ).toEqual([{ underlying: 'VIX', quotes: 1764, contracts: 882, lines: 882, roots: ['BVZ', 'VIX'] }]);
    expect(await sql.value('SELECT count(*) FROM open_interest')).toBe(882);
  });

  it('stamps 15:45 and the 16:15 index close, with the full-session volume known at the close on both', async () => {
    const close = at('2016-06-01T16:15:00-04:00');
    expect(await sql.all(SNAPSHOT_SQL, ['VIX160608C00016000'])).toEqual([
      {
        quote_time: at('2016-06-01T15:45:00-04:00'),
        bid: 0.2,
        ask: 0.3,
        bid_size: 1,
        ask_size: 6074,
        last: null,
        volume: 5127,
        volume_time: close,
        underlying_price: 14.575,
        iv: null,
        delta: null,
      },
      {
        quote_time: close,
        bid: 0.2,
        ask: 0.25,
        bid_size: 0,
        ask_size: 0,
        last: 0.25,
        volume: 5127,
        volume_time: close,
        underlying_price: 14.65,
        iv: null,
        delta: null,
      },
    ]);
  });

  it('files open_interest as start-of-day OI: settled 2016-05-31, published 09:30 ET on 2016-06-01', async () => {
    expect(
      await sql.all(
        `SELECT underlying, settled_session, published_at, open_interest, _line FROM open_interest
         WHERE option_symbol = 'VIX160608C00016000'`,
      ),
    ).toEqual([
      {
        underlying: 'VIX',
        settled_session: '2016-05-31',
        published_at: at('2016-06-01T09:30:00-04:00'),
        open_interest: 6782,
        _line: 100,
      },
    ]);
  });
});

describe('cboe-eod edge cases', () => {
  let sql: SqlSession;
  let rejects: readonly unknown[];
  beforeAll(async () => {
    sql = await SqlSession.open();
    ({ rejects } = await stageFiles(sql, [fixture('cboe_eod_calcs.csv')], 'cboe-eod', { skipInvalid: true }));
  });
  afterAll(() => sql.close());

  it('uses 12:45 ET and the early close on an early-close day (13:15 index, 13:00 equity)', async () => {
    expect(
      await sql.columns(
        `SELECT option_symbol, underlying, quote_time, volume_time, last, underlying_price, iv, delta, gamma, theta, vega
         FROM option_quotes ORDER BY _line, quote_time`,
      ),
    ).toEqual({
      names: [
        'option_symbol',
        'underlying',
        'quote_time',
        'volume_time',
        'last',
        'underlying_price',
        'iv',
        'delta',
        'gamma',
        'theta',
        'vega',
      ],
      columns: [
        // a Saturday expiration (2015-12-19) is written with the Friday
        ['SPXW151127C02100000', 'SPXW151127C02100000', 'AAPL151218P00120000', 'AAPL151218P00120000'],
        ['SPX', 'SPX', 'AAPL', 'AAPL'],
        [
          at('2015-11-27T12:45:00-05:00'),
          at('2015-11-27T13:15:00-05:00'),
          at('2015-11-27T12:45:00-05:00'),
          at('2015-11-27T13:00:00-05:00'),
        ],
        [
          at('2015-11-27T13:15:00-05:00'),
          at('2015-11-27T13:15:00-05:00'),
          at('2015-11-27T13:00:00-05:00'),
          at('2015-11-27T13:00:00-05:00'),
        ],
        // close is the last only on the end-of-day row and only when the contract traded
        [null, 1.5, null, null],
        // the mid of the underlying's bid/ask; NULL when either side is 0
        [2089.2, 2090.1, 117.81, null],
        // the Calcs columns go to the 15:45 row
        [0.12, null, 0.25, null],
        [0.45, null, -0.35, null],
        [0.01, null, 0.04, null],
        [-5.1, null, -0.05, null],
        [0.3, null, 0.12, null],
      ],
    });
  });

  it('settles OI after a holiday from the session before it (Thanksgiving 2015-11-26)', async () => {
    expect(await sql.all('SELECT DISTINCT settled_session, published_at FROM open_interest')).toEqual([
      { settled_session: '2015-11-25', published_at: at('2015-11-27T09:30:00-05:00') },
    ]);
  });

  it('rejects an unknown option_type with its line', () => {
    expect(rejects).toEqual([
      { file: fixture('cboe_eod_calcs.csv'), line: 4, reason: 'wrong type: option_type "X" is not C or P' },
    ]);
  });

  it('refuses a header without the summary columns', async () => {
    const other = await SqlSession.open();
    try {
      await expect(
        stageFiles(other, [sharedPath('data/options/hod_L3_A_2016-01-05.csv')], 'cboe-eod'),
      ).rejects.toThrow(
        new IngestError(
          sharedPath('data/options/hod_L3_A_2016-01-05.csv'),
          1,
          'missing column "underlying_symbol" in Cboe EOD summary header',
        ),
      );
    } finally {
      other.close();
    }
  });
});
