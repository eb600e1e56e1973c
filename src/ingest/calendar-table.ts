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

/** The calendar's sessions as comma-separated numbers, one list per column, bound as strings. */
type CalendarLists = {
  /** Days since 1970-01-01. */
  readonly days: string;
  /** Days back to the previous session and on to the next (0 at the calendar's ends). */
  readonly back: string;
  readonly ahead: string;
  /** Open and close instants, epoch seconds. */
  readonly opens: string;
  readonly closes: string;
};

let calendarLists: CalendarLists | undefined;

function calendar(): CalendarLists {
  if (calendarLists !== undefined) return calendarLists;
  const dates = sessionsBetween(`${CALENDAR_FIRST_YEAR}-01-01`, `${CALENDAR_LAST_YEAR}-12-31`);
  const days = dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 86_400_000);
  calendarLists = {
    days: days.join(','),
    back: days.map((d, i) => (i === 0 ? 0 : d - days[i - 1]!)).join(','),
    ahead: days.map((d, i) => (i === days.length - 1 ? 0 : days[i + 1]! - d)).join(','),
    opens: dates.map(sessionOpenSeconds).join(','),
    closes: dates.map(sessionCloseSeconds).join(','),
  };
  return calendarLists;
}

/**
 * Creates the table `sessions` (one row per NYSE session of the calendar's years) unless it exists.
 * Columns: session_date, previous_session, next_session (NULL at the calendar's ends), open_at (09:30 ET),
 * close_at (16:00 ET, 13:00 on early-close days), index_close_at (close + 15 min), eod_at (16:00 ET
 * whatever the close: the instant of an end-of-day row), early_close.
 */
export async function createSessionsTable(sql: SqlSession): Promise<void> {
  // Every ingest builds this table, so it is built from numbers alone, in calendar order: dates as day
  // numbers and instants in epoch seconds (text dates, TIMESTAMPTZ ± INTERVAL through the ICU calendar and
  // a window for the neighbours each cost more). An early close is 13:00 ET, so 16:00 ET that day is
  // three hours after the close.
  const lists = calendar();
  const list = (param: string, type: string) => `unnest(string_split(${param}, ',')::${type}[])`;
  await sql.run(
    `CREATE TABLE IF NOT EXISTS ${quoteIdentifier(SESSIONS_TABLE)} AS
     SELECT DATE '1970-01-01' + d AS session_date,
            CASE WHEN back > 0 THEN DATE '1970-01-01' + (d - back) END AS previous_session,
            CASE WHEN ahead > 0 THEN DATE '1970-01-01' + (d + ahead) END AS next_session,
            to_timestamp(o) AS open_at, to_timestamp(c) AS close_at, to_timestamp(c + 900) AS index_close_at,
            to_timestamp(CASE WHEN c - o < 23400 THEN c + 10800 ELSE c END) AS eod_at, c - o < 23400 AS early_close
     FROM (
       SELECT ${list('$1', 'INTEGER')} AS d, ${list('$2', 'INTEGER')} AS back, ${list('$3', 'INTEGER')} AS ahead,
              ${list('$4', 'BIGINT')} AS o, ${list('$5', 'BIGINT')} AS c
     )`,
    [lists.days, lists.back, lists.ahead, lists.opens, lists.closes],
  );
}

/**
 * Inserts into the open-interest table `target` one row per row of `source` (a quotes table of one file:
 * `underlying`, `option_symbol`, `session_date`, `_line`) whose column `value` holds an open interest
 * printed on the row dated D. With `previous`, the figure was settled from the session before D and
 * published at 09:30 ET of D; with `same`, it was settled from D and published at 09:30 ET of the next
 * session. `publishedFromOpenSeconds` moves the publication from that 09:30 ET (−10800: 06:30 ET, when OPRA
 * publishes). Rows dated on a day that is not a session are left out (validation refuses their quotes).
 */
export async function insertOpenInterest(
  sql: SqlSession,
  target: string,
  source: string,
  value: string,
  settled: 'previous' | 'same',
  publishedFromOpenSeconds = 0,
): Promise<void> {
  const sessions = quoteIdentifier(SESSIONS_TABLE);
  // The publishing session's open, moved by the source's rule (OPRA's 06:30 ET is 3 hours before it).
  const at = (open: string): string =>
    publishedFromOpenSeconds === 0
      ? open
      : `to_timestamp(epoch(${open}) + ${Math.trunc(publishedFromOpenSeconds)})`;
  const [settledSql, publishedSql, join] =
    settled === 'previous'
      ? ['s.previous_session', at('s.open_at'), '']
      : ['s.session_date', at('n.open_at'), `JOIN ${sessions} n ON n.session_date = s.next_session`];
  await sql.run(
    `INSERT INTO ${quoteIdentifier(target)} (underlying, option_symbol, settled_session, published_at, open_interest, _line)
     SELECT t.underlying, t.option_symbol, ${settledSql}, ${publishedSql}, t.${quoteIdentifier(value)}, t._line
     FROM ${quoteIdentifier(source)} t JOIN ${sessions} s ON s.session_date = t.session_date ${join}
     WHERE t.${quoteIdentifier(value)} IS NOT NULL`,
  );
}
