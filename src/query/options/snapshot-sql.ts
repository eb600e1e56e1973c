/**
 * The SQL that picks, per contract, the snapshot and open interest answering at an as-of (dated: the
 * latest snapshot of session D and OI settled from D−1; current: per field the latest value known at
 * the cutoff). Bound parameters only; the point-in-time rules it encodes are those of `pit/`.
 */
import { etMidnightSeconds, previousSession, toEtDate } from '../../market-time/index.js';
import type { OptionSide } from '../../occ/index.js';
import { type AsOf, asOfSession, type CurrentAsOf, lastSessionOf } from '../../pit/as-of.js';
import type { SqlSession, SqlValue } from '../../store/sql.js';
import type { Scope } from './scope.js';

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

/** How many sessions back from the as-of each step of a current answer's search begins (then: all). */
const SEARCH_WINDOWS = [5, 60] as const;

type Options = {
  /** Dated: the sessions to answer (default: the as-of session); each row is that session's EOD row. */
  readonly sessions?: readonly string[];
};

/** The SQL of a query with its bound parameters. */
type Query = { sql: string; params: Record<string, SqlValue> };

/**
 * The table expressions an answer reads: only the files of the scope's partitions, and of those only the
 * ones holding the sessions the as-of can use (`SqlSession.from`).
 */
type Sources = { readonly quotes: string; readonly interest: string; readonly contracts: string };

/** The scope's conditions on each table, with the parameters they bind. */
type ScopeFilters = {
  readonly contract: string;
  readonly quote: string;
  readonly interest: string;
  readonly params: Record<string, SqlValue>;
};

/** The contract columns, then the snapshot and open interest columns, of an answer row. */
const ANSWER_COLUMNS = `c.option_symbol, c.underlying, c.root, c.expiration, c.expiration_time, c.side, c.strike,
      c.settlement, c.monthly, c.weekly, c.quarterly, c.nonstandard, c.first_traded, s.session_date,
      s.quote_time, s.bid, s.ask, s.bid_size, s.ask_size, s.last, s.volume, s.volume_time, s.underlying_price,
      s.iv, s.delta, s.gamma, s.theta, s.vega, i.open_interest, i.published_at AS oi_published_at`;

/**
 * SQL defining the CTE `answer_rows` (columns of {@link SnapshotRow}) for an as-of, with its bound
 * parameters. Dated: each contract's latest snapshot of each session (the EOD row, 16:15 for index roots
 * when the store holds it), OI settled from the session before. Current: each contract's latest snapshot
 * with q ≤ cutoff — when `eodOnly`, only sessions' last snapshots up to `maxSession` — and the latest OI
 * published by the cutoff; contracts expired before the as-of session are left out.
 */
export async function answerRowsSql(
  sql: SqlSession,
  asOf: AsOf,
  scope: Scope,
  options: Options = {},
): Promise<Query> {
  const filters = scopeFilters(scope);
  const partition = { underlying: scope.underlying };
  if (asOf.kind === 'dated') {
    const sessions = [...(options.sessions ?? [asOf.session])].sort();
    const first = sessions[0] ?? asOf.session;
    const last = sessions.at(-1) ?? asOf.session;
    const oi = { first: previousSession(first), last: previousSession(last) };
    const sources = {
      quotes: await sql.from('option_quotes', partition, { first, last }),
      interest: await sql.from('open_interest', partition, oi),
      contracts: await sql.from('contracts', partition),
    };
    return datedAnswerSql(sessions, filters, sources);
  }
  const lastSession = lastSessionOf(asOf);
  const sources = {
    quotes: await sql.from('option_quotes', partition, { last: lastSession }),
    // Open interest is published after its session settles: none settled after the cutoff's date is known.
    interest: await sql.from('open_interest', partition, { last: toEtDate(asOf.cutoffSeconds) }),
    contracts: await sql.from('contracts', partition),
  };
  return currentAnswerSql(asOf, lastSession, filters, sources);
}

/** The conditions selecting a scope's contracts, snapshots and open interest. */
function scopeFilters(scope: Scope): ScopeFilters {
  // The underlying is the partition key: every condition names it, so no other partition is read.
  if ('optionSymbol' in scope) {
    return {
      contract: 'c.option_symbol = $symbol',
      quote: 'q.underlying = $underlying AND q.option_symbol = $symbol',
      interest: 'o.underlying = $underlying AND o.option_symbol = $symbol',
      params: { symbol: scope.optionSymbol, underlying: scope.underlying },
    };
  }
  const params: Record<string, SqlValue> = { underlying: scope.underlying };
  let contract = 'c.underlying = $underlying';
  if (scope.root !== undefined) {
    params['root'] = scope.root;
    contract += ' AND c.root = $root';
  }
  // One expiration: its contracts only. The snapshots are not filtered by the symbol's date as well: any
  // such condition on the quotes (a substring, or ranges of each root's symbols) turned DuckDB's plan for
  // the windowed search 3-20 times slower on a one-minute store; the contracts decide through the joins.
  if (scope.expiration !== undefined) {
    params['expiration'] = scope.expiration;
    contract += ' AND c.expiration = CAST($expiration AS DATE)';
  }
  return { contract, quote: 'q.underlying = $underlying', interest: 'o.underlying = $underlying', params };
}

/** The dated answer of `sessions`: each contract's last snapshot of each, OI settled the session before. */
function datedAnswerSql(sessions: readonly string[], filters: ScopeFilters, from: Sources): Query {
  const first = sessions[0]!;
  const last = sessions.at(-1)!;
  const params: Record<string, SqlValue> = {
    ...filters.params,
    sessions: sessions.join(','),
    oiSessions: sessions.map((session) => previousSession(session)).join(','),
    first,
    last,
    oiFirst: previousSession(first),
    oiLast: previousSession(last),
  };
  // Constant bounds let the Parquet reader skip row groups by their statistics; the session lists
  // themselves are only needed when there are several sessions.
  const several = sessions.length > 1;
  // A contract's first snapshot is no earlier than its first_traded: contracts listed after the last
  // session, or expired before the first, have no row to answer.
  const sql = `
      WITH days AS (
        SELECT CAST(d AS DATE) AS session_date, CAST(p AS DATE) AS oi_session
        FROM (SELECT unnest(string_split($sessions, ',')) AS d, unnest(string_split($oiSessions, ',')) AS p)
        WHERE d <> ''
      ), listed AS (
        SELECT * FROM ${from.contracts} c WHERE ${filters.contract}
          AND c.expiration >= CAST($first AS DATE) AND c.first_traded <= CAST($last AS DATE)
      ), snap AS (
        SELECT q.* FROM ${from.quotes} q
        WHERE ${filters.quote}
          AND q.session_date BETWEEN CAST($first AS DATE) AND CAST($last AS DATE)
          ${several ? 'AND q.session_date IN (SELECT session_date FROM days)' : ''}
        QUALIFY row_number() OVER (PARTITION BY q.option_symbol, q.session_date ORDER BY q.quote_time DESC) = 1
      ), interest AS (
        SELECT o.option_symbol, o.settled_session, o.open_interest, o.published_at FROM ${from.interest} o
        WHERE ${filters.interest}
          AND o.settled_session BETWEEN CAST($oiFirst AS DATE) AND CAST($oiLast AS DATE)
          ${several ? 'AND o.settled_session IN (SELECT oi_session FROM days)' : ''}
      ), answer_rows AS (
        SELECT ${ANSWER_COLUMNS}
        FROM snap s
        JOIN listed c ON c.option_symbol = s.option_symbol
        JOIN days d ON d.session_date = s.session_date
        LEFT JOIN interest i ON i.option_symbol = s.option_symbol AND i.settled_session = d.oi_session
        WHERE c.expiration >= s.session_date
      )`;
  return { sql, params };
}

/**
 * The current answer: per listed contract the latest snapshot with q ≤ cutoff, searched in widening
 * windows of sessions ({@link currentSearchSql}), and the latest open interest published by the cutoff.
 */
function currentAnswerSql(
  asOf: CurrentAsOf,
  lastSession: string,
  filters: ScopeFilters,
  from: Sources,
): Query {
  const params: Record<string, SqlValue> = {
    ...filters.params,
    session: asOfSession(asOf),
    cutoff: asOf.cutoffSeconds,
    lastSession,
  };
  const search = currentSearchSql(asOf, lastSession, filters, from.quotes, params);
  const interest = currentInterestSql(filters, from.interest);
  params['oiWindow'] = previousSession(search.firstWindow);
  const sql = `
    WITH listed AS (
      SELECT * FROM ${from.contracts} c WHERE ${filters.contract}
        AND c.expiration >= CAST($session AS DATE) AND c.first_traded <= CAST($lastSession AS DATE)
    ), ${search.sql}, ${interest}, answer_rows AS (
      SELECT ${ANSWER_COLUMNS}
      FROM snap s
      JOIN listed c ON c.option_symbol = s.option_symbol
      LEFT JOIN interest i ON i.option_symbol = s.option_symbol
    )`;
  return { sql, params };
}

/**
 * The CTEs ending in `snap`: each listed contract's latest snapshot known at a current as-of. The latest
 * snapshot of a contract is nearly always from the last few sessions, so it is looked for there first,
 * then further back only for the contracts still without one (a search through the whole history reads
 * every row of the underlying). Which contracts need the next step rests on two facts of the store: a
 * snapshot of session D is taken on D (q ≥ 00:00 ET of D), and a contract's first_traded is no later
 * than its first snapshot. Adds the windows' parameters to `params`.
 */
function currentSearchSql(
  asOf: CurrentAsOf,
  lastSession: string,
  filters: ScopeFilters,
  quotes: string,
  params: Record<string, SqlValue>,
): { sql: string; firstWindow: string } {
  const windows = SEARCH_WINDOWS.map((back) => {
    let session = lastSession;
    for (let i = 0; i < back; i++) session = previousSession(session);
    return { session, startSeconds: Math.min(etMidnightSeconds(session), asOf.cutoffSeconds) };
  });
  windows.forEach((window, w) => {
    params[`window${w}`] = window.session;
    params[`start${w}`] = window.startSeconds;
  });
  const history = `${filters.quote} AND q.session_date <= CAST($lastSession AS DATE)`;
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
    const found = asOf.eodOnly
      ? `ends_${w} AS (
          SELECT q.option_symbol, max(q.quote_time) AS quote_time FROM ${quotes} q
          WHERE ${history} ${since(w)} AND q.option_symbol IN (SELECT option_symbol FROM wanted_${w})
          GROUP BY q.option_symbol, q.session_date
        ), found_${w} AS (
          SELECT option_symbol, max(quote_time) AS quote_time FROM ends_${w}
          WHERE quote_time <= to_timestamp($cutoff)
          GROUP BY option_symbol
        )`
      : `found_${w} AS (
          SELECT q.option_symbol, max(q.quote_time) AS quote_time FROM ${quotes} q
          WHERE ${history} ${since(w)} AND q.quote_time <= to_timestamp($cutoff)
            AND q.option_symbol IN (SELECT option_symbol FROM wanted_${w})
          GROUP BY q.option_symbol
        )`;
    return `${wantedSql}, ${found}`;
  });
  // Each step's rows are read back from its own range of snapshots, so that the reads stay pruned.
  const fetches = steps.map(
    (w) => `SELECT q.* FROM ${quotes} q
      JOIN found_${w} f ON f.option_symbol = q.option_symbol AND f.quote_time = q.quote_time
      WHERE ${history} ${since(w)}`,
  );
  const snap = `snap AS (
    SELECT * FROM (${fetches.join(' UNION ALL ')})
    QUALIFY row_number() OVER (PARTITION BY option_symbol ORDER BY session_date DESC) = 1
  )`;
  return { sql: `${searches.join(', ')}, ${snap}`, firstWindow: windows[0]!.session };
}

/**
 * The CTE `interest`: each answered contract's latest open interest published by the cutoff, looked for
 * among sessions settled from the first window's session on, then before it for the rest (the latest
 * settled session wins; its latest publication).
 */
function currentInterestSql(filters: ScopeFilters, interest: string): string {
  const steps = [0, 1].map((w) => {
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
        FROM ${interest} o
        WHERE ${filters.interest} AND ${settled} AND o.published_at <= to_timestamp($cutoff)
          AND o.option_symbol IN (${symbols})
        GROUP BY o.option_symbol))`;
  });
  return `${steps.join(', ')}, interest AS (SELECT * FROM interest_0 UNION ALL SELECT * FROM interest_1)`;
}

/**
 * The columns of {@link SnapshotRow} as DuckDB hands them over cheaply: dates as text, instants as epoch
 * seconds and decimals as doubles converted in SQL (the same values the per-value conversion gives).
 */
export const SNAPSHOT_COLUMNS: readonly string[] = [
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
  const query = await answerRowsSql(sql, asOf, scope, options);
  return sql.all<SnapshotRow>(
    `${query.sql} SELECT ${SNAPSHOT_COLUMNS.join(', ')} FROM answer_rows`,
    query.params,
  );
}

/** The expiration-group columns of a row: what grouping a scope's answer needs before its values. */
export type GroupColumns = Pick<
  SnapshotRow,
  'root' | 'expiration' | 'settlement' | 'monthly' | 'weekly' | 'quarterly' | 'nonstandard'
>;

/**
 * A scope's answer rows, read on demand: a row's group first (cheap), the whole row only for the groups
 * a question asks about.
 */
export type RowSource = {
  readonly length: number;
  groupOf(index: number): GroupColumns;
  row(index: number): SnapshotRow;
  /**
   * The same rows as columns (row `index` of the source is row `index` of the columns), from a source
   * that holds a dated answer's rows in columns already (a session block).
   */
  datedColumns?(): DatedSnapshotColumns;
  /**
   * The same rows as columns, from a source that holds a current answer's rows in columns already (a
   * block: each contract's latest snapshot by the cutoff, of whichever session).
   */
  currentColumns?(): CurrentSnapshotColumns;
  /**
   * The bytes of the columns the source keeps alive, when it knows them (a session block's): what an
   * answer that keeps the source, to make its records later, holds instead of them.
   */
  readonly heldBytes?: number;
};

/**
 * An answer's store rows as columns, numbers as NaN for NULL: what a block hands over without making a row
 * object per contract.
 */
export type SnapshotColumns = {
  readonly length: number;
  readonly underlying: string;
  /** Row `index`'s option symbol. */
  readonly symbolAt: (index: number) => string;
  /** 1 for a call, 0 for a put. */
  readonly isCall: Uint8Array;
  readonly strike: Float64Array;
  readonly expirationTime: Float64Array;
  /** Day numbers (days since 1970-01-01). */
  readonly expirationDay: Float64Array;
  readonly firstTradedDay: Float64Array;
  readonly quoteTime: Float64Array;
  readonly bid: Float64Array;
  readonly ask: Float64Array;
  readonly bidSize: Float64Array;
  readonly askSize: Float64Array;
  readonly last: Float64Array;
  readonly volume: Float64Array;
  readonly volumeTime: Float64Array;
  readonly underlyingPrice: Float64Array;
  readonly openInterest: Float64Array;
  readonly oiPublishedAt: Float64Array;
};

/** A dated answer's store rows as columns: one session's snapshot of each contract. */
export type DatedSnapshotColumns = SnapshotColumns & { readonly session: string };

/**
 * A current answer's store rows as columns: each contract's latest snapshot by the cutoff, of its own
 * session, with the vendor's IV and Greeks.
 */
export type CurrentSnapshotColumns = SnapshotColumns & {
  /** Each row's session, as a day number. */
  readonly sessionDay: Float64Array;
  readonly iv: Float64Array;
  readonly delta: Float64Array;
  readonly gamma: Float64Array;
  readonly theta: Float64Array;
  readonly vega: Float64Array;
};

/** A row source over rows already read. */
export function rowSource(rows: readonly SnapshotRow[]): RowSource {
  return { length: rows.length, groupOf: (i) => rows[i]!, row: (i) => rows[i]! };
}
