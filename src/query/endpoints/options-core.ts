/**
 * The one query core under the option endpoints: which snapshot answers each contract at an as-of
 * (dated: the EOD row of session D; current: per field the latest value known at the cutoff), and the
 * service's row computed from it (mid, moneyness, dte, Greeks). The endpoints are thin over it.
 */
import { MarketDataError } from '../../errors.js';
import {
  dte,
  etWallToSeconds,
  isSession,
  previousSession,
  toEtDate,
  underlyingOfRoot,
} from '../../market-time/index.js';
import type { OptionSide } from '../../occ/index.js';
import type { SqlSession, SqlValue } from '../../store/sql.js';
import { greekColumns, RISK_FREE_RATE, yearsBetween } from '../greeks.js';
import type { AsOf, Field, FieldKind, NoData } from '../types.js';

/** Which contracts a query reads: an underlying's chain (optionally one root of it) or one contract. */
export type Scope =
  | { readonly underlying: string; readonly root?: string }
  | { readonly optionSymbol: string };

/** A contract with the snapshot and open interest that answer it, as the store returns them. */
export type SnapshotRow = {
  readonly option_symbol: string;
  readonly underlying: string;
  readonly root: string;
  readonly expiration: string;
  readonly expiration_time: number;
  readonly side: OptionSide;
  readonly strike: number;
  readonly settlement: 'AM' | 'PM';
  readonly monthly: boolean;
  readonly weekly: boolean;
  readonly quarterly: boolean;
  readonly nonstandard: boolean;
  readonly first_traded: string;
  readonly session_date: string;
  readonly quote_time: number;
  readonly bid: number | null;
  readonly ask: number | null;
  readonly bid_size: number | null;
  readonly ask_size: number | null;
  readonly last: number | null;
  readonly volume: number | null;
  readonly volume_time: number | null;
  readonly underlying_price: number | null;
  readonly iv: number | null;
  readonly delta: number | null;
  readonly gamma: number | null;
  readonly theta: number | null;
  readonly vega: number | null;
  readonly open_interest: number | null;
  readonly oi_published_at: number | null;
};

/** The service's option row (chain and option quotes), field for field. */
export type OptionValues = {
  readonly optionSymbol: string;
  readonly underlying: string;
  readonly expiration: number;
  readonly side: OptionSide;
  readonly strike: number;
  readonly firstTraded: number;
  readonly dte: number;
  readonly updated: number;
  readonly bid: number | null;
  readonly bidSize: number | null;
  readonly mid: number | null;
  readonly ask: number | null;
  readonly askSize: number | null;
  readonly last: number | null;
  readonly openInterest: number | null;
  readonly volume: number | null;
  readonly inTheMoney: boolean | null;
  readonly intrinsicValue: number | null;
  readonly extrinsicValue: number | null;
  readonly underlyingPrice: number | null;
  readonly iv: number | null;
  readonly delta: number | null;
  readonly gamma: number | null;
  readonly theta: number | null;
  readonly vega: number | null;
};

/** An option row with what filtering needs: its expiration group (`root:date`) and when its values were known. */
export type OptionRecord = OptionValues & {
  readonly group: string;
  readonly expirationDate: string;
  readonly knownAt: number;
};

/** Keys, human keys (api-reference §7) and kinds of the option row, in the service's order. */
export const OPTION_COLUMNS: readonly { key: keyof OptionValues; human: string; kind: FieldKind }[] = [
  { key: 'optionSymbol', human: 'Symbol', kind: 'string' },
  { key: 'underlying', human: 'Underlying', kind: 'string' },
  { key: 'expiration', human: 'Expiration Date', kind: 'instant' },
  { key: 'side', human: 'Option Side', kind: 'string' },
  { key: 'strike', human: 'Strike', kind: 'number' },
  { key: 'firstTraded', human: 'First Traded', kind: 'instant' },
  { key: 'dte', human: 'Days To Expiration', kind: 'integer' },
  { key: 'updated', human: 'Date', kind: 'instant' },
  { key: 'bid', human: 'Bid', kind: 'number' },
  { key: 'bidSize', human: 'Bid Size', kind: 'integer' },
  { key: 'mid', human: 'Mid', kind: 'number' },
  { key: 'ask', human: 'Ask', kind: 'number' },
  { key: 'askSize', human: 'Ask Size', kind: 'integer' },
  { key: 'last', human: 'Last', kind: 'number' },
  { key: 'openInterest', human: 'Open Interest', kind: 'integer' },
  { key: 'volume', human: 'Volume', kind: 'integer' },
  { key: 'inTheMoney', human: 'In The Money', kind: 'boolean' },
  { key: 'intrinsicValue', human: 'Intrinsic Value', kind: 'number' },
  { key: 'extrinsicValue', human: 'Extrinsic Value', kind: 'number' },
  { key: 'underlyingPrice', human: 'Underlying Price', kind: 'number' },
  { key: 'iv', human: 'IV', kind: 'number' },
  { key: 'delta', human: 'Delta', kind: 'number' },
  { key: 'gamma', human: 'Gamma', kind: 'number' },
  { key: 'theta', human: 'Theta', kind: 'number' },
  { key: 'vega', human: 'Vega', kind: 'number' },
];

/** The body of 404 answers for a contract the store does not hold (api-reference §3.2). */
export const NO_OPTION_FOUND = 'No option found. No option was found for this strike and expiration.';

/** The Eastern time of day of an end-of-day row's `updated` (semantics §3), also on early-close days. */
const EOD_TIME = '16:00';

/** The instant a dated answer for `session` is `updated` at: 16:00 ET on that date. */
export function eodSeconds(session: string): number {
  return etWallToSeconds(session, EOD_TIME);
}

/**
 * The session an as-of answers for: D when dated; for a current answer the session whose EOD it serves
 * (modes eod and historical), else the session holding the cutoff, or the last one before a closed day.
 * `dte` counts from it and contracts that expired before it are no longer listed.
 */
export function asOfSession(asOf: AsOf): string {
  if (asOf.kind === 'dated') return asOf.session;
  if (asOf.eodOnly && asOf.maxSession !== null) return asOf.maxSession;
  const date = toEtDate(asOf.cutoffSeconds);
  return isSession(date) ? date : previousSession(date);
}

/** Refuses a dated request for a date the exchange was closed (semantics §5). */
export function ensureDatedSession(asOf: AsOf): void {
  if (asOf.kind === 'dated' && !isSession(asOf.session)) {
    throw new MarketDataError(404, 'Market closed on this date.', {
      body: { s: 'no_data', errmsg: 'Market closed on this date.' },
    });
  }
}

/** The answer for a symbol the store has never seen (semantics §6). */
export const SYMBOL_NOT_FOUND: NoData = { kind: 'no_data', errmsg: 'Symbol not found.' };

/**
 * Rounds to the cent the way the service does, i.e. the decimal nearest to the binary value, an exact
 * half cent to the even cent: every `mid` of the documented chain is `(bid + ask) / 2` rounded so.
 */
export function roundCents(value: number): number {
  const eighths = value * 8;
  let rounded: number;
  if (Number.isInteger(eighths) && Math.abs(eighths) % 2 === 1) {
    const floor = Math.floor(value * 100);
    rounded = (floor % 2 === 0 ? floor : floor + 1) / 100;
  } else {
    rounded = Number(value.toFixed(2));
  }
  return rounded === 0 ? 0 : rounded;
}

type Options = {
  /** Dated: the sessions to answer (default: the as-of session); each row is that session's EOD row. */
  readonly sessions?: readonly string[];
  /** Only these expiration groups (`root:YYYY-MM-DD`). */
  readonly groups?: readonly string[];
};

/**
 * SQL defining the CTE `answer_rows` (columns of {@link SnapshotRow}) for an as-of, with its bound
 * parameters. Dated: each contract's latest snapshot of each session (the EOD row, 16:15 for index roots
 * when the store holds it), OI settled from the session before. Current: each contract's latest snapshot
 * with q ≤ cutoff — when `eodOnly`, only sessions' last snapshots up to `maxSession` — and the latest OI
 * published by the cutoff; contracts expired before the as-of session are left out.
 */
export function answerRowsSql(
  asOf: AsOf,
  scope: Scope,
  options: Options = {},
): { sql: string; params: Record<string, SqlValue> } {
  const params: Record<string, SqlValue> = {};
  const contractWhere: string[] = [];
  let quoteScope: string;
  let interestScope: string;
  if ('optionSymbol' in scope) {
    params['symbol'] = scope.optionSymbol;
    contractWhere.push('c.option_symbol = $symbol');
    quoteScope = 'q.option_symbol = $symbol';
    interestScope = 'o.option_symbol = $symbol';
  } else {
    params['underlying'] = scope.underlying;
    contractWhere.push('c.underlying = $underlying');
    if (scope.root !== undefined) {
      params['root'] = scope.root;
      contractWhere.push('c.root = $root');
    }
    quoteScope = 'q.underlying = $underlying';
    interestScope = 'o.underlying = $underlying';
  }
  if (options.groups !== undefined) {
    params['groups'] = options.groups.join(',');
    contractWhere.push(
      `list_contains(string_split($groups, ','), c.root || ':' || strftime(c.expiration, '%Y-%m-%d'))`,
    );
  }
  const columns = `c.option_symbol, c.underlying, c.root, c.expiration, c.expiration_time, c.side, c.strike,
      c.settlement, c.monthly, c.weekly, c.quarterly, c.nonstandard, c.first_traded, s.session_date,
      s.quote_time, s.bid, s.ask, s.bid_size, s.ask_size, s.last, s.volume, s.volume_time, s.underlying_price,
      s.iv, s.delta, s.gamma, s.theta, s.vega, i.open_interest, i.published_at AS oi_published_at`;

  if (asOf.kind === 'dated') {
    const sessions = [...(options.sessions ?? [asOf.session])].sort();
    params['sessions'] = sessions.join(',');
    params['oiSessions'] = sessions.map((session) => previousSession(session)).join(',');
    params['first'] = sessions[0] ?? asOf.session;
    params['last'] = sessions.at(-1) ?? asOf.session;
    const sql = `
      WITH days AS (
        SELECT CAST(d AS DATE) AS session_date, CAST(p AS DATE) AS oi_session
        FROM (SELECT unnest(string_split($sessions, ',')) AS d, unnest(string_split($oiSessions, ',')) AS p)
        WHERE d <> ''
      ), snap AS (
        SELECT q.* FROM option_quotes q
        WHERE ${quoteScope}
          AND q.session_date BETWEEN CAST($first AS DATE) AND CAST($last AS DATE)
          AND q.session_date IN (SELECT session_date FROM days)
          AND q.option_symbol IN (SELECT c.option_symbol FROM contracts c WHERE ${contractWhere.join(' AND ')})
        QUALIFY row_number() OVER (PARTITION BY q.option_symbol, q.session_date ORDER BY q.quote_time DESC) = 1
      ), interest AS (
        SELECT o.option_symbol, o.settled_session, o.open_interest, o.published_at FROM open_interest o
        WHERE ${interestScope}
          AND o.settled_session IN (SELECT oi_session FROM days)
          AND o.option_symbol IN (SELECT option_symbol FROM snap)
      ), answer_rows AS (
        SELECT ${columns}
        FROM snap s
        JOIN contracts c ON c.option_symbol = s.option_symbol
        JOIN days d ON d.session_date = s.session_date
        LEFT JOIN interest i ON i.option_symbol = s.option_symbol AND i.settled_session = d.oi_session
        WHERE c.expiration >= s.session_date
      )`;
    return { sql, params };
  }

  params['session'] = asOfSession(asOf);
  params['cutoff'] = asOf.cutoffSeconds;
  const eodOnly = asOf.eodOnly;
  params['lastSession'] =
    eodOnly && asOf.maxSession !== null ? asOf.maxSession : toEtDate(asOf.cutoffSeconds);
  const sql = `
    WITH snap AS (
      SELECT * FROM (
        SELECT q.*${eodOnly ? ', max(q.quote_time) OVER (PARTITION BY q.option_symbol, q.session_date) AS eod_time' : ''}
        FROM option_quotes q
        WHERE ${quoteScope}
          AND q.session_date <= CAST($lastSession AS DATE)
          AND q.option_symbol IN (
            SELECT c.option_symbol FROM contracts c
            WHERE ${contractWhere.join(' AND ')} AND c.expiration >= CAST($session AS DATE))
      )
      WHERE quote_time <= to_timestamp($cutoff)${eodOnly ? ' AND quote_time = eod_time' : ''}
      QUALIFY row_number() OVER (PARTITION BY option_symbol ORDER BY quote_time DESC) = 1
    ), interest AS (
      SELECT o.option_symbol, o.open_interest, o.published_at FROM open_interest o
      WHERE ${interestScope}
        AND o.published_at <= to_timestamp($cutoff)
        AND o.option_symbol IN (SELECT option_symbol FROM snap)
      QUALIFY row_number() OVER (PARTITION BY o.option_symbol ORDER BY o.settled_session DESC, o.published_at DESC) = 1
    ), answer_rows AS (
      SELECT ${columns}
      FROM snap s
      JOIN contracts c ON c.option_symbol = s.option_symbol
      LEFT JOIN interest i ON i.option_symbol = s.option_symbol
    )`;
  return { sql, params };
}

/** The contract rows answering at `asOf`, in no particular order. */
export async function readAnswerRows(
  sql: SqlSession,
  asOf: AsOf,
  scope: Scope,
  options: Options = {},
): Promise<SnapshotRow[]> {
  const query = answerRowsSql(asOf, scope, options);
  return sql.all<SnapshotRow>(`${query.sql} SELECT * FROM answer_rows`, query.params);
}

/**
 * The service's rows from the store's. Dated rows: Greeks and IV null, `updated` 16:00 ET of the row's
 * session, `dte` from it. Current rows: `updated` = the snapshot's quote time, `dte` from the as-of
 * session, volume only when its stamp is known at the cutoff, vendor Greeks or Black–Scholes ones.
 */
export function toRecords(rows: readonly SnapshotRow[], asOf: AsOf): OptionRecord[] {
  const current = asOf.kind === 'current' ? asOf : undefined;
  const session = asOfSession(asOf);
  return rows.map((row) => {
    const spot = row.underlying_price;
    const strike = Number(row.strike);
    const rawMid = row.bid === null || row.ask === null ? null : (row.bid + row.ask) / 2;
    const mid = rawMid === null ? null : roundCents(rawMid);
    const intrinsicRaw =
      spot === null ? null : Math.max(0, row.side === 'call' ? spot - strike : strike - spot);
    const intrinsicValue = intrinsicRaw === null ? null : roundCents(intrinsicRaw);
    // The service prints extrinsic value unsigned: its deep in-the-money puts quoted under parity show
    // mid 69.75, intrinsic 69.87, extrinsic 0.12.
    const extrinsicValue =
      mid === null || intrinsicValue === null ? null : roundCents(Math.abs(mid - intrinsicValue));
    const inTheMoney = spot === null ? null : row.side === 'call' ? spot > strike : strike > spot;
    const volumeTime = row.volume_time ?? row.quote_time;
    const volumeKnown = current === undefined || volumeTime <= current.cutoffSeconds;
    const volume = volumeKnown ? row.volume : null;
    const openInterest = row.open_interest;
    const knownAt = Math.max(
      row.quote_time,
      volume === null ? row.quote_time : volumeTime,
      openInterest === null || row.oi_published_at === null ? row.quote_time : row.oi_published_at,
    );
    let greeks = { iv: null, delta: null, gamma: null, theta: null, vega: null } as {
      iv: number | null;
      delta: number | null;
      gamma: number | null;
      theta: number | null;
      vega: number | null;
    };
    if (current !== undefined) {
      const vendor = { iv: row.iv, delta: row.delta, gamma: row.gamma, theta: row.theta, vega: row.vega };
      greeks = vendor;
      if (Object.values(vendor).some((value) => value === null) && spot !== null) {
        const terms = {
          side: row.side,
          spot,
          strike,
          years: yearsBetween(row.quote_time, row.expiration_time),
          rate: RISK_FREE_RATE,
        };
        const computed = greekColumns(terms, row.iv, rawMid);
        greeks = {
          iv: vendor.iv ?? computed.iv,
          delta: vendor.delta ?? computed.delta,
          gamma: vendor.gamma ?? computed.gamma,
          theta: vendor.theta ?? computed.theta,
          vega: vendor.vega ?? computed.vega,
        };
      }
    }
    const rowSession = current === undefined ? row.session_date : session;
    return {
      optionSymbol: row.option_symbol,
      underlying: row.underlying,
      expiration: row.expiration_time,
      side: row.side,
      strike,
      firstTraded: etWallToSeconds(row.first_traded, '09:30'),
      dte: dte(rowSession, row.expiration),
      updated: current === undefined ? eodSeconds(row.session_date) : row.quote_time,
      bid: row.bid,
      bidSize: row.bid_size,
      mid,
      ask: row.ask,
      askSize: row.ask_size,
      last: row.last,
      openInterest,
      volume,
      inTheMoney,
      intrinsicValue,
      extrinsicValue,
      underlyingPrice: spot,
      ...greeks,
      group: `${row.root}:${row.expiration}`,
      expirationDate: row.expiration,
      knownAt,
    };
  });
}

/** The service's order: expiration instant, calls before puts, strike (then symbol, for equal keys). */
export function compareRecords(a: OptionRecord, b: OptionRecord): number {
  return (
    a.expiration - b.expiration ||
    (a.side === b.side ? 0 : a.side === 'call' ? -1 : 1) ||
    a.strike - b.strike ||
    (a.optionSymbol < b.optionSymbol ? -1 : a.optionSymbol > b.optionSymbol ? 1 : 0)
  );
}

/** The option row fields of the records, in the service's key order. */
export function optionFields(records: readonly OptionRecord[]): Field[] {
  return OPTION_COLUMNS.map(({ key, human, kind }) => ({
    key,
    human,
    kind,
    values: records.map((record) => record[key]),
  }));
}

/** The latest known-at instant of the records' values, or null for none. */
export function dataAsOf(records: readonly OptionRecord[]): number | null {
  let latest: number | null = null;
  for (const record of records) if (latest === null || record.knownAt > latest) latest = record.knownAt;
  return latest;
}

/**
 * A no-data answer carrying the nearest sessions with data for the scope before `first` and after `last`
 * (default: `first`), each as the `updated` instant (16:00 ET) a dated request for it would show, or null.
 */
export async function noDataAround(
  sql: SqlSession,
  scope: Scope,
  first: string,
  last: string = first,
): Promise<NoData> {
  let where: string;
  const params: Record<string, SqlValue> = { first, last };
  if ('optionSymbol' in scope) {
    where = 'option_symbol = $symbol';
    params['symbol'] = scope.optionSymbol;
  } else if (scope.root === undefined) {
    where = 'underlying = $underlying';
    params['underlying'] = scope.underlying;
  } else {
    where =
      'underlying = $underlying AND option_symbol IN (SELECT option_symbol FROM contracts WHERE underlying = $underlying AND root = $root)';
    params['underlying'] = scope.underlying;
    params['root'] = scope.root;
  }
  const [row] = await sql.all<{ previous: string | null; next: string | null }>(
    `SELECT max(session_date) FILTER (WHERE session_date < CAST($first AS DATE)) AS previous,
            min(session_date) FILTER (WHERE session_date > CAST($last AS DATE)) AS next
     FROM option_quotes WHERE ${where}`,
    params,
  );
  return {
    kind: 'no_data',
    nextTime: row?.next == null ? null : eodSeconds(row.next),
    prevTime: row?.previous == null ? null : eodSeconds(row.previous),
  };
}

/** The scope a path symbol names: an underlying, or one root of it (`SPXW` → SPX's chain, root SPXW). */
export function scopeOfSymbol(pathSymbol: string | undefined): {
  readonly scope: Scope;
  readonly symbol: string;
  readonly underlying: string;
  readonly root: string | undefined;
} {
  const symbol = (pathSymbol ?? '').trim().toUpperCase();
  const underlying = underlyingOfRoot(symbol);
  const root = underlying === symbol ? undefined : symbol;
  return { scope: root === undefined ? { underlying } : { underlying, root }, symbol, underlying, root };
}

/** Whether the store holds any contract of the underlying (optionally of one root). */
export async function underlyingKnown(sql: SqlSession, underlying: string, root?: string): Promise<boolean> {
  const found = await sql.value<number>(
    root === undefined
      ? 'SELECT count(*) FROM (SELECT 1 FROM contracts WHERE underlying = $underlying LIMIT 1)'
      : 'SELECT count(*) FROM (SELECT 1 FROM contracts WHERE underlying = $underlying AND root = $root LIMIT 1)',
    root === undefined ? { underlying } : { underlying, root },
  );
  return Number(found) > 0;
}
