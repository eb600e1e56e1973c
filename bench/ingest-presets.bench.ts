/**
 * Ingest throughput of each vendor preset of the `csv` format: a file written in the vendor's documented
 * layout (the header of test/fixtures/ingest/vendors/), 48,000 quotes over ten sessions,
 * staged and committed into a fresh store as `pitchain ingest --format csv --mapping <preset>` does, in
 * quote rows per second. The baseline, measured in the same run and alternating with ours, is DuckDB alone
 * reading the same file with `read_csv` (types detected) and writing it as one zstd Parquet file: the
 * ratio is what the mapping, validation, the point-in-time stamps and the store's layout cost.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { commitStaged, stageFiles } from '../src/ingest/ingest.js';
import { sessionsBetween } from '../src/market-time/index.js';
import { quoteLiteral, SqlSession } from '../src/store/sql.js';
import { WriteTransaction } from '../src/store/writer.js';
import { defineBenchmark, perSecond, ratioRow, summarise } from './lib.js';

const SESSIONS = sessionsBetween('2024-03-04', '2024-03-15');
const EXPIRATIONS = [
  '2024-03-28',
  '2024-04-19',
  '2024-05-17',
  '2024-06-21',
  '2024-07-19',
  '2024-08-16',
  '2024-09-20',
  '2024-12-20',
];
const STRIKES = Array.from({ length: 300 }, (_, i) => 320 + i);
const RUNS = 3;

/** One strike of one session: the numbers every layout prints, varied so that nothing repeats. */
type Point = { session: string; expiration: string; strike: number; i: number };

const points = (): Point[] =>
  SESSIONS.flatMap((session) =>
    EXPIRATIONS.flatMap((expiration) => STRIKES.map((strike, i) => ({ session, expiration, strike, i }))),
  );

const price = (p: Point, put: boolean) => {
  const base = Math.max(0.05, (put ? p.strike - 470 : 470 - p.strike) + 5 + (p.i % 7) * 0.1);
  return { bid: base.toFixed(2), ask: (base + 0.1).toFixed(2) };
};

/** A file per preset in its vendor's layout, and the quotes it holds. */
const LAYOUTS: Record<
  string,
  { options: { mapping: string; symbol?: string }; write: () => [string, number] }
> = {
  optionsdx: {
    options: { mapping: 'optionsdx', symbol: 'SPY' },
    write: () => {
      const header =
        '[QUOTE_UNIXTIME], [QUOTE_READTIME], [QUOTE_DATE], [QUOTE_TIME_HOURS], [UNDERLYING_LAST], [EXPIRE_DATE], [EXPIRE_UNIX], [DTE], [C_DELTA], [C_GAMMA], [C_VEGA], [C_THETA], [C_RHO], [C_IV], [C_VOLUME], [C_LAST], [C_SIZE], [C_BID], [C_ASK], [STRIKE], [P_BID], [P_ASK], [P_SIZE], [P_LAST], [P_DELTA], [P_GAMMA], [P_VEGA], [P_THETA], [P_RHO], [P_IV], [P_VOLUME], [STRIKE_DISTANCE], [STRIKE_DISTANCE_PCT]';
      const rows = points().map((p) => {
        const c = price(p, false);
        const q = price(p, true);
        return ` 1710532800, ${p.session} 16:00, ${p.session}, 16.000000, 470.000000, ${p.expiration}, 1711656000, 13.000000, 0.500000, 0.020000, 0.450000, -0.210000, 0.100000, 0.250000, ${p.i}.000000, ${c.bid}, 12 x 30, ${c.bid}, ${c.ask}, ${p.strike}.000000, ${q.bid}, ${q.ask}, 40 x 25, ${q.bid}, -0.480000, 0.020000, 0.450000, -0.190000, -0.110000, 0.260000, ${p.i + 1}.000000, 1.000000, 0.001000`;
      });
      return [[header, ...rows].join('\n'), rows.length * 2];
    },
  },
  orats: {
    options: { mapping: 'orats' },
    write: () => {
      const header =
        'ticker,tradeDate,expirDate,dte,strike,stockPrice,callVolume,callOpenInterest,callBidSize,callAskSize,putVolume,putOpenInterest,putBidSize,putAskSize,callBidPrice,callValue,callAskPrice,putBidPrice,putValue,putAskPrice,callBidIv,callMidIv,callAskIv,smvVol,putBidIv,putMidIv,putAskIv,residualRate,delta,gamma,theta,vega,rho,phi,driftlessTheta,callSmvVol,putSmvVol,extSmvVol,extCallValue,extPutValue,spotPrice,quoteDate,updatedAt,snapShotEstTime,snapShotDate,expiryTod,tickerId,monthId';
      const rows = points().map((p) => {
        const c = price(p, false);
        const q = price(p, true);
        return `SPY,${p.session},${p.expiration},20,${p.strike},470,${p.i},100,10,12,${p.i + 1},200,14,16,${c.bid},${c.ask},${c.ask},${q.bid},${q.ask},${q.ask},0.2,0.21,0.22,0.21,0.2,0.21,0.22,0,0.5,0.02,-0.2,0.4,0.1,-0.1,-0.2,0.21,0.21,0.21,${c.ask},${q.ask},470,${p.session}T19:46:00Z,${p.session}T19:47:00Z,1546,${p.session},pm,9,1`;
      });
      return [[header, ...rows].join('\n'), rows.length * 2];
    },
  },
  thetadata: {
    options: { mapping: 'thetadata' },
    write: () => {
      const header =
        'symbol,expiration,strike,right,created,last_trade,open,high,low,close,volume,count,bid_size,bid_exchange,bid,bid_condition,ask_size,ask_exchange,ask,ask_condition';
      const rows = points().flatMap((p) =>
        (['CALL', 'PUT'] as const).map((right) => {
          const x = price(p, right === 'PUT');
          return `"SPY","${p.expiration}",${p.strike}.000,"${right}",${p.session}T17:15:00.000,${p.session}T15:59:58.000,${x.bid},${x.ask},${x.bid},${x.bid},${p.i},3,10,5,${x.bid},50,12,7,${x.ask},50`;
        }),
      );
      return [[header, ...rows].join('\n'), rows.length];
    },
  },
  'cboe-intervals': {
    options: { mapping: 'cboe-intervals' },
    write: () => {
      const header =
        'underlying_symbol,quote_datetime,root,expiration,strike,option_type,open,high,low,close,trade_volume,bid_size,bid,ask_size,ask,underlying_bid,underlying_ask,implied_underlying_price,active_underlying_price,implied_volatility,delta,gamma,theta,vega,rho,open_interest';
      const rows = points().flatMap((p) =>
        (['C', 'P'] as const).map((side) => {
          const x = price(p, side === 'P');
          return `SPY,${p.session} 15:45:00,SPY,${p.expiration},${p.strike}.000,${side},${x.bid},${x.ask},${x.bid},${x.bid},${p.i},20,${x.bid},25,${x.ask},469.90,470.10,470.00,470.00,0.2100,0.5000,0.0200,-0.2000,0.4000,0.1000,${p.i + 100}`;
        }),
      );
      return [[header, ...rows].join('\n'), rows.length];
    },
  },
  databento: {
    options: { mapping: 'databento' },
    write: () => {
      const header =
        'ts_recv,ts_event,rtype,publisher_id,instrument_id,side,price,size,flags,bid_px_00,ask_px_00,bid_sz_00,ask_sz_00,bid_pb_00,ask_pb_00,symbol';
      const rows = points().flatMap((p) =>
        (['C', 'P'] as const).map((side) => {
          const x = price(p, side === 'P');
          const osi = `SPY   ${p.expiration.slice(2).replaceAll('-', '')}${side}${String(p.strike * 1000).padStart(8, '0')}`;
          return `${p.session}T19:45:00.000000000Z,${p.session}T19:44:59.000000000Z,194,30,${p.i},N,${x.bid},1,128,${x.bid},${x.ask},12,30,1,1,${osi}`;
        }),
      );
      return [[header, ...rows].join('\n'), rows.length];
    },
  },
};

export default defineBenchmark({
  name: 'ingest-presets',
  description:
    'each csv vendor preset: a file in its layout ingested into a fresh store, vs DuckDB read_csv → Parquet',
  async run(ctx) {
    const dir = await ctx.tempDir('pitchain-ingest-presets-');
    const rows = [];
    for (const [preset, layout] of Object.entries(LAYOUTS)) {
      const [text, quotes] = layout.write();
      const file = join(dir, `${preset}.csv`);
      await writeFile(file, `${text}\n`);
      const ours: number[] = [];
      const baseline: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const store = join(dir, `${preset}-store-${run}`);
        let started = performance.now();
        const tx = await WriteTransaction.begin(store, { create: true });
        const staged = await stageFiles(tx.sql, [file], 'csv', layout.options);
        if (staged.rows.option_quotes !== quotes) {
          throw new Error(`${preset}: ${staged.rows.option_quotes} quotes staged, ${quotes} expected`);
        }
        await commitStaged(tx, staged);
        ours.push(performance.now() - started);
        started = performance.now();
        const sql = await SqlSession.open();
        try {
          await sql.value(
            `COPY (SELECT * FROM read_csv(${quoteLiteral(file)})) TO ${quoteLiteral(join(dir, `${preset}-${run}.parquet`))} (FORMAT parquet, COMPRESSION zstd)`,
          );
        } finally {
          sql.close();
        }
        baseline.push(performance.now() - started);
      }
      const mine = perSecond(quotes, summarise(ours).p50Ms);
      const theirs = perSecond(quotes, summarise(baseline).p50Ms);
      ctx.log(
        `${preset}: ${quotes.toLocaleString('en-US')} quotes, ${Math.round(mine).toLocaleString('en-US')} rows/s`,
      );
      rows.push(
        ratioRow({
          name: `ingest --mapping ${preset} (${quotes.toLocaleString('en-US')} quotes)`,
          ours: mine,
          baseline: theirs,
          unit: 'rows/s',
          target: '≥ 0.1× baseline throughput',
          note: 'median of 3; baseline: DuckDB read_csv → one Parquet file',
        }),
      );
    }
    return rows;
  },
});
