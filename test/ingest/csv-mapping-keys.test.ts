import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OptionMappingSchema } from '../../src/ingest/formats/csv-mapping.js';
import { stageFiles } from '../../src/ingest/ingest.js';
import { SqlSession } from '../../src/store/sql.js';

/** An instant written with its offset, as epoch seconds (independent of the host zone). */
const at = (iso: string) => Date.parse(iso) / 1000;

/** Every mapping these tests stage with: together they use every key of the `csv` mapping schema. */
const MAPPINGS = {
  // A headerless file in cents, key columns, quotes at the session's close (13:00 ET on 2024-11-29).
  keys: {
    header: false,
    columns: ['Root', 'Exp', 'CP', 'K', 'Day', 'Bid', 'Ask', 'BidSz', 'AskSz', 'Last', 'Vol', 'OI', 'Px'],
    delimiter: ';',
    dateFormat: '%d.%m.%Y',
    root: 'Root',
    expiration: 'Exp',
    side: 'CP',
    strike: { column: 'K', scale: 0.001 },
    sessionDate: 'Day',
    quoteTime: 'close',
    volumeTime: 'quote',
    priceScale: 100,
    bid: 'Bid',
    ask: 'Ask',
    bidSize: 'BidSz',
    askSize: 'AskSz',
    last: 'Last',
    volume: 'Vol',
    underlyingPrice: 'Px',
    openInterest: 'OI',
    lastZeroIsNoTrade: true,
  },
  // OCC symbols, an underlying column, quote times as epoch seconds (the session is their ET date).
  unix: {
    optionSymbol: 'Symbol',
    underlying: 'Under',
    quoteTime: { column: 'Ts', format: 'unix' },
    volumeTime: 'close',
    bid: 'Bid',
    ask: 'Ask',
    iv: 'IV',
    delta: 'Delta',
    gamma: { column: 'Gamma', scale: 0.01 },
    theta: { column: 'Theta', scale: 0.01 },
    vega: 'Vega',
    openInterest: { column: 'OI', settled: 'same' },
  },
  // Quote times with their own offset, and a wall time in another zone: the zone applies to the latter only.
  zoned: {
    optionSymbol: 'Symbol',
    quoteTime: { column: 'Time', format: '%Y-%m-%d %H:%M:%S%z' },
    timeZone: 'America/Chicago',
    bid: 'Bid',
    ask: 'Ask',
  },
  wall: {
    root: 'Root',
    expiration: 'Exp',
    side: { column: 'CP', values: { C: 'call', P: 'put' } },
    strike: 'K',
    sessionDate: 'Date',
    quoteTime: '14:45',
    timeZone: 'America/Chicago',
    bid: 'Bid',
    ask: 'Ask',
    quotes: true, // an open-interest report says false (the thetadata-oi preset, test/ingest/presets.test.ts)
    optionalColumns: ['IV'], // absent here: no iv field is read (the cboe-intervals preset's Calcs)
    where: { column: 'CP', equals: ['C'] }, // the file's one row is a call (databento-statistics filters rows)
    iv: 'IV',
    multiplier: { value: 100 }, // each row also states its contract (the databento-definition preset)
  },
  // A wide row (a call and a put per line) with bracketed, spaced header names behind a BOM, a constant
  // underlying, sizes as "bid x ask", quotes snapped 14 minutes before the close, OI published 06:30 ET.
  wide: {
    underlying: { value: 'SPY' },
    expiration: 'Expiry',
    strike: 'Strike',
    sessionDate: 'Date',
    quoteTime: { beforeClose: 14 },
    sides: {
      call: {
        bid: 'C Bid',
        ask: 'C Ask',
        bidSize: { column: 'C Size', part: 0, separator: 'x' },
        askSize: { column: 'C Size', part: 1, separator: 'x' },
        openInterest: { column: 'C OI', settled: 'previous', publishedFromOpen: -180 },
      },
      put: {
        bid: 'P Bid',
        ask: 'P Ask',
        bidSize: { column: 'P Size', part: 0, separator: 'x' },
        askSize: { column: 'P Size', part: 1, separator: 'x' },
        openInterest: 'P OI',
      },
    },
  },
} as const;

const FILES = {
  keys: [
    'SPY;20.12.2024;C;600000;29.11.2024;1250;1300;10;12;1280;15;2000;59800',
    'spy;20.12.2024;p;600000;29.11.2024;900;950;;;0;0;1500;59800',
    'SPY;20.12.2024;Put;600000;26.11.2024;1000;1040;5;6;1010;3;1400;59900',
  ],
  unix: [
    'Symbol,Under,Ts,Bid,Ask,IV,Delta,Gamma,Theta,Vega,OI',
    // 2024-03-15 19:45 UTC = 15:45 EDT
    'SPXW240419C05000000,SPX,1710531900,120.5,121.5,0.15,0.52,0.21,-152.5,4.1,700',
  ],
  zoned: ['Symbol,Time,Bid,Ask', 'SPY240419C00500000,2024-03-15 14:45:00-0500,1.25,1.3'],
  wall: ['Root,Exp,CP,K,Date,Bid,Ask', 'SPY,2024-04-19,C,500,2024-03-15,1.25,1.3'],
  wide: [
    '\uFEFF[Date], [Expiry], [Strike], [C Bid], [C Ask], [C Size], [C OI], [P Bid], [P Ask], [P Size], [P OI]',
    ' 2024-11-29, 2024-12-20, 600, 12.5, 13.0, 12 x 30, 2000, 9.0, 9.5, 4 x 5, 1500',
  ],
};

describe('csv mapping keys', () => {
  let dir: string;
  const file = (name: keyof typeof FILES) => path.join(dir, `${name}.csv`);
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-csv-keys-'));
    for (const [name, lines] of Object.entries(FILES)) {
      await fs.writeFile(path.join(dir, `${name}.csv`), `${lines.join('\n')}\n`);
    }
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  const staged = async <T>(name: keyof typeof FILES, then: (sql: SqlSession) => Promise<T>) => {
    const sql = await SqlSession.open();
    try {
      await stageFiles(sql, [file(name)], 'csv', { mapping: JSON.stringify(MAPPINGS[name]) });
      return await then(sql);
    } finally {
      sql.close();
    }
  };

  it('uses every key of the mapping schema in these tests', () => {
    const used = new Set(Object.values(MAPPINGS).flatMap((mapping) => Object.keys(mapping)));
    expect(Object.keys(OptionMappingSchema.shape).filter((key) => !used.has(key))).toEqual([]);
  });

  it('a wide row: one quote per side, cleaned header names, a constant, composite sizes, beforeClose', async () => {
    await staged('wide', async (sql) => {
      const q = at('2024-11-29T12:46:00-05:00'); // 14 minutes before the 13:00 ET early close
      const quote = {
        underlying: 'SPY',
        session_date: '2024-11-29',
        quote_time: q,
        volume_time: q,
        _line: 2,
      };
      expect(
        await sql.all(
          `SELECT underlying, option_symbol, session_date, quote_time, volume_time, bid, ask, bid_size, ask_size, _line
           FROM option_quotes ORDER BY option_symbol`,
        ),
      ).toEqual([
        { ...quote, option_symbol: 'SPY241220C00600000', bid: 12.5, ask: 13, bid_size: 12, ask_size: 30 },
        { ...quote, option_symbol: 'SPY241220P00600000', bid: 9, ask: 9.5, bid_size: 4, ask_size: 5 },
      ]);
      const published = at('2024-11-29T06:30:00-05:00');
      expect(
        await sql.all(
          'SELECT option_symbol, settled_session, published_at, open_interest FROM open_interest ORDER BY option_symbol',
        ),
      ).toEqual([
        {
          option_symbol: 'SPY241220C00600000',
          settled_session: '2024-11-27',
          published_at: published,
          open_interest: 2000,
        },
        {
          option_symbol: 'SPY241220P00600000',
          settled_session: '2024-11-27',
          published_at: published,
          open_interest: 1500,
        },
      ]);
    });
  });

  it('quoteTime "close": stamps the session close (13:00 ET on an early close), volume as of it', async () => {
    await staged('keys', async (sql) => {
      expect(await sql.all('SELECT * EXCLUDE (_reject) FROM option_quotes ORDER BY _line')).toEqual([
        {
          underlying: 'SPY',
          option_symbol: 'SPY241220C00600000',
          session_date: '2024-11-29',
          quote_time: at('2024-11-29T13:00:00-05:00'),
          bid: 12.5,
          ask: 13,
          bid_size: 10,
          ask_size: 12,
          last: 12.8,
          volume: 15,
          volume_time: at('2024-11-29T13:00:00-05:00'),
          underlying_price: 598,
          iv: null,
          delta: null,
          gamma: null,
          theta: null,
          vega: null,
          _line: 1,
        },
        {
          underlying: 'SPY',
          option_symbol: 'SPY241220P00600000',
          session_date: '2024-11-29',
          quote_time: at('2024-11-29T13:00:00-05:00'),
          bid: 9,
          ask: 9.5,
          bid_size: null,
          ask_size: null,
          last: null, // lastZeroIsNoTrade
          volume: 0,
          volume_time: at('2024-11-29T13:00:00-05:00'),
          underlying_price: 598,
          iv: null,
          delta: null,
          gamma: null,
          theta: null,
          vega: null,
          _line: 2,
        },
        {
          underlying: 'SPY',
          option_symbol: 'SPY241220P00600000',
          session_date: '2024-11-26',
          quote_time: at('2024-11-26T16:00:00-05:00'),
          bid: 10,
          ask: 10.4,
          bid_size: 5,
          ask_size: 6,
          last: 10.1,
          volume: 3,
          volume_time: at('2024-11-26T16:00:00-05:00'),
          underlying_price: 599,
          iv: null,
          delta: null,
          gamma: null,
          theta: null,
          vega: null,
          _line: 3,
        },
      ]);
      // A plain OI column is settled the session before the row's, published 09:30 ET of the row's.
      expect(
        await sql.all(
          'SELECT settled_session, published_at, open_interest FROM open_interest ORDER BY _line',
        ),
      ).toEqual([
        { settled_session: '2024-11-27', published_at: at('2024-11-29T09:30:00-05:00'), open_interest: 2000 },
        { settled_session: '2024-11-27', published_at: at('2024-11-29T09:30:00-05:00'), open_interest: 1500 },
        { settled_session: '2024-11-25', published_at: at('2024-11-26T09:30:00-05:00'), open_interest: 1400 },
      ]);
    });
  });

  it('unix quote times, an underlying column, Greek scales, volume at the close, OI settled "same"', async () => {
    await staged('unix', async (sql) => {
      expect(
        await sql.all(
          `SELECT underlying, option_symbol, session_date, quote_time, volume_time, bid, ask, iv, delta, gamma, theta, vega
           FROM option_quotes`,
        ),
      ).toEqual([
        {
          underlying: 'SPX',
          option_symbol: 'SPXW240419C05000000',
          session_date: '2024-03-15',
          quote_time: at('2024-03-15T15:45:00-04:00'),
          volume_time: at('2024-03-15T16:00:00-04:00'),
          bid: 120.5,
          ask: 121.5,
          iv: 0.15,
          delta: 0.52,
          gamma: 0.0021,
          theta: -1.525,
          vega: 4.1,
        },
      ]);
      expect(await sql.all('SELECT settled_session, published_at, open_interest FROM open_interest')).toEqual(
        [
          {
            settled_session: '2024-03-15',
            published_at: at('2024-03-18T09:30:00-04:00'),
            open_interest: 700,
          },
        ],
      );
    });
  });

  it('a quote-time column with its own offset ignores timeZone; a wall time is read in timeZone', async () => {
    const quote = (sql: SqlSession) =>
      sql.all('SELECT session_date, quote_time, volume_time FROM option_quotes');
    // 14:45 at −05:00 is 15:45 EDT; 14:45 in Chicago on 2024-03-15 is 15:45 EDT too.
    const expected = [
      {
        session_date: '2024-03-15',
        quote_time: at('2024-03-15T15:45:00-04:00'),
        volume_time: at('2024-03-15T15:45:00-04:00'),
      },
    ];
    expect(await staged('zoned', quote)).toEqual(expected);
    expect(await staged('wall', quote)).toEqual(expected);
  });
});
