/**
 * The JSON shape of a `csv` mapping (see `./csv-mapping.ts` for what each key means), its validation, and
 * the built-in mappings of vendor layouts (`--mapping optionsdx`), each with the timing its vendor
 * documents (docs/vendor-formats.md).
 */
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { UsageError } from '../../errors.js';
import { MARKET_ZONE } from '../../market-time/index.js';

/**
 * Where a value comes from: a column name (`"Bid"`); a column with a factor (`{"column", "scale"}`); one
 * part of a composite column (`{"column": "C_SIZE", "part": 0, "separator": "x"}` reads 12 from
 * `"12 x 30"`); a constant (`{"value": "SPY"}`); or the mid of two price columns (`{"mid": ["Bid", "Ask"]}`).
 */
const Column = z.union([
  z.string().min(1),
  z.strictObject({
    column: z.string().min(1),
    scale: z.number().positive().optional(),
    part: z.number().int().nonnegative().optional(),
    separator: z.string().min(1).optional(),
  }),
  z.strictObject({ value: z.union([z.string().min(1), z.number()]) }),
  /** The mid of two price columns, where both are above 0 (Cboe's underlying bid and ask). */
  z.strictObject({ mid: z.tuple([z.string().min(1), z.string().min(1)]) }),
]);

/** A source of a value, as the mapping gives it. */
export type ColumnSpec = z.output<typeof Column>;

const WALL_TIME = /^([01]?\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/;

/** A column of instants, read with a strptime format (wall time in the mapping's `timeZone` unless `%z`). */
const TimeColumn = z.strictObject({ column: z.string().min(1), format: z.string().min(1) });

const OpenInterest = z.union([
  Column,
  z.strictObject({
    column: z.string().min(1),
    settled: z.enum(['previous', 'same']).default('previous'),
    /** Minutes from 09:30 ET of the publishing session (−180: 06:30 ET, as OPRA publishes). */
    publishedFromOpen: z.number().int().default(0),
  }),
  /** A source that stamps each figure: the session it was settled from, and when it was published. */
  z.strictObject({ column: z.string().min(1), settledOn: TimeColumn, publishedAt: TimeColumn }),
]);

/** The fields a side of a wide row (a call and a put on one line) gives on its own. */
const SideFields = z.strictObject({
  bid: Column.optional(),
  ask: Column.optional(),
  bidSize: Column.optional(),
  askSize: Column.optional(),
  last: Column.optional(),
  volume: Column.optional(),
  iv: Column.optional(),
  delta: Column.optional(),
  gamma: Column.optional(),
  theta: Column.optional(),
  vega: Column.optional(),
  openInterest: OpenInterest.optional(),
});

/** The JSON shape of a `csv` mapping. */
export const OptionMappingSchema = z
  .strictObject({
    header: z.boolean().default(true),
    /** Column names of a headerless file, in order. */
    columns: z.array(z.string().min(1)).optional(),
    delimiter: z.string().length(1).default(','),
    dateFormat: z.string().min(1).default('%Y-%m-%d'),
    timeZone: z.string().min(1).default(MARKET_ZONE),
    priceScale: z.number().positive().default(1),
    quoteTime: z
      .union([
        z.string().regex(WALL_TIME, 'a wall time like 16:00'),
        z.literal('close'),
        z.strictObject({ column: z.string().min(1), format: z.string().min(1) }),
        /** Minutes before the session's close (ORATS snaps 14 minutes before it). */
        z.strictObject({ beforeClose: z.number().int().positive() }),
      ])
      .default('16:00'),
    volumeTime: z.enum(['quote', 'close']).default('quote'),
    sessionDate: Column.optional(),
    optionSymbol: Column.optional(),
    underlying: Column.optional(),
    root: Column.optional(),
    expiration: Column.optional(),
    side: z
      .union([
        Column,
        z.strictObject({ column: z.string().min(1), values: z.record(z.string(), z.enum(['call', 'put'])) }),
      ])
      .optional(),
    /** A wide row: the call's and the put's own columns; the row yields one quote for each. */
    sides: z.strictObject({ call: SideFields, put: SideFields }).optional(),
    strike: Column.optional(),
    ...SideFields.shape,
    underlyingPrice: Column.optional(),
    /**
     * The contract's multiplier (units of the underlying per contract): each row then also states its
     * contract, listed by the row's session and nonstandard (adjusted) when the multiplier is not 100.
     */
    multiplier: Column.optional(),
    lastZeroIsNoTrade: z.boolean().default(false),
    /** Only rows whose column holds one of these values are read (Databento statistics: `stat_type` 9). */
    where: z
      .strictObject({ column: z.string().min(1), equals: z.array(z.string().min(1)).min(1) })
      .optional(),
    /** Columns a vendor includes only on request: when absent, the fields they feed are left out. */
    optionalColumns: z.array(z.string().min(1)).default([]),
    /** `false`: the file holds open interest only (ThetaData's OI report); its rows are not quotes. */
    quotes: z.boolean().default(true),
  })
  .superRefine((m, context) => {
    const keys =
      m.expiration !== undefined && (m.side !== undefined || m.sides !== undefined) && m.strike !== undefined;
    if (m.optionSymbol === undefined && !keys) {
      context.addIssue({
        code: 'custom',
        path: ['optionSymbol'],
        message: 'give optionSymbol, or expiration, side (or sides) and strike',
      });
    }
    if (m.sides !== undefined && (m.side !== undefined || m.optionSymbol !== undefined)) {
      context.addIssue({
        code: 'custom',
        path: ['sides'],
        message: 'a wide row names its sides by sides; give neither side nor optionSymbol',
      });
    }
    if (m.sessionDate === undefined && !(typeof m.quoteTime === 'object' && 'column' in m.quoteTime)) {
      context.addIssue({
        code: 'custom',
        path: ['sessionDate'],
        message: 'needed unless quoteTime is a column',
      });
    }
    if (!m.header && m.columns === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['columns'],
        message: 'a headerless file needs its column names',
      });
    }
  });

/** A validated `csv` mapping. */
export type OptionMapping = z.output<typeof OptionMappingSchema>;

/** Greeks in the store's units (iv a fraction, theta per day, vega per volatility point): no factor. */
const sideOf = (prefix: string, columns: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(columns).map(([field, column]) => [field, `${prefix}${column}`]));

/** ThetaData's contract columns, as its reports (EOD, Greeks EOD, open interest) spell them. */
const THETADATA_CONTRACT = {
  root: 'symbol',
  expiration: 'expiration',
  strike: 'strike',
  side: {
    column: 'right',
    values: { CALL: 'call', PUT: 'put', call: 'call', put: 'put', C: 'call', P: 'put' },
  },
} as const;

/** The 17:15 ET report's quote and trade columns, in its EOD and Greeks EOD reports alike. */
const THETADATA_REPORT = {
  last: 'close',
  volume: 'volume',
  bid: 'bid',
  ask: 'ask',
  bidSize: 'bid_size',
  askSize: 'ask_size',
} as const;

/**
 * The built-in mappings. Each states its vendor's documented layout and timing (docs/vendor-formats.md):
 * - `orats`: the near-EOD strikes file (`ticker,tradeDate,expirDate,…`), one row per strike with the call's
 *   and the put's quotes, snapped 14 minutes before the close; the per-side mid IVs are the IV, the Greeks
 *   (ORATS prints the call's) go on the call; the smoothed `smvVol` is not a quote field and is not stored.
 * - `thetadata`: the v3 option EOD report (`symbol,expiration,strike,right,created,last_trade,…`), generated
 *   17:15 ET: `created` is the quote time (the last NBBO at the report), `close` the last trade's price.
 * - `cboe-intervals`: Cboe DataShop Option Quotes intervals (`underlying_symbol,quote_datetime,root,…`),
 *   one NBBO snapshot per contract and interval at `quote_datetime` (ET); its OHLC and `trade_volume` are
 *   the interval's own, not the session's, so they are not stored; the optional Calcs (IV, Greeks at the
 *   snapshot) and start-of-day open interest (settled the session before) are read when the file has them.
 * - `databento`: OPRA `cbbo-1m` / `bbo-1m` CSV exports (`pretty_px`, `pretty_ts`, `map_symbols`): one
 *   consolidated BBO per contract and minute, known at `ts_recv` (UTC), the contract its OSI `symbol`.
 * - `databento-statistics`: OPRA `statistics` CSV exports: the open interest rows (`stat_type` 9), each the
 *   figure of the session `ts_ref` names, published when Databento received it (`ts_recv`).
 * - `databento-definition`: OPRA `definition` CSV exports: one row per option and day, its terms in its OSI
 *   `symbol` and its contract size in `unit_of_measure_qty`; each row lists its contract from the session
 *   of `ts_recv` (the morning definition), nonstandard when the size is not 100. No quotes.
 * - `thetadata-greeks`: the v3 option Greeks EOD report (`symbol,expiration,strike,right,timestamp,…,delta,
 *   theta,vega,…,implied_vol,iv_error,underlying_timestamp,underlying_price`), computed from the 17:15 ET
 *   report's closing prices: every field known at `underlying_timestamp` (the report's underlying stamp);
 *   vega printed per 1.00 of volatility ("Rho & Vega must be divided by 100"), theta per day, IV a fraction.
 * - `thetadata-oi`: the v3 open-interest report (`symbol,expiration,strike,right,timestamp,open_interest`),
 *   the previous session's figure, published 06:30 ET.
 * - `optionsdx`: one row per strike and quote time with the call's (`C_…`) and the put's (`P_…`) columns,
 *   bracketed headers, sizes as `"bid x ask"`; `QUOTE_READTIME` is the true quote time (16:00 ET in EOD
 *   files); no open interest; the underlying is not a column (`--symbol`).
 */
export const OPTION_PRESETS = {
  optionsdx: {
    sessionDate: 'QUOTE_DATE',
    quoteTime: { column: 'QUOTE_READTIME', format: '%Y-%m-%d %H:%M' },
    expiration: 'EXPIRE_DATE',
    strike: 'STRIKE',
    underlyingPrice: 'UNDERLYING_LAST',
    sides: {
      call: {
        ...sideOf('C_', { bid: 'BID', ask: 'ASK', last: 'LAST', volume: 'VOLUME', iv: 'IV' }),
        ...sideOf('C_', { delta: 'DELTA', gamma: 'GAMMA', theta: 'THETA', vega: 'VEGA' }),
        bidSize: { column: 'C_SIZE', part: 0, separator: 'x' },
        askSize: { column: 'C_SIZE', part: 1, separator: 'x' },
      },
      put: {
        ...sideOf('P_', { bid: 'BID', ask: 'ASK', last: 'LAST', volume: 'VOLUME', iv: 'IV' }),
        ...sideOf('P_', { delta: 'DELTA', gamma: 'GAMMA', theta: 'THETA', vega: 'VEGA' }),
        bidSize: { column: 'P_SIZE', part: 0, separator: 'x' },
        askSize: { column: 'P_SIZE', part: 1, separator: 'x' },
      },
    },
    lastZeroIsNoTrade: true,
  },
  orats: {
    underlying: 'ticker',
    sessionDate: 'tradeDate',
    quoteTime: { beforeClose: 14 },
    expiration: 'expirDate',
    strike: 'strike',
    underlyingPrice: 'stockPrice',
    sides: {
      call: {
        bid: 'callBidPrice',
        ask: 'callAskPrice',
        bidSize: 'callBidSize',
        askSize: 'callAskSize',
        volume: 'callVolume',
        openInterest: 'callOpenInterest',
        iv: 'callMidIv',
        delta: 'delta',
        gamma: 'gamma',
        theta: 'theta',
        vega: 'vega',
      },
      put: {
        bid: 'putBidPrice',
        ask: 'putAskPrice',
        bidSize: 'putBidSize',
        askSize: 'putAskSize',
        volume: 'putVolume',
        openInterest: 'putOpenInterest',
        iv: 'putMidIv',
      },
    },
  },
  thetadata: {
    ...THETADATA_CONTRACT,
    quoteTime: { column: 'created', format: '%Y-%m-%dT%H:%M:%S.%g' },
    ...THETADATA_REPORT,
  },
  'thetadata-greeks': {
    ...THETADATA_CONTRACT,
    quoteTime: { column: 'underlying_timestamp', format: '%Y-%m-%dT%H:%M:%S.%g' },
    ...THETADATA_REPORT,
    underlyingPrice: 'underlying_price',
    iv: 'implied_vol',
    delta: 'delta',
    gamma: 'gamma',
    theta: 'theta',
    vega: { column: 'vega', scale: 0.01 },
  },
  'thetadata-oi': {
    ...THETADATA_CONTRACT,
    quoteTime: { column: 'timestamp', format: '%Y-%m-%dT%H:%M:%S.%g' },
    openInterest: { column: 'open_interest', settled: 'previous', publishedFromOpen: -180 },
    quotes: false,
  },
  'cboe-intervals': {
    underlying: 'underlying_symbol',
    root: 'root',
    expiration: 'expiration',
    strike: 'strike',
    side: 'option_type',
    quoteTime: { column: 'quote_datetime', format: '%Y-%m-%d %H:%M:%S' },
    bid: 'bid',
    ask: 'ask',
    bidSize: 'bid_size',
    askSize: 'ask_size',
    underlyingPrice: { mid: ['underlying_bid', 'underlying_ask'] },
    iv: 'implied_volatility',
    delta: 'delta',
    gamma: 'gamma',
    theta: 'theta',
    vega: 'vega',
    openInterest: { column: 'open_interest', settled: 'previous' },
    optionalColumns: ['implied_volatility', 'delta', 'gamma', 'theta', 'vega', 'open_interest'],
  },
  databento: {
    optionSymbol: 'symbol',
    quoteTime: { column: 'ts_recv', format: '%Y-%m-%dT%H:%M:%S.%nZ' },
    timeZone: 'UTC',
    bid: 'bid_px_00',
    ask: 'ask_px_00',
    bidSize: 'bid_sz_00',
    askSize: 'ask_sz_00',
  },
  'databento-statistics': {
    optionSymbol: 'symbol',
    quoteTime: { column: 'ts_recv', format: '%Y-%m-%dT%H:%M:%S.%nZ' },
    timeZone: 'UTC',
    where: { column: 'stat_type', equals: ['9'] },
    openInterest: {
      column: 'quantity',
      settledOn: { column: 'ts_ref', format: '%Y-%m-%dT%H:%M:%S.%nZ' },
      publishedAt: { column: 'ts_recv', format: '%Y-%m-%dT%H:%M:%S.%nZ' },
    },
    quotes: false,
  },
  'databento-definition': {
    optionSymbol: 'symbol',
    quoteTime: { column: 'ts_recv', format: '%Y-%m-%dT%H:%M:%S.%nZ' },
    timeZone: 'UTC',
    where: { column: 'instrument_class', equals: ['C', 'P'] },
    multiplier: 'unit_of_measure_qty',
    quotes: false,
  },
} as const satisfies Record<string, z.input<typeof OptionMappingSchema>>;

/** A preset name of `OPTION_PRESETS`. */
export type OptionPreset = keyof typeof OPTION_PRESETS;

/** Validates a mapping object; throws a `UsageError` naming `source` and the offending keys. */
export function parseOptionMapping(value: unknown, source = 'mapping'): OptionMapping {
  const parsed = OptionMappingSchema.safeParse(value);
  if (!parsed.success)
    throw new UsageError(`invalid csv mapping ${source}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/**
 * Mappings already read and validated, by the `mapping` option, with the file's modification time and
 * size (empty for a preset or inline JSON): an ingest of many files reads and validates its mapping once,
 * while an edited mapping file is read again. Kept to the last few.
 */
const loaded = new Map<string, { readonly stamp: string; readonly mapping: OptionMapping }>();
const LOADED_KEPT = 16;

/**
 * The mapping of the `mapping` option: a preset name (`optionsdx`), inline JSON (starting with `{`) or the
 * path of a JSON file. A JSON mapping with a `preset` key starts from that preset, its other keys winning.
 */
export async function loadOptionMapping(mapping: string | undefined): Promise<OptionMapping> {
  if (mapping === undefined) {
    throw new UsageError(`format csv needs --mapping <file.json> or a preset (${presetNames()})`);
  }
  const inline = mapping.trimStart().startsWith('{');
  const file = !inline && !Object.hasOwn(OPTION_PRESETS, mapping);
  const stat = file ? await fs.stat(mapping).catch(() => undefined) : undefined;
  const stamp = stat === undefined ? '' : `${stat.mtimeMs}:${stat.size}`;
  const known = loaded.get(mapping);
  if (known !== undefined && known.stamp === stamp && (stat !== undefined || !file)) return known.mapping;
  const read = await readOptionMapping(mapping, inline);
  loaded.delete(mapping);
  loaded.set(mapping, { stamp, mapping: read });
  if (loaded.size > LOADED_KEPT) loaded.delete(loaded.keys().next().value!);
  return read;
}

async function readOptionMapping(mapping: string, inline: boolean): Promise<OptionMapping> {
  if (Object.hasOwn(OPTION_PRESETS, mapping)) {
    return parseOptionMapping(OPTION_PRESETS[mapping as OptionPreset], mapping);
  }
  const source = inline ? '(inline)' : mapping;
  let text = mapping;
  if (!inline) {
    try {
      text = await fs.readFile(mapping, 'utf8');
    } catch (cause) {
      throw new UsageError(`cannot read mapping ${mapping}: ${(cause as Error).message}`, { cause });
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new UsageError(`mapping ${source} is not JSON: ${(cause as Error).message}`, { cause });
  }
  if (typeof value === 'object' && value !== null && 'preset' in value) {
    const { preset, ...rest } = value as { preset: unknown };
    if (typeof preset !== 'string' || !Object.hasOwn(OPTION_PRESETS, preset)) {
      throw new UsageError(`mapping ${source}: unknown preset ${JSON.stringify(preset)} (${presetNames()})`);
    }
    value = { ...OPTION_PRESETS[preset as OptionPreset], ...rest };
  }
  return parseOptionMapping(value, source);
}

function presetNames(): string {
  return Object.keys(OPTION_PRESETS).join(', ');
}
