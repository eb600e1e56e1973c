/**
 * The data-quality summary of one ingested file: what it holds (rows, sessions, contracts) and how much of
 * it a backtest cannot take as a price. The store keeps every quote as the vendor sent it (the API face
 * serves it); this summary counts, per file, the quotes a runner must not fill or mark on, so a user sees
 * them at ingest and in `pitchain info`:
 * - `zero`: bid and ask both 0 or missing (no market);
 * - `oneSided`: exactly one of bid and ask above 0;
 * - `crossed`: both above 0 and the bid above the ask (validation refuses more than a cent, see
 *   `CROSSED_TOLERANCE`), or locked (bid = ask);
 * - `stale`: a two-sided quote identical (bid, ask and sizes) to the same contract's previous snapshot in
 *   the file while the underlying's price moved: a quote no one updated;
 * - `missingOpenInterest`: quote rows (a contract on a session) for which the file gives no open-interest
 *   figure published on that session's date (ET);
 * - `greeksUnits`: how the vendor IV and Greeks were stored (`describeGreekUnits`), or null when the format
 *   has none or fixes them.
 */
import { MARKET_ZONE } from '../market-time/index.js';
import type { TableName } from '../store/schema.js';
import { quoteIdentifier as q, quoteLiteral, type SqlSession } from '../store/sql.js';

/** The data-quality summary of one file (stored with its provenance entry). */
export type DataQuality = {
  readonly rows: number;
  readonly sessions: number;
  readonly contracts: number;
  readonly zero: number;
  readonly oneSided: number;
  readonly crossed: number;
  readonly stale: number;
  readonly missingOpenInterest: number;
  readonly greeksUnits: string | null;
};

/** The counts of a file's option quotes, as one query over its staging tables (after rejects are dropped). */
export async function measureQuality(
  sql: SqlSession,
  tables: Readonly<Record<TableName, string>>,
  described: { readonly rows: number; readonly sessions: number; readonly greeksUnits?: string | undefined },
): Promise<DataQuality> {
  const quotes = q(tables.option_quotes);
  const oi = q(tables.open_interest);
  const [row] = await sql.all<Record<string, number | bigint | null>>(
    // Missing open interest is one hash anti-join of the quote rows against (contract, ET date) pairs; the
    // time zone is applied once per distinct publication instant, not once per row (a correlated NOT
    // EXISTS with the cast per row took 18 s on the sample store).
    `WITH published AS (
       SELECT published_at, CAST(timezone(${quoteLiteral(MARKET_ZONE)}, published_at) AS DATE) AS day
       FROM (SELECT DISTINCT published_at FROM ${oi})),
     oi_dates AS (SELECT option_symbol, day FROM ${oi} JOIN published USING (published_at)),
     t AS (
       SELECT option_symbol, session_date, coalesce(bid, 0) AS bid, coalesce(ask, 0) AS ask,
              bid_size, ask_size, underlying_price,
              lag(bid) OVER w AS p_bid, lag(ask) OVER w AS p_ask, lag(bid_size) OVER w AS p_bid_size,
              lag(ask_size) OVER w AS p_ask_size, lag(underlying_price) OVER w AS p_underlying
       FROM ${quotes}
       WINDOW w AS (PARTITION BY option_symbol ORDER BY session_date, quote_time))
     SELECT
       count(DISTINCT option_symbol) AS contracts,
       count(*) FILTER (WHERE bid = 0 AND ask = 0) AS zero,
       count(*) FILTER (WHERE (bid > 0) <> (ask > 0)) AS one_sided,
       count(*) FILTER (WHERE bid > 0 AND ask > 0 AND bid >= ask) AS crossed,
       count(*) FILTER (WHERE bid > 0 AND ask > 0 AND bid = p_bid AND ask = p_ask
                          AND bid_size IS NOT DISTINCT FROM p_bid_size AND ask_size IS NOT DISTINCT FROM p_ask_size
                          AND underlying_price <> p_underlying) AS stale,
       (SELECT count(*) FROM (SELECT DISTINCT option_symbol, session_date FROM ${quotes} k
                              ANTI JOIN oi_dates o ON o.option_symbol = k.option_symbol AND o.day = k.session_date)
       ) AS missing_oi
     FROM t`,
  );
  const n = (key: string): number => Number(row?.[key] ?? 0);
  return {
    rows: described.rows,
    sessions: described.sessions,
    contracts: n('contracts'),
    zero: n('zero'),
    oneSided: n('one_sided'),
    crossed: n('crossed'),
    stale: n('stale'),
    missingOpenInterest: n('missing_oi'),
    greeksUnits: described.greeksUnits ?? null,
  };
}

/** The header of the summary table and one row per file, as `pitchain ingest` and `pitchain info` print them. */
export function qualityTable(
  files: readonly { readonly source: string; readonly quality?: DataQuality | undefined }[],
): { header: string[]; rows: (string | number)[][] } {
  const header = [
    'file',
    'rows',
    'sessions',
    'contracts',
    'zero',
    'one-sided',
    'crossed',
    'stale',
    'no OI',
    'Greek units',
  ];
  const rows = files.flatMap(({ source, quality: d }) =>
    d === undefined
      ? []
      : [
          [
            source,
            d.rows,
            d.sessions,
            d.contracts,
            d.zero,
            d.oneSided,
            d.crossed,
            d.stale,
            d.missingOpenInterest,
            d.greeksUnits ?? '-',
          ],
        ],
  );
  return { header, rows };
}

/** Which of a store's option rows to measure: some underlyings over a range of sessions (`YYYY-MM-DD`). */
export type StoredRange = {
  readonly underlyings: readonly string[];
  readonly from: string;
  readonly to: string;
};

/**
 * The summary of option rows already in a store (`sql` reads its tables by name), of some underlyings over
 * a range or of all of them, with the open interest published in it: for sources whose ingest measured
 * none (a mirror's answers, measured once per run). Read through views, so nothing is copied (views take
 * no parameters: the range is written in as quoted literals).
 */
export async function measureStoredQuality(sql: SqlSession, range?: StoredRange): Promise<DataQuality> {
  const where = (date: string) =>
    range === undefined
      ? ''
      : `WHERE underlying IN (${range.underlyings.map(quoteLiteral).join(', ')})
           AND ${date} BETWEEN CAST(${quoteLiteral(range.from)} AS DATE) AND CAST(${quoteLiteral(range.to)} AS DATE)`;
  await sql.run(
    `CREATE OR REPLACE TEMP VIEW stored_quotes AS SELECT * FROM option_quotes ${where('session_date')};
     CREATE OR REPLACE TEMP VIEW stored_oi AS SELECT * FROM open_interest
       ${where(`CAST(timezone(${quoteLiteral(MARKET_ZONE)}, published_at) AS DATE)`)}`,
  );
  try {
    const [counted] = await sql.all<{ rows: number; sessions: number }>(
      'SELECT count(*)::INTEGER AS rows, count(DISTINCT session_date)::INTEGER AS sessions FROM stored_quotes',
    );
    return await measureQuality(
      sql,
      {
        option_quotes: 'stored_quotes',
        open_interest: 'stored_oi',
        contracts: 'contracts',
        stock_bars: 'stock_bars',
        splits: 'splits',
      },
      { rows: counted!.rows, sessions: counted!.sessions },
    );
  } finally {
    await sql.run('DROP VIEW IF EXISTS stored_quotes; DROP VIEW IF EXISTS stored_oi');
  }
}
