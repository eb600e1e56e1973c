/**
 * Ingest throughput of each vendor preset of the `csv` format: a file written in the vendor's documented
 * layout (the header of test/fixtures/ingest/vendors/), 48,000 quotes over ten sessions,
 * staged and committed into a fresh store as `pitchain ingest --format csv --mapping <preset>` does, in
 * quote rows per second (for `databento-definition`, definition rows: one per contract and session). The baseline, measured in the same run and alternating with ours, is DuckDB alone
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

/** The OSI symbol of a point's call or put, as Databento prints it (the root padded to six). */
const osiOf = (p: Point, side: 'C' | 'P') =>
  `SPY   ${p.expiration.slice(2).replaceAll('-', '')}${side}${String(p.strike * 1000).padStart(8, '0')}`;

/**
 * A file per preset in its vendor's layout, and the rows it brings: quotes, or for a definitions file
 * (`contracts`) the contracts the commit lists from it.
 */
const LAYOUTS: Record<
  string,
  {
    options: { mapping: string; symbol?: string };
    /** The file's text, the rows it brings, and (when not those) the source rows the rate counts. */
    write: () => [string, number, number?];
    counts?: 'contracts';
  }
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
          return `${p.session}T19:45:00.000000000Z,${p.session}T19:44:59.000000000Z,194,30,${p.i},N,${x.bid},1,128,${x.bid},${x.ask},12,30,1,1,${osiOf(p, side)}`;
        }),
      );
      return [[header, ...rows].join('\n'), rows.length];
    },
  },
  'thetadata-greeks': {
    options: { mapping: 'thetadata-greeks' },
    write: () => {
      const header =
        'symbol,expiration,strike,right,timestamp,open,high,low,close,volume,count,bid_size,bid_exchange,bid,bid_condition,ask_size,ask_exchange,ask,ask_condition,delta,theta,vega,rho,epsilon,lambda,gamma,vanna,charm,vomma,veta,vera,speed,zomma,color,ultima,d1,d2,dual_delta,dual_gamma,implied_vol,iv_error,underlying_timestamp,underlying_price';
      const rows = points().flatMap((p) =>
        (['CALL', 'PUT'] as const).map((right) => {
          const x = price(p, right === 'PUT');
          const delta = right === 'PUT' ? '-0.4800' : '0.5200';
          return `"SPY","${p.expiration}",${p.strike}.000,"${right}",${p.session}T15:59:58.000,${x.bid},${x.ask},${x.bid},${x.bid},${p.i},3,10,5,${x.bid},50,12,7,${x.ask},50,${delta},-0.2100,45.0000,0.1000,-0.1000,10.0000,0.0200,0.1000,-0.0100,0.2000,-1.0000,0.0100,-0.0001,0.0300,-0.0040,-0.0001,0.0500,0.0300,-0.4900,0.0200,0.2100,0.0001,${p.session}T17:15:18.701,470.0000`;
        }),
      );
      return [[header, ...rows].join('\n'), rows.length];
    },
  },
  'databento-definition': {
    options: { mapping: 'databento-definition' },
    counts: 'contracts',
    write: () => {
      const header =
        'ts_recv,ts_event,rtype,publisher_id,instrument_id,raw_symbol,security_update_action,instrument_class,min_price_increment,display_factor,expiration,activation,high_limit_price,low_limit_price,max_price_variation,unit_of_measure_qty,min_price_increment_amount,price_ratio,inst_attrib_value,underlying_id,raw_instrument_id,market_depth_implied,market_depth,market_segment_id,max_trade_vol,min_lot_size,min_lot_size_block,min_lot_size_round_lot,min_trade_vol,contract_multiplier,decay_quantity,original_contract_size,appl_id,maturity_year,decay_start_date,channel_id,currency,settl_currency,secsubtype,group,exchange,asset,cfi,security_type,unit_of_measure,underlying,strike_price_currency,strike_price,match_algorithm,main_fraction,price_display_format,sub_fraction,underlying_product,maturity_month,maturity_day,maturity_week,user_defined_instrument,contract_multiplier_unit,flow_schedule_type,tick_rule,leg_count,leg_index,leg_instrument_id,leg_raw_symbol,leg_instrument_class,leg_side,leg_price,leg_delta,leg_ratio_price_numerator,leg_ratio_price_denominator,leg_ratio_qty_numerator,leg_ratio_qty_denominator,leg_underlying_id,symbol';
      // One definition per contract and session, as Databento sends them each morning.
      const rows = points().flatMap((p) =>
        (['C', 'P'] as const).map((side) => {
          const osi = osiOf(p, side);
          return `${p.session}T10:30:00.412345678Z,${p.session}T10:30:00.400000000Z,19,30,${p.i},${osi},A,${side},0.010000000,1.000000000,${p.expiration}T20:00:00.000000000Z,,,,,${p.i % 50 === 0 ? '10' : '100'}.000000000,,,0,0,${p.i},0,0,0,0,0,0,0,0,0,0,0,0,${p.expiration.slice(0, 4)},0,0,USD,,,,,SPY,O${side}ASPS,OOC,,SPY,USD,${p.strike}.000000000,,0,0,0,0,${Number(p.expiration.slice(5, 7))},${Number(p.expiration.slice(8))},0,N,0,0,0,0,0,0,,,,,,0,0,0,0,0,${osi}`;
        }),
      );
      return [[header, ...rows].join('\n'), EXPIRATIONS.length * STRIKES.length * 2, rows.length];
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
      const [text, quotes, sourceRows = quotes] = layout.write();
      const what = layout.counts === 'contracts' ? 'definition rows' : 'quotes';
      const file = join(dir, `${preset}.csv`);
      await writeFile(file, `${text}\n`);
      const ours: number[] = [];
      const baseline: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const store = join(dir, `${preset}-store-${run}`);
        let started = performance.now();
        const tx = await WriteTransaction.begin(store, { create: true });
        const staged = await stageFiles(tx.sql, [file], 'csv', layout.options);
        const committed = await commitStaged(tx, staged);
        const brought = layout.counts === 'contracts' ? committed.rows.contracts : staged.rows.option_quotes;
        if (brought !== quotes) {
          throw new Error(`${preset}: ${brought} ${layout.counts ?? 'quotes'} staged, ${quotes} expected`);
        }
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
      const mine = perSecond(sourceRows, summarise(ours).p50Ms);
      const theirs = perSecond(sourceRows, summarise(baseline).p50Ms);
      ctx.log(
        `${preset}: ${sourceRows.toLocaleString('en-US')} ${what}, ${Math.round(mine).toLocaleString('en-US')} rows/s`,
      );
      rows.push(
        ratioRow({
          name: `ingest --mapping ${preset} (${sourceRows.toLocaleString('en-US')} ${what})`,
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
