/**
 * The one query core under the option endpoints: which snapshot answers each contract at an as-of
 * (dated: the EOD row of session D; current: per field the latest value known at the cutoff), and the
 * service's row computed from it (mid, moneyness, dte, Greeks). The endpoints are thin over it.
 */
import { MarketDataError } from '../../errors.js';
import {
  dte,
  etMidnightSeconds,
  etWallToSeconds,
  isSession,
  previousSession,
  toEtDate,
  underlyingOfRoot,
} from '../../market-time/index.js';
import type { OptionSide } from '../../occ/index.js';
import type { SqlSession, SqlValue } from '../../store/sql.js';
import { greekColumns, RISK_FREE_RATE, yearsBetween } from '../greeks.js';
import { JsonColumn } from '../json-columns.js';
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

/** How many sessions back from the as-of each step of a current answer's search begins (then: all). */
const SEARCH_WINDOWS = [5, 60] as const;

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
  const columns = `c.option_symbol, c.underlying, c.root, c.expiration, c.expiration_time, c.side, c.strike,
      c.settlement, c.monthly, c.weekly, c.quarterly, c.nonstandard, c.first_traded, s.session_date,
      s.quote_time, s.bid, s.ask, s.bid_size, s.ask_size, s.last, s.volume, s.volume_time, s.underlying_price,
      s.iv, s.delta, s.gamma, s.theta, s.vega, i.open_interest, i.published_at AS oi_published_at`;

  if (asOf.kind === 'dated') {
    const sessions = [...(options.sessions ?? [asOf.session])].sort();
    params['sessions'] = sessions.join(',');
    params['oiSessions'] = sessions.map((session) => previousSession(session)).join(',');
    const first = sessions[0] ?? asOf.session;
    const last = sessions.at(-1) ?? asOf.session;
    Object.assign(params, { first, last, oiFirst: previousSession(first), oiLast: previousSession(last) });
    // Constant bounds let the Parquet reader skip row groups by their statistics; the session lists
    // themselves are only needed when there are several sessions.
    const several = sessions.length > 1;
    const sql = `
      WITH days AS (
        SELECT CAST(d AS DATE) AS session_date, CAST(p AS DATE) AS oi_session
        FROM (SELECT unnest(string_split($sessions, ',')) AS d, unnest(string_split($oiSessions, ',')) AS p)
        WHERE d <> ''
      ), listed AS (
        SELECT * FROM contracts c WHERE ${contractWhere.join(' AND ')} AND c.expiration >= CAST($first AS DATE)
      ), snap AS (
        SELECT q.* FROM option_quotes q
        WHERE ${quoteScope}
          AND q.session_date BETWEEN CAST($first AS DATE) AND CAST($last AS DATE)
          ${several ? 'AND q.session_date IN (SELECT session_date FROM days)' : ''}
        QUALIFY row_number() OVER (PARTITION BY q.option_symbol, q.session_date ORDER BY q.quote_time DESC) = 1
      ), interest AS (
        SELECT o.option_symbol, o.settled_session, o.open_interest, o.published_at FROM open_interest o
        WHERE ${interestScope}
          AND o.settled_session BETWEEN CAST($oiFirst AS DATE) AND CAST($oiLast AS DATE)
          ${several ? 'AND o.settled_session IN (SELECT oi_session FROM days)' : ''}
      ), answer_rows AS (
        SELECT ${columns}
        FROM snap s
        JOIN listed c ON c.option_symbol = s.option_symbol
        JOIN days d ON d.session_date = s.session_date
        LEFT JOIN interest i ON i.option_symbol = s.option_symbol AND i.settled_session = d.oi_session
        WHERE c.expiration >= s.session_date
      )`;
    return { sql, params };
  }

  params['session'] = asOfSession(asOf);
  params['cutoff'] = asOf.cutoffSeconds;
  const eodOnly = asOf.eodOnly;
  const lastSession = eodOnly && asOf.maxSession !== null ? asOf.maxSession : toEtDate(asOf.cutoffSeconds);
  params['lastSession'] = lastSession;
  // The latest snapshot of a contract is nearly always from the last few sessions, so it is looked for
  // there first, then further back only for the contracts still without one (a search through the whole
  // history reads every row of the underlying). Which contracts need the next step rests on two facts of
  // the store: a snapshot of session D is taken on D (q ≥ 00:00 ET of D), and a contract's first_traded
  // is no later than its first snapshot. Open interest needs neither: the latest settled session wins.
  const windows = SEARCH_WINDOWS.map((back) => {
    let session = lastSession;
    for (let i = 0; i < back; i++) session = previousSession(session);
    return { session, startSeconds: Math.min(etMidnightSeconds(session), asOf.cutoffSeconds) };
  });
  windows.forEach((window, w) => {
    params[`window${w}`] = window.session;
    params[`start${w}`] = window.startSeconds;
  });
  const history = `${quoteScope} AND q.session_date <= CAST($lastSession AS DATE)`;
  const steps = [...windows.keys(), windows.length];
  const since = (w: number) => (w < windows.length ? `AND q.quote_time >= to_timestamp($start${w})` : '');
  // Step w searches the snapshots from window w's start on (the last step: all of them) for `wanted_w`,
  // the contracts the steps before it did not find and that could have an older snapshot.
  const searches = steps.map((w) => {
    const wantedSql =
      w === 0
        ? `wanted_0 AS (SELECT option_symbol, first_traded FROM listed)`
        : `wanted_${w} AS (
            SELECT option_symbol, first_traded FROM wanted_${w - 1}
            WHERE first_traded < CAST($window${w - 1} AS DATE)
              AND option_symbol NOT IN (SELECT option_symbol FROM found_${w - 1}))`;
    // Only the contract and its snapshot instants are read while searching; the chosen rows are read
    // whole at the end (reading every column of the history would cost far more).
    const found = eodOnly
      ? `ends_${w} AS (
          SELECT q.option_symbol, max(q.quote_time) AS quote_time FROM option_quotes q
          WHERE ${history} ${since(w)} AND q.option_symbol IN (SELECT option_symbol FROM wanted_${w})
          GROUP BY q.option_symbol, q.session_date
        ), found_${w} AS (
          SELECT option_symbol, max(quote_time) AS quote_time FROM ends_${w}
          WHERE quote_time <= to_timestamp($cutoff)
          GROUP BY option_symbol
        )`
      : `found_${w} AS (
          SELECT q.option_symbol, max(q.quote_time) AS quote_time FROM option_quotes q
          WHERE ${history} ${since(w)} AND q.quote_time <= to_timestamp($cutoff)
            AND q.option_symbol IN (SELECT option_symbol FROM wanted_${w})
          GROUP BY q.option_symbol
        )`;
    return `${wantedSql}, ${found}`;
  });
  // Each step's rows are read back from its own range of snapshots, so that the reads stay pruned.
  const fetches = steps.map(
    (w) => `SELECT q.* FROM option_quotes q
      JOIN found_${w} f ON f.option_symbol = q.option_symbol AND f.quote_time = q.quote_time
      WHERE ${history} ${since(w)}`,
  );
  const snap = `snap AS (
    SELECT * FROM (${fetches.join(' UNION ALL ')})
    QUALIFY row_number() OVER (PARTITION BY option_symbol ORDER BY session_date DESC) = 1
  )`;
  // Open interest likewise: settled from the first window's session on, then before it for the rest.
  const interestSteps = [0, 1].map((w) => {
    const symbols =
      w === 0
        ? 'SELECT option_symbol FROM snap'
        : 'SELECT option_symbol FROM snap WHERE option_symbol NOT IN (SELECT option_symbol FROM interest_0)';
    const settled =
      w === 0
        ? 'o.settled_session >= CAST($oiWindow AS DATE)'
        : 'o.settled_session < CAST($oiWindow AS DATE)';
    return `interest_${w} AS (
      SELECT option_symbol, latest.open_interest, latest.published_at FROM (
        SELECT o.option_symbol,
               arg_max(struct_pack(open_interest := o.open_interest, published_at := o.published_at),
                       struct_pack(settled := o.settled_session, published := o.published_at)) AS latest
        FROM open_interest o
        WHERE ${interestScope} AND ${settled} AND o.published_at <= to_timestamp($cutoff)
          AND o.option_symbol IN (${symbols})
        GROUP BY o.option_symbol))`;
  });
  params['oiWindow'] = previousSession(windows[0]!.session);
  const sql = `
    WITH listed AS (
      SELECT * FROM contracts c WHERE ${contractWhere.join(' AND ')} AND c.expiration >= CAST($session AS DATE)
    ), ${searches.join(', ')}, ${snap}, ${interestSteps.join(', ')}, interest AS (
      SELECT * FROM interest_0 UNION ALL SELECT * FROM interest_1
    ), answer_rows AS (
      SELECT ${columns}
      FROM snap s
      JOIN listed c ON c.option_symbol = s.option_symbol
      LEFT JOIN interest i ON i.option_symbol = s.option_symbol
    )`;
  return { sql, params };
}

/**
 * The columns of {@link SnapshotRow} as DuckDB hands them over cheaply: dates as text, instants as epoch
 * seconds and decimals as doubles converted in SQL (the same values the per-value conversion gives).
 */
const SNAPSHOT_COLUMNS: readonly string[] = [
  'option_symbol',
  'underlying',
  'root',
  'CAST(expiration AS VARCHAR) AS expiration',
  'epoch_ms(expiration_time) / 1000 AS expiration_time',
  'side',
  'CAST(strike AS DOUBLE) AS strike',
  'settlement',
  'monthly',
  'weekly',
  'quarterly',
  'nonstandard',
  'CAST(first_traded AS VARCHAR) AS first_traded',
  'CAST(session_date AS VARCHAR) AS session_date',
  'epoch_ms(quote_time) / 1000 AS quote_time',
  ...['bid', 'ask'].map((c) => `CAST(${c} AS DOUBLE) AS ${c}`),
  'bid_size',
  'ask_size',
  'CAST("last" AS DOUBLE) AS "last"',
  'CAST(volume AS DOUBLE) AS volume',
  'epoch_ms(volume_time) / 1000 AS volume_time',
  ...['underlying_price', 'iv', 'delta', 'gamma', 'theta', 'vega'].map((c) => `CAST(${c} AS DOUBLE) AS ${c}`),
  'CAST(open_interest AS DOUBLE) AS open_interest',
  'epoch_ms(oi_published_at) / 1000 AS oi_published_at',
];

/** The contract rows answering at `asOf`, in no particular order. */
export async function readAnswerRows(
  sql: SqlSession,
  asOf: AsOf,
  scope: Scope,
  options: Options = {},
): Promise<SnapshotRow[]> {
  const query = answerRowsSql(asOf, scope, options);
  return sql.all<SnapshotRow>(
    `${query.sql} SELECT ${SNAPSHOT_COLUMNS.join(', ')} FROM answer_rows`,
    query.params,
  );
}

/** One expiration of one root as the store classifies it. */
export type ExpirationGroup = {
  readonly root: string;
  readonly expiration: string;
  readonly settlement: 'AM' | 'PM';
  readonly monthly: boolean;
  readonly weekly: boolean;
  readonly quarterly: boolean;
  readonly nonstandard: boolean;
};

/** A whole scope's answer at an as-of: its expiration groups (by expiration, root) and its records in order. */
export type ScopeAnswer = {
  readonly groups: readonly ExpirationGroup[];
  /** In the service's order ({@link compareRecords}); shared between requests, so never mutated. */
  readonly records: readonly OptionRecord[];
  /** Per group (same index as `groups`), the ascending indices of its records. */
  readonly members: readonly Int32Array[];
  /** The fields of all the records ({@link optionFields}), made on first use and shared: never mutated. */
  allFields(): readonly Field[];
  /** The fields of some of the records, in the given order, printed from the whole columns' JSON text. */
  fieldsOf(records: readonly OptionRecord[]): readonly Field[];
};

/** The records of some of the answer's groups, still in the service's order. */
export function groupRecords(
  answer: ScopeAnswer,
  groups: ReadonlySet<ExpirationGroup>,
): readonly OptionRecord[] {
  const chosen = answer.groups.flatMap((group, g) => (groups.has(group) ? [answer.members[g]!] : []));
  if (chosen.length === answer.groups.length) return answer.records;
  let indices: Int32Array;
  if (chosen.length === 1) indices = chosen[0]!;
  else {
    indices = new Int32Array(chosen.reduce((sum, members) => sum + members.length, 0));
    let at = 0;
    for (const members of chosen) {
      indices.set(members, at);
      at += members.length;
    }
    indices.sort();
  }
  const out = new Array<OptionRecord>(indices.length);
  for (let i = 0; i < indices.length; i++) out[i] = answer.records[indices[i]!]!;
  return out;
}

/**
 * The answer of a whole scope (an underlying's chain) at an as-of, read once and kept by the session for
 * the next requests at the same as-of (a backtest asks several chains of one instant; the data a reader
 * is pinned to never changes under it).
 */
export function scopeAnswer(sql: SqlSession, asOf: AsOf, scope: Scope): Promise<ScopeAnswer> {
  const asOfKey =
    asOf.kind === 'dated'
      ? `dated:${asOf.session}`
      : `current:${asOf.cutoffSeconds}:${asOf.eodOnly}:${asOf.maxSession}`;
  return sql.memoize(`option-scope|${asOfKey}|${JSON.stringify(scope)}`, async () => {
    const query = answerRowsSql(asOf, scope);
    const { columns } = await sql.columns(
      `${query.sql} SELECT ${SCOPE_COLUMNS} FROM answer_rows
       ORDER BY expiration_time, side, strike, option_symbol`,
      query.params,
    );
    const [
      symbol,
      underlying,
      root,
      expirationDay,
      expirationTime,
      isCall,
      strike,
      amSettled,
      monthly,
      weekly,
      quarterly,
      nonstandard,
      firstTradedDay,
      sessionDay,
      quoteTime,
      bid,
      ask,
      bidSize,
      askSize,
      last,
      volume,
      volumeTime,
      underlyingPrice,
      iv,
      delta,
      gamma,
      theta,
      vega,
      openInterest,
      oiPublishedAt,
    ] = columns as [string[], string[], string[], number[], number[], boolean[], number[], ...unknown[][]];
    const make = recordMaker(asOf);
    const records: OptionRecord[] = [];
    const groupOf: GroupEntry[] = [];
    const byKey = new Map<string, GroupEntry>();
    let entry: GroupEntry | undefined;
    // A result without rows comes back without columns.
    const count = columns[0]?.length ?? 0;
    for (let i = 0; i < count; i++) {
      const row: SnapshotRow = {
        option_symbol: symbol![i]!,
        underlying: underlying![i]!,
        root: root![i]!,
        expiration: isoDate(expirationDay![i]!),
        expiration_time: expirationTime![i]!,
        side: isCall![i] ? 'call' : 'put',
        strike: strike![i]!,
        settlement: amSettled![i] ? 'AM' : 'PM',
        monthly: monthly![i] as boolean,
        weekly: weekly![i] as boolean,
        quarterly: quarterly![i] as boolean,
        nonstandard: nonstandard![i] as boolean,
        first_traded: isoDate(firstTradedDay![i] as number),
        session_date: isoDate(sessionDay![i] as number),
        quote_time: quoteTime![i] as number,
        bid: bid![i] as number | null,
        ask: ask![i] as number | null,
        bid_size: bidSize![i] as number | null,
        ask_size: askSize![i] as number | null,
        last: last![i] as number | null,
        volume: volume![i] as number | null,
        volume_time: volumeTime![i] as number | null,
        underlying_price: underlyingPrice![i] as number | null,
        iv: iv![i] as number | null,
        delta: delta![i] as number | null,
        gamma: gamma![i] as number | null,
        theta: theta![i] as number | null,
        vega: vega![i] as number | null,
        open_interest: openInterest![i] as number | null,
        oi_published_at: oiPublishedAt![i] as number | null,
      };
      records.push(make(row));
      // Rows come ordered by expiration, so a group's key is only built when the row's group changes.
      const group = entry?.group;
      if (
        group === undefined ||
        group.root !== row.root ||
        group.expiration !== row.expiration ||
        group.settlement !== row.settlement ||
        group.monthly !== row.monthly ||
        group.weekly !== row.weekly ||
        group.quarterly !== row.quarterly ||
        group.nonstandard !== row.nonstandard
      ) {
        const key = `${row.root}|${row.expiration}|${row.settlement}|${row.monthly}|${row.weekly}|${row.quarterly}|${row.nonstandard}`;
        entry = byKey.get(key);
        if (entry === undefined) {
          const { root, expiration, settlement, monthly, weekly, quarterly, nonstandard } = row;
          entry = {
            group: { root, expiration, settlement, monthly, weekly, quarterly, nonstandard },
            members: [],
          };
          byKey.set(key, entry);
        }
      }
      groupOf.push(entry!);
    }
    // Already in this order from SQL; sorting again keeps the service's order the one compareRecords defines.
    const order = records.map((_, i) => i).sort((a, b) => compareRecords(records[a]!, records[b]!));
    for (const [to, from] of order.entries()) groupOf[from]!.members.push(to);
    const groups = [...byKey.values()].sort(
      (a, b) =>
        compareText(a.group.expiration, b.group.expiration) || compareText(a.group.root, b.group.root),
    );
    const ordered = order.map((i) => records[i]!);
    let fields: Field[] | undefined;
    let positions: Map<OptionRecord, number> | undefined;
    const allFields = () =>
      (fields ??= optionFields(ordered).map((f) => ({
        ...f,
        json: { column: new JsonColumn(f.values, f.kind), rows: null },
      })));
    return {
      groups: groups.map((entry) => entry.group),
      records: ordered,
      members: groups.map((entry) => Int32Array.from(entry.members)),
      allFields,
      fieldsOf(kept) {
        if (kept.length === ordered.length) return allFields();
        positions ??= new Map(ordered.map((record, i) => [record, i]));
        const rows = Int32Array.from(kept, (record) => positions!.get(record)!);
        const whole = allFields();
        return optionFields(kept).map((f, i) => ({ ...f, json: { column: whole[i]!.json!.column, rows } }));
      },
    };
  });
}

/**
 * The answer rows for {@link scopeAnswer}, in {@link SnapshotRow} order with fewer strings to decode:
 * dates as day numbers, side and settlement as booleans.
 */
const SCOPE_COLUMNS = [
  'option_symbol',
  'underlying',
  'root',
  ...dayNumbers(['expiration']),
  'epoch_ms(expiration_time) / 1000 AS expiration_time',
  "side = 'call' AS is_call",
  'CAST(strike AS DOUBLE) AS strike',
  "settlement = 'AM' AS am_settled",
  'monthly',
  'weekly',
  'quarterly',
  'nonstandard',
  ...dayNumbers(['first_traded', 'session_date']),
  ...SNAPSHOT_COLUMNS.slice(SNAPSHOT_COLUMNS.indexOf('epoch_ms(quote_time) / 1000 AS quote_time')),
].join(', ');

function dayNumbers(columns: readonly string[]): string[] {
  return columns.map((c) => `CAST(${c} - DATE '1970-01-01' AS INTEGER) AS ${c}_day`);
}

const DAY_MS = 86_400_000;
const isoDates = new Map<number, string>();

/** `YYYY-MM-DD` of a day number (days since 1970-01-01), remembered: a chain has few distinct dates. */
function isoDate(day: number): string {
  let text = isoDates.get(day);
  if (text === undefined) {
    text = new Date(day * DAY_MS).toISOString().slice(0, 10);
    isoDates.set(day, text);
  }
  return text;
}

type GroupEntry = { readonly group: ExpirationGroup; readonly members: number[] };

/**
 * The service's rows from the store's. Dated rows: Greeks and IV null, `updated` 16:00 ET of the row's
 * session, `dte` from it. Current rows: `updated` = the snapshot's quote time, `dte` from the as-of
 * session, volume only when its stamp is known at the cutoff, vendor Greeks or Black–Scholes ones.
 */
export function toRecords(rows: readonly SnapshotRow[], asOf: AsOf): OptionRecord[] {
  return rows.map(recordMaker(asOf));
}

/** The row-to-record conversion of {@link toRecords}, remembering date conversions across rows. */
function recordMaker(asOf: AsOf): (row: SnapshotRow) => OptionRecord {
  const current = asOf.kind === 'current' ? asOf : undefined;
  const session = asOfSession(asOf);
  const firstTradedSeconds = memoized((date: string) => etWallToSeconds(date, '09:30'));
  const updatedSeconds = memoized(eodSeconds);
  const daysTo = memoized((pair: string) => dte(pair.slice(0, 10), pair.slice(11)));
  return (row) => {
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
      firstTraded: firstTradedSeconds(row.first_traded),
      dte: daysTo(`${rowSession}|${row.expiration}`),
      updated: current === undefined ? updatedSeconds(row.session_date) : row.quote_time,
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
      // Named one by one rather than spread, so that every record has the same fast shape.
      iv: greeks.iv,
      delta: greeks.delta,
      gamma: greeks.gamma,
      theta: greeks.theta,
      vega: greeks.vega,
      group: `${row.root}:${row.expiration}`,
      expirationDate: row.expiration,
      knownAt,
    };
  };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A one-argument function remembered per argument (dates repeat across a chain's rows). */
function memoized<T>(compute: (key: string) => T): (key: string) => T {
  const seen = new Map<string, T>();
  return (key) => {
    let value = seen.get(key);
    if (value === undefined) {
      value = compute(key);
      seen.set(key, value);
    }
    return value;
  };
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
  // One pass with static property reads, into packed arrays (which JSON.stringify writes faster than
  // preallocated, holey ones): a chain can hold ten thousand rows of 25 fields.
  const out: Record<keyof OptionValues, unknown[]> = {
    optionSymbol: [],
    underlying: [],
    expiration: [],
    side: [],
    strike: [],
    firstTraded: [],
    dte: [],
    updated: [],
    bid: [],
    bidSize: [],
    mid: [],
    ask: [],
    askSize: [],
    last: [],
    openInterest: [],
    volume: [],
    inTheMoney: [],
    intrinsicValue: [],
    extrinsicValue: [],
    underlyingPrice: [],
    iv: [],
    delta: [],
    gamma: [],
    theta: [],
    vega: [],
  };
  for (const r of records) {
    out.optionSymbol.push(r.optionSymbol);
    out.underlying.push(r.underlying);
    out.expiration.push(r.expiration);
    out.side.push(r.side);
    out.strike.push(r.strike);
    out.firstTraded.push(r.firstTraded);
    out.dte.push(r.dte);
    out.updated.push(r.updated);
    out.bid.push(r.bid);
    out.bidSize.push(r.bidSize);
    out.mid.push(r.mid);
    out.ask.push(r.ask);
    out.askSize.push(r.askSize);
    out.last.push(r.last);
    out.openInterest.push(r.openInterest);
    out.volume.push(r.volume);
    out.inTheMoney.push(r.inTheMoney);
    out.intrinsicValue.push(r.intrinsicValue);
    out.extrinsicValue.push(r.extrinsicValue);
    out.underlyingPrice.push(r.underlyingPrice);
    out.iv.push(r.iv);
    out.delta.push(r.delta);
    out.gamma.push(r.gamma);
    out.theta.push(r.theta);
    out.vega.push(r.vega);
  }
  return OPTION_COLUMNS.map(({ key, human, kind }) => ({ key, human, kind, values: out[key] }));
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
