/**
 * The vendor presets of the `csv` format: for each, a small file written in the vendor's documented layout
 * (header exactly as documented) ingests into a store, and the chain it answers is asserted field by field
 * with the instant each field is known at (docs/vendor-formats.md).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitStaged, type StageFilesResult, stageFiles } from '../../src/ingest/ingest.js';
import { openStore, type Store, storeInternals } from '../../src/library/store.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { REPO_ROOT } from '../helpers/paths.js';

const vendorFile = (name: string) => path.join(REPO_ROOT, 'test/fixtures/ingest/vendors', name);
const at = (iso: string) => Date.parse(iso) / 1000;

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-presets-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** A store holding `file` ingested with the preset; the staged rows of its quotes and open interest. */
async function ingest(
  name: string,
  file: string,
  options: { mapping: string; symbol?: string },
): Promise<{
  store: Store;
  staged: StageFilesResult;
  quotes: Record<string, unknown>[];
  oi: Record<string, unknown>[];
}> {
  const storeDir = path.join(dir, name);
  const tx = await WriteTransaction.begin(storeDir, { create: true });
  const staged = await stageFiles(tx.sql, [file], 'csv', options);
  const rows = async (query: string) => tx.sql.all<Record<string, unknown>>(query);
  const quotes = await rows(
    `SELECT option_symbol, underlying, CAST(session_date AS VARCHAR) AS session_date, quote_time, volume_time,
            CAST(bid AS DOUBLE) AS bid, CAST(ask AS DOUBLE) AS ask, bid_size, ask_size, CAST(last AS DOUBLE) AS last,
            volume, CAST(underlying_price AS DOUBLE) AS underlying_price, CAST(iv AS DOUBLE) AS iv,
            CAST(delta AS DOUBLE) AS delta, CAST(gamma AS DOUBLE) AS gamma, CAST(theta AS DOUBLE) AS theta,
            CAST(vega AS DOUBLE) AS vega
     FROM option_quotes ORDER BY option_symbol`,
  );
  const oi = await rows(
    `SELECT option_symbol, CAST(settled_session AS VARCHAR) AS settled_session, published_at, open_interest
     FROM open_interest ORDER BY option_symbol`,
  );
  await commitStaged(tx, staged);
  return { store: await openStore(storeDir, { threads: 1 }), staged, quotes, oi };
}

describe('optionsdx (EOD: q = QUOTE_READTIME, 16:00 ET; no open interest)', () => {
  let result: Awaited<ReturnType<typeof ingest>>;
  beforeAll(async () => {
    result = await ingest('optionsdx', vendorFile('spy_eod_202112.txt'), {
      mapping: 'optionsdx',
      symbol: 'SPY',
    });
  });
  afterAll(() => result.store.close());

  it('stages a call and a put per row, every field known at the 16:00 ET quote time', () => {
    const q = at('2021-12-01T16:00:00-05:00');
    const common = {
      underlying: 'SPY',
      session_date: '2021-12-01',
      quote_time: q,
      volume_time: q,
      underlying_price: 450.44,
    };
    expect(result.quotes).toEqual([
      {
        option_symbol: 'SPY211217C00450000',
        ...common,
        bid: 9.4,
        ask: 9.6,
        bid_size: 12,
        ask_size: 30,
        last: 9.5,
        volume: 1500,
        iv: 0.25,
        delta: 0.52,
        gamma: 0.02,
        theta: -0.21,
        vega: 0.45,
      },
      {
        option_symbol: 'SPY211217C00455000',
        ...common,
        bid: 6.9,
        ask: 7.1,
        bid_size: 5,
        ask_size: 7,
        last: null,
        volume: null,
        iv: 0.24,
        delta: 0.4,
        gamma: 0.02,
        theta: -0.2,
        vega: 0.44,
      },
      {
        option_symbol: 'SPY211217P00450000',
        ...common,
        bid: 8.7,
        ask: 8.9,
        bid_size: 40,
        ask_size: 25,
        last: 8.8,
        volume: 2100,
        iv: 0.26,
        delta: -0.48,
        gamma: 0.02,
        theta: -0.19,
        vega: 0.45,
      },
      {
        option_symbol: 'SPY211217P00455000',
        ...common,
        bid: 11.2,
        ask: 11.5,
        bid_size: 3,
        ask_size: 4,
        last: 11.3,
        volume: 10,
        iv: 0.25,
        delta: -0.6,
        gamma: 0.02,
        theta: -0.18,
        vega: 0.44,
      },
    ]);
    expect(result.oi).toEqual([]);
    expect(result.staged.files[0]!.quality).toMatchObject({
      rows: 4,
      sessions: 1,
      contracts: 4,
      missingOpenInterest: 4,
      greeksUnits: 'as mapped',
    });
  });

  it('answers the dated chain with those quotes, updated at 16:00 ET, and no open interest', async () => {
    const chain = await result.store.options.chain('SPY', { date: '2021-12-01' });
    const c = chain.columns;
    // Calls, then puts, each by strike.
    expect(c.optionSymbol).toEqual([
      'SPY211217C00450000',
      'SPY211217C00455000',
      'SPY211217P00450000',
      'SPY211217P00455000',
    ]);
    expect(c.bid).toEqual([9.4, 6.9, 8.7, 11.2]);
    expect(c.ask).toEqual([9.6, 7.1, 8.9, 11.5]);
    expect(c.mid).toEqual([9.5, 7, 8.8, 11.35]);
    expect(c.bidSize).toEqual([12, 5, 40, 3]);
    expect(c.askSize).toEqual([30, 7, 25, 4]);
    expect(c.last).toEqual([9.5, null, 8.8, 11.3]);
    expect(c.volume).toEqual([1500, null, 2100, 10]); // the file leaves it empty
    expect(c.openInterest).toEqual([null, null, null, null]);
    expect(c.underlyingPrice).toEqual([450.44, 450.44, 450.44, 450.44]);
    expect(c.updated).toEqual(Array(4).fill(at('2021-12-01T16:00:00-05:00')));
  });
});

describe('orats (near-EOD strikes: q = 14 minutes before the close; a call and a put per row)', () => {
  let result: Awaited<ReturnType<typeof ingest>>;
  beforeAll(async () => {
    result = await ingest('orats', vendorFile('orats_strikes_IWM_2022-06-08.csv'), { mapping: 'orats' });
  });
  afterAll(() => result.store.close());

  it('stages the call with the Greeks ORATS prints, the put with its own IV, both at 15:46 ET', () => {
    const q = at('2022-06-08T15:46:00-04:00');
    const common = {
      underlying: 'IWM',
      session_date: '2022-06-08',
      quote_time: q,
      volume_time: q,
      last: null,
      underlying_price: 200.1,
    };
    expect(result.quotes).toEqual([
      {
        option_symbol: 'IWM220916C00203000',
        ...common,
        bid: 8.8,
        ask: 8.9,
        bid_size: 253,
        ask_size: 510,
        volume: 150,
        iv: 0.308,
        delta: 0.5512,
        gamma: 0.0131,
        theta: -0.0502,
        vega: 0.3921,
      },
      {
        option_symbol: 'IWM220916P00203000',
        ...common,
        bid: 10.55,
        ask: 10.7,
        bid_size: 124,
        ask_size: 104,
        volume: 7,
        iv: 0.312,
        delta: null,
        gamma: null,
        theta: null,
        vega: null,
      },
    ]);
    // The open interest on the row dated D: settled D−1, known from 09:30 ET of D.
    const published = at('2022-06-08T09:30:00-04:00');
    expect(result.oi).toEqual([
      {
        option_symbol: 'IWM220916C00203000',
        settled_session: '2022-06-07',
        published_at: published,
        open_interest: 28206,
      },
      {
        option_symbol: 'IWM220916P00203000',
        settled_session: '2022-06-07',
        published_at: published,
        open_interest: 18438,
      },
    ]);
  });

  it('answers the dated chain at its 15:46 ET snapshot', async () => {
    const chain = await result.store.options.chain('IWM', { date: '2022-06-08' });
    const c = chain.columns;
    expect(c.optionSymbol).toEqual(['IWM220916C00203000', 'IWM220916P00203000']);
    expect(c.bid).toEqual([8.8, 10.55]);
    expect(c.ask).toEqual([8.9, 10.7]);
    expect(c.mid).toEqual([8.85, 10.63]);
    expect(c.bidSize).toEqual([253, 124]);
    expect(c.askSize).toEqual([510, 104]);
    expect(c.volume).toEqual([150, 7]);
    expect(c.openInterest).toEqual([28206, 18438]);
    expect(c.underlyingPrice).toEqual([200.1, 200.1]);
    expect(c.updated).toEqual([at('2022-06-08T15:46:00-04:00'), at('2022-06-08T15:46:00-04:00')]);
  });
});

describe('thetadata (v3 EOD report at 17:15 ET, `created`; open interest published 06:30 ET)', () => {
  let result: Awaited<ReturnType<typeof ingest>>;
  let oi: Awaited<ReturnType<typeof ingest>>;
  beforeAll(async () => {
    result = await ingest('thetadata', vendorFile('thetadata_eod_AAPL_20241104.csv'), {
      mapping: 'thetadata',
    });
    oi = await ingest('thetadata-oi', vendorFile('thetadata_oi_AAPL_20241105.csv'), {
      mapping: 'thetadata-oi',
    });
  });
  afterAll(() => {
    result.store.close();
    oi.store.close();
  });

  it('stages the report: the quote, last and volume known at `created`, 17:15 ET', () => {
    const q = at('2024-11-04T17:15:00-05:00');
    const common = {
      underlying: 'AAPL',
      session_date: '2024-11-04',
      quote_time: q,
      volume_time: q,
      underlying_price: null,
    };
    const greeks = { iv: null, delta: null, gamma: null, theta: null, vega: null };
    expect(result.quotes).toEqual([
      {
        option_symbol: 'AAPL241115C00170000',
        ...common,
        bid: 52.2,
        ask: 52.8,
        bid_size: 10,
        ask_size: 12,
        last: 52.4,
        volume: 120,
        ...greeks,
      },
      {
        option_symbol: 'AAPL241115P00170000',
        ...common,
        bid: 0.04,
        ask: 0.06,
        bid_size: 100,
        ask_size: 200,
        last: 0.05,
        volume: 300,
        ...greeks,
      },
    ]);
    expect(result.oi).toEqual([]);
  });

  it('files the OI report as the previous session’s figure, published 06:30 ET, with no quote', () => {
    const published = at('2024-11-05T06:30:00-05:00');
    expect(oi.quotes).toEqual([]);
    expect(oi.oi).toEqual([
      {
        option_symbol: 'AAPL241115C00170000',
        settled_session: '2024-11-04',
        published_at: published,
        open_interest: 1234,
      },
      {
        option_symbol: 'AAPL241115P00170000',
        settled_session: '2024-11-04',
        published_at: published,
        open_interest: 5678,
      },
    ]);
  });

  it('answers the dated chain from the 17:15 ET report', async () => {
    const chain = await result.store.options.chain('AAPL', { date: '2024-11-04' });
    const c = chain.columns;
    expect(c.optionSymbol).toEqual(['AAPL241115C00170000', 'AAPL241115P00170000']);
    expect(c.bid).toEqual([52.2, 0.04]);
    expect(c.ask).toEqual([52.8, 0.06]);
    expect(c.mid).toEqual([52.5, 0.05]);
    expect(c.last).toEqual([52.4, 0.05]);
    expect(c.volume).toEqual([120, 300]);
    expect(c.openInterest).toEqual([null, null]);
    expect(c.updated).toEqual([at('2024-11-04T17:15:00-05:00'), at('2024-11-04T17:15:00-05:00')]);
  });
});

describe('thetadata-greeks (v3 Greeks EOD from the 17:15 ET report, known at underlying_timestamp)', () => {
  let result: Awaited<ReturnType<typeof ingest>>;
  beforeAll(async () => {
    result = await ingest('thetadata-greeks', vendorFile('thetadata_greeks_eod_SPY_20240116.csv'), {
      mapping: 'thetadata-greeks',
    });
  });
  afterAll(() => result.store.close());

  it('stages the report with IV a fraction, theta per day and vega per point, all known at 17:15 ET', () => {
    const q = Date.parse('2024-01-16T17:15:18.701-05:00') / 1000;
    const common = {
      underlying: 'SPY',
      session_date: '2024-01-16',
      quote_time: q,
      volume_time: q,
      underlying_price: 474.93,
    };
    expect(result.quotes).toEqual([
      {
        option_symbol: 'SPY240119C00477000',
        ...common,
        bid: 1.26,
        ask: 1.27,
        bid_size: 306,
        ask_size: 1,
        last: 1.26,
        volume: 43870,
        iv: 0.1196,
        delta: 0.3611,
        gamma: 0.0732,
        theta: -0.3483,
        vega: 0.159689,
      },
      {
        option_symbol: 'SPY240119P00477000',
        ...common,
        bid: 2.96,
        ask: 3,
        bid_size: 306,
        ask_size: 112,
        last: 2.9,
        volume: 13740,
        iv: 0.1107,
        delta: -0.6497,
        gamma: 0.0783,
        theta: -0.251,
        vega: 0.157924,
      },
    ]);
    expect(result.oi).toEqual([]);
    expect(result.staged.files[0]!.quality).toMatchObject({ rows: 2, greeksUnits: 'as mapped' });
  });

  it('answers the current chain with the vendor’s Greeks from 17:15 ET on, and nothing before', async () => {
    const after = await result.store
      .at('2024-01-16T17:16:00-05:00')
      .options.chain('SPY', { expiration: '2024-01-19', side: 'call' });
    expect(after.columns.iv).toEqual([0.1196]);
    expect(after.columns.vega).toEqual([0.159689]);
    expect(after.columns.updated).toEqual([Date.parse('2024-01-16T17:15:18.701-05:00') / 1000]);
    const before = await result.store
      .at('2024-01-16T17:00:00-05:00')
      .options.chain('SPY', { expiration: '2024-01-19', side: 'call' });
    expect(before.length).toBe(0);
  });
});

describe('cboe-intervals (1-minute NBBO snapshots at quote_datetime; start-of-day open interest)', () => {
  let result: Awaited<ReturnType<typeof ingest>>;
  beforeAll(async () => {
    result = await ingest(
      'cboe-intervals',
      vendorFile('UnderlyingOptionsIntervals_60sec_calcs_oi_2024-03-15.csv'),
      {
        mapping: 'cboe-intervals',
      },
    );
  });
  afterAll(() => result.store.close());

  it('stages each snapshot at its own minute, the underlying at its bid/ask mid, no interval volume', () => {
    const t = (hhmm: string) => at(`2024-03-15T${hhmm}:00-04:00`);
    const base = { underlying: 'SPX', session_date: '2024-03-15', last: null, volume: null };
    expect(result.quotes).toEqual([
      {
        option_symbol: 'SPXW240328C05100000',
        ...base,
        quote_time: t('15:45'),
        volume_time: t('15:45'),
        bid: 61,
        ask: 61.6,
        bid_size: 20,
        ask_size: 25,
        underlying_price: 5117.8,
        iv: 0.125,
        delta: 0.58,
        gamma: 0.0021,
        theta: -2.15,
        vega: 3.45,
      },
      {
        option_symbol: 'SPXW240328C05100000',
        ...base,
        quote_time: t('15:46'),
        volume_time: t('15:46'),
        bid: 61.1,
        ask: 61.7,
        bid_size: 21,
        ask_size: 26,
        underlying_price: 5118.2,
        iv: 0.1251,
        delta: 0.581,
        gamma: 0.0021,
        theta: -2.151,
        vega: 3.451,
      },
      {
        option_symbol: 'SPXW240328P05100000',
        ...base,
        quote_time: t('15:45'),
        volume_time: t('15:45'),
        bid: 40.2,
        ask: 40.7,
        bid_size: 18,
        ask_size: 22,
        underlying_price: 5117.8,
        iv: 0.13,
        delta: -0.42,
        gamma: 0.0021,
        theta: -2.05,
        vega: 3.44,
      },
    ]);
    // Start-of-day open interest: settled the session before, known from the open.
    const published = at('2024-03-15T09:30:00-04:00');
    expect(result.oi).toEqual([
      {
        option_symbol: 'SPXW240328C05100000',
        settled_session: '2024-03-14',
        published_at: published,
        open_interest: 1520,
      },
      {
        option_symbol: 'SPXW240328C05100000',
        settled_session: '2024-03-14',
        published_at: published,
        open_interest: 1520,
      },
      {
        option_symbol: 'SPXW240328P05100000',
        settled_session: '2024-03-14',
        published_at: published,
        open_interest: 2210,
      },
    ]);
  });

  it('answers the dated chain from each contract’s latest snapshot', async () => {
    const chain = await result.store.options.chain('SPX', { date: '2024-03-15', expiration: 'all' });
    const c = chain.columns;
    expect(c.optionSymbol).toEqual(['SPXW240328C05100000', 'SPXW240328P05100000']);
    expect(c.bid).toEqual([61.1, 40.2]);
    expect(c.ask).toEqual([61.7, 40.7]);
    expect(c.openInterest).toEqual([1520, 2210]);
    expect(c.underlyingPrice).toEqual([5118.2, 5117.8]);
    expect(c.updated).toEqual([at('2024-03-15T15:46:00-04:00'), at('2024-03-15T15:45:00-04:00')]);
  });

  it('reads a file without the optional Calcs and open interest', async () => {
    const plain = await ingest(
      'cboe-intervals-plain',
      vendorFile('UnderlyingOptionsIntervals_60sec_2024-03-15.csv'),
      {
        mapping: 'cboe-intervals',
      },
    );
    try {
      expect(plain.quotes).toEqual([
        { ...result.quotes[0], iv: null, delta: null, gamma: null, theta: null, vega: null },
      ]);
      expect(plain.oi).toEqual([]);
    } finally {
      plain.store.close();
    }
  });
});

describe('databento (OPRA cbbo-1m CSV: a consolidated BBO per minute, known at ts_recv)', () => {
  let result: Awaited<ReturnType<typeof ingest>>;
  beforeAll(async () => {
    result = await ingest('databento', vendorFile('opra-pillar-20240315.cbbo-1m.csv'), {
      mapping: 'databento',
    });
  });
  afterAll(() => result.store.close());

  it('stages each minute’s BBO at its ts_recv, the contract from its OSI symbol', () => {
    const t = (hhmm: string) => at(`2024-03-15T${hhmm}:00-04:00`);
    const base = {
      option_symbol: 'SPY240419C00500000',
      underlying: 'SPY',
      session_date: '2024-03-15',
      last: null,
      volume: null,
      underlying_price: null,
      iv: null,
      delta: null,
      gamma: null,
      theta: null,
      vega: null,
    };
    expect(result.quotes).toEqual([
      {
        ...base,
        quote_time: t('15:45'),
        volume_time: t('15:45'),
        bid: 5.05,
        ask: 5.15,
        bid_size: 12,
        ask_size: 30,
      },
      {
        ...base,
        quote_time: t('15:46'),
        volume_time: t('15:46'),
        bid: 5.1,
        ask: 5.2,
        bid_size: 10,
        ask_size: 25,
      },
    ]);
    expect(result.oi).toEqual([]);
  });

  it('answers the dated chain from the latest minute', async () => {
    const chain = await result.store.options.chain('SPY', { date: '2024-03-15', expiration: 'all' });
    expect(chain.columns.optionSymbol).toEqual(['SPY240419C00500000']);
    expect(chain.columns.bid).toEqual([5.1]);
    expect(chain.columns.ask).toEqual([5.2]);
    expect(chain.columns.mid).toEqual([5.15]);
    expect(chain.columns.updated).toEqual([at('2024-03-15T15:46:00-04:00')]);
  });
});

describe('databento-statistics (OPRA statistics CSV: open interest of the session ts_ref names, known at ts_recv)', () => {
  let result: Awaited<ReturnType<typeof ingest>>;
  beforeAll(async () => {
    result = await ingest('databento-statistics', vendorFile('opra-pillar-20240315.statistics.csv'), {
      mapping: 'databento-statistics',
    });
  });
  afterAll(() => result.store.close());

  it('files the open-interest rows (stat_type 9) only, as published at ts_recv, and no quote', () => {
    expect(result.quotes).toEqual([]);
    expect(result.oi).toEqual([
      {
        option_symbol: 'SPY240419C00500000',
        settled_session: '2024-03-14',
        published_at: Date.parse('2024-03-15T10:30:02.123456Z') / 1000,
        open_interest: 1520,
      },
      {
        option_symbol: 'SPY240419P00500000',
        settled_session: '2024-03-14',
        published_at: Date.parse('2024-03-15T10:30:02.223456Z') / 1000,
        open_interest: 2210,
      },
    ]);
    expect(result.staged.files[0]).toMatchObject({ sourceRows: 3, rejected: 0 });
  });
});

describe('databento-definition (OPRA definition CSV: contract terms and size, listed from ts_recv)', () => {
  let storeDir: string;
  let staged: StageFilesResult;
  let store: Store;
  beforeAll(async () => {
    storeDir = path.join(dir, 'databento-definition');
    // As a user would: the definitions first, then each quotes and statistics export, one ingest each.
    const run = async (file: string, mapping: string) => {
      const tx = await WriteTransaction.begin(storeDir, { create: true });
      const result = await stageFiles(tx.sql, [vendorFile(file)], 'csv', { mapping });
      await commitStaged(tx, result);
      return result;
    };
    staged = await run('opra-pillar-20240315.definition.csv', 'databento-definition');
    await run('opra-pillar-20240315.cbbo-1m.csv', 'databento');
    await run('opra-pillar-20240315.adjusted.cbbo-1m.csv', 'databento');
    await run('opra-pillar-20240315.statistics.csv', 'databento-statistics');
    store = await openStore(storeDir, { threads: 1 });
  });
  afterAll(() => store?.close());

  it('lists each contract from its first definition’s session, nonstandard when its size is not 100', async () => {
    expect(staged.files[0]).toMatchObject({ sourceRows: 4, rejected: 0, rows: {} });
    const contracts = await storeInternals(store).reader.sql.all<Record<string, unknown>>(
      `SELECT option_symbol, underlying, CAST(first_traded AS VARCHAR) AS first_traded, nonstandard
       FROM contracts ORDER BY option_symbol`,
    );
    expect(contracts).toEqual([
      {
        option_symbol: 'SPY240419C00500000',
        underlying: 'SPY',
        first_traded: '2024-03-14',
        nonstandard: false,
      },
      {
        option_symbol: 'SPY240419C00505000',
        underlying: 'SPY',
        first_traded: '2024-03-15',
        nonstandard: true,
      },
      {
        option_symbol: 'SPY240419P00500000',
        underlying: 'SPY',
        first_traded: '2024-03-15',
        nonstandard: false,
      },
    ]);
  });

  it('answers the dated chain with the vendor’s listing date, and leaves the size-10 contract to nonstandard=true', async () => {
    const dated = await store.request('/v1/options/chain/SPY/?date=2024-03-15&expiration=all');
    expect(dated.status).toBe(200);
    const body = JSON.parse(dated.body);
    expect(body).toEqual({
      s: 'ok',
      optionSymbol: ['SPY240419C00500000'],
      underlying: ['SPY'],
      expiration: [at('2024-04-19T16:00:00-04:00')],
      side: ['call'],
      strike: [500],
      firstTraded: [at('2024-03-14T09:30:00-04:00')],
      dte: [35],
      updated: [at('2024-03-15T15:46:00-04:00')],
      bid: [5.1],
      bidSize: [10],
      mid: [5.15],
      ask: [5.2],
      askSize: [25],
      last: [null],
      openInterest: [1520],
      volume: [null],
      inTheMoney: [null],
      intrinsicValue: [null],
      extrinsicValue: [null],
      underlyingPrice: [null],
      iv: [null],
      delta: [null],
      gamma: [null],
      theta: [null],
      vega: [null],
    });
    const all = await store.request('/v1/options/chain/SPY/?date=2024-03-15&expiration=all&nonstandard=true');
    expect(JSON.parse(all.body).optionSymbol).toEqual(['SPY240419C00500000', 'SPY240419C00505000']);
  });

  it('marks a contract already quoted nonstandard when its definition comes after its quotes', async () => {
    const later = path.join(dir, 'databento-definition-later');
    for (const [file, mapping] of [
      ['opra-pillar-20240315.adjusted.cbbo-1m.csv', 'databento'],
      ['opra-pillar-20240315.cbbo-1m.csv', 'databento'],
      ['opra-pillar-20240315.definition.csv', 'databento-definition'],
    ] as const) {
      const tx = await WriteTransaction.begin(later, { create: true });
      await commitStaged(tx, await stageFiles(tx.sql, [vendorFile(file)], 'csv', { mapping }));
    }
    const reopened = await openStore(later, { threads: 1 });
    try {
      const contracts = await storeInternals(reopened).reader.sql.all<Record<string, unknown>>(
        `SELECT option_symbol, CAST(first_traded AS VARCHAR) AS first_traded, nonstandard
         FROM contracts ORDER BY option_symbol`,
      );
      expect(contracts).toEqual([
        { option_symbol: 'SPY240419C00500000', first_traded: '2024-03-14', nonstandard: false },
        { option_symbol: 'SPY240419C00505000', first_traded: '2024-03-15', nonstandard: true },
        { option_symbol: 'SPY240419P00500000', first_traded: '2024-03-15', nonstandard: false },
      ]);
    } finally {
      reopened.close();
    }
  });

  it('refuses a row that states no contract, with its line', async () => {
    const file = path.join(dir, 'bad.definition.csv');
    await fs.writeFile(
      file,
      [
        'ts_recv,instrument_class,unit_of_measure_qty,symbol',
        '2024-03-15T10:30:00.000000000Z,C,100.000000000,SPY   240419C00500000',
        '2024-03-15T10:30:00.000000000Z,C,100.000000000,SPY 500 CALL',
        '2024-03-15T10:30:00.000000000Z,P,many,SPY   240419P00500000',
        '2024-03-15T10:30:00.000000000Z,P,0,SPY   240419P00505000',
      ].join('\n'),
    );
    const tx = await WriteTransaction.begin(path.join(dir, 'bad-definition'), { create: true });
    try {
      const result = await stageFiles(tx.sql, [file], 'csv', {
        mapping: 'databento-definition',
        skipInvalid: true,
      });
      expect(result.rejects.map((r) => [r.line, r.reason])).toEqual([
        [3, 'invalid OCC symbol: SPY500CALL'],
        [4, 'wrong type: unit_of_measure_qty "many" is not a number'],
        [5, 'multiplier 0.0 is not above 0'],
      ]);
    } finally {
      await tx.abort();
    }
  });
});
