/**
 * The NYSE calendar as a DuckDB table, so that ingest SQL can stamp session instants with a join instead
 * of a call per row. Built from market-time, the one source of calendar truth.
 */
import {
  CALENDAR_FIRST_YEAR,
  CALENDAR_LAST_YEAR,
  sessionCloseSeconds,
  sessionOpenSeconds,
  sessionsBetween,
} from '../market-time/index.js';
import { quoteIdentifier, type SqlSession } from '../store/sql.js';

/** The name of the table `createSessionsTable` makes. */
export const SESSIONS_TABLE = 'sessions';

let calendarText: string | undefined;

/** `date,open,close;…` (epoch seconds) for every session: one bound string, parsed by DuckDB. */
function calendar(): string {
  calendarText ??= sessionsBetween(`${CALENDAR_FIRST_YEAR}-01-01`, `${CALENDAR_LAST_YEAR}-12-31`)
    .map((d) => `${d},${sessionOpenSeconds(d)},${sessionCloseSeconds(d)}`)
    .join(';');
  return calendarText;
}

/**
 * Creates the table `sessions` (one row per NYSE session of the calendar's years) unless it exists.
 * Columns: session_date, previous_session, next_session (NULL at the calendar's ends), open_at (09:30 ET),
 * close_at (16:00 ET, 13:00 on early-close days), index_close_at (close + 15 min), eod_at (16:00 ET
 * whatever the close: the instant of an end-of-day row), early_close.
 */
export async function createSessionsTable(sql: SqlSession): Promise<void> {
  // Instants are computed in epoch seconds: TIMESTAMPTZ ± INTERVAL goes through the ICU calendar, which
  // made this table cost ~50 ms of every ingest. An early close is 13:00 ET, so 16:00 ET that day is
  // three hours after the close.
  await sql.run(
    `CREATE TABLE IF NOT EXISTS ${quoteIdentifier(SESSIONS_TABLE)} AS
     SELECT d AS session_date, lag(d) OVER w AS previous_session, lead(d) OVER w AS next_session,
            to_timestamp(o) AS open_at, to_timestamp(c) AS close_at, to_timestamp(c + 900) AS index_close_at,
            to_timestamp(CASE WHEN early_close THEN c + 10800 ELSE c END) AS eod_at, early_close
     FROM (
       SELECT d, o, c, c - o < 23400 AS early_close
       FROM (
         SELECT CAST(split_part(x, ',', 1) AS DATE) AS d, CAST(split_part(x, ',', 2) AS BIGINT) AS o,
                CAST(split_part(x, ',', 3) AS BIGINT) AS c
         FROM (SELECT unnest(string_split($1, ';')) AS x)
       )
     )
     WINDOW w AS (ORDER BY d)
     ORDER BY d`,
    [calendar()],
  );
}

/**
 * Inserts into the open-interest table `target` one row per row of `source` (a quotes table of one file:
 * `underlying`, `option_symbol`, `session_date`, `_line`) whose column `value` holds an open interest
 * printed on the row dated D. With `previous`, the figure was settled from the session before D and
 * published at 09:30 ET of D; with `same`, it was settled from D and published at 09:30 ET of the next
 * session. Rows dated on a day that is not a session are left out (validation refuses their quotes).
 */
export async function insertOpenInterest(
  sql: SqlSession,
  target: string,
  source: string,
  value: string,
  settled: 'previous' | 'same',
): Promise<void> {
  const sessions = quoteIdentifier(SESSIONS_TABLE);
  const [settledSql, publishedSql, join] =
    settled === 'previous'
      ? ['s.previous_session', 's.open_at', '']
      : ['s.session_date', 'n.open_at', `JOIN ${sessions} n ON n.session_date = s.next_session`];
  await sql.run(
    `INSERT INTO ${quoteIdentifier(target)} (underlying, option_symbol, settled_session, published_at, open_interest, _line)
     SELECT t.underlying, t.option_symbol, ${settledSql}, ${publishedSql}, t.${quoteIdentifier(value)}, t._line
     FROM ${quoteIdentifier(source)} t JOIN ${sessions} s ON s.session_date = t.session_date ${join}
     WHERE t.${quoteIdentifier(value)} IS NOT NULL`,
  );
}
