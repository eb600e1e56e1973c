/**
 * The rules a stock bar (or split) must satisfy before it is staged: prices that form a bar, a volume that
 * is a count, a session day of the NYSE calendar, and one bar per key in one file. Checks run in DuckDB
 * over a file's typed rows and record the first broken rule in `_reject`.
 */
import {
  closureReason,
  etMidnightSeconds,
  etWallToSeconds,
  isSession,
  MARKET_ZONE,
  nextSession,
  sessionCloseSeconds,
  sessionOpenSeconds,
} from '../market-time/index.js';
import { quoteIdentifier, quoteLiteral, type SqlSession } from '../store/sql.js';

/** The market zone as a SQL literal, for DuckDB's `timezone(…)`. */
export const ET_ZONE_SQL = quoteLiteral(MARKET_ZONE);

/** The canonical bar columns in staging order, without `_line` and `_reject`. */
export const BAR_COLUMNS = ['symbol', 'resolution', 'session_date', 't', 'o', 'h', 'l', 'c', 'v'] as const;

/** A calendar day as the bar checks see it: a session with its open and close, or a closed day and why. */
export type BarDay = {
  readonly session: boolean;
  readonly reason: string | null;
  readonly openSeconds: number | null;
  readonly closeSeconds: number | null;
};

/**
 * What the calendar says of `date`. Outside the calendar's years (e.g. Lean history from 1998) holidays are
 * unknown, so every weekday counts as a session with regular hours.
 */
export function barDay(date: string): BarDay {
  try {
    if (isSession(date)) {
      return {
        session: true,
        reason: null,
        openSeconds: sessionOpenSeconds(date),
        closeSeconds: sessionCloseSeconds(date),
      };
    }
    return { session: false, reason: closureReason(date) ?? 'closed', openSeconds: null, closeSeconds: null };
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    const weekday = new Date(`${date}T12:00:00Z`).getUTCDay();
    if (weekday === 0 || weekday === 6) {
      return { session: false, reason: 'weekend', openSeconds: null, closeSeconds: null };
    }
    return {
      session: true,
      reason: null,
      openSeconds: etWallToSeconds(date, '09:30'),
      closeSeconds: etWallToSeconds(date, '16:00'),
    };
  }
}

/**
 * The first session after `date`, with the same fallback as `barDay` outside the calendar's years (the
 * next weekday).
 */
export function sessionAfter(date: string): string {
  try {
    return nextSession(date);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    const day = new Date(`${date}T12:00:00Z`);
    do day.setUTCDate(day.getUTCDate() + 1);
    while (day.getUTCDay() === 0 || day.getUTCDay() === 6);
    return day.toISOString().slice(0, 10);
  }
}

/**
 * Creates temp table `name` (`d DATE, session BOOLEAN, reason VARCHAR, open_ts, close_ts, start_ts,
 * end_ts TIMESTAMPTZ`: the session's open and close, 00:00 ET of the day and of the next) with one row per
 * distinct non-null value of `column` in `source`.
 */
export async function createBarDaysTable(
  sql: SqlSession,
  name: string,
  source: string,
  column: string,
): Promise<void> {
  const dates = await sql.all<{ d: string }>(
    `SELECT DISTINCT ${quoteIdentifier(column)} AS d FROM ${quoteIdentifier(source)} WHERE ${quoteIdentifier(column)} IS NOT NULL`,
  );
  const days = dates.map((row) => barDay(row.d));
  await sql.run(
    `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(name)} (d DATE, session BOOLEAN, reason VARCHAR, open_ts TIMESTAMPTZ, close_ts TIMESTAMPTZ, start_ts TIMESTAMPTZ, end_ts TIMESTAMPTZ)`,
  );
  await sql.append(name, [
    dates.map((row) => row.d),
    days.map((day) => day.session),
    days.map((day) => day.reason),
    days.map((day) => day.openSeconds),
    days.map((day) => day.closeSeconds),
    dates.map((row) => etMidnightSeconds(row.d)),
    dates.map((row) => etMidnightSeconds(dayAfter(row.d))),
  ]);
}

function dayAfter(date: string): string {
  const day = new Date(`${date}T12:00:00Z`);
  day.setUTCDate(day.getUTCDate() + 1);
  return day.toISOString().slice(0, 10);
}

const price = (column: string): string => `rtrim(rtrim(CAST(${column} AS VARCHAR), '0'), '.')`;

/**
 * The reason a typed bar row breaks a rule, or NULL. Expects the bar columns, `_line`, the day columns of
 * `createBarDaysTable` and `first_line`, the smallest `_line` with the same key.
 */
export const BAR_RULES_SQL = `CASE
    WHEN symbol IS NULL OR NOT regexp_full_match(symbol, '[A-Z0-9][A-Z0-9.\\-]{0,15}') THEN 'bad symbol ' || coalesce('"' || symbol || '"', '(missing)')
    WHEN session_date IS NULL OR t IS NULL THEN 'missing time'
    WHEN o IS NULL OR h IS NULL OR l IS NULL OR c IS NULL THEN 'missing price'
    WHEN v IS NULL THEN 'missing volume'
    WHEN resolution NOT IN ('D', '1') THEN 'bad resolution "' || resolution || '" (D or 1)'
    WHEN NOT session THEN 'not a session: ' || strftime(session_date, '%Y-%m-%d') || ' (' || reason || ')'
    WHEN resolution = 'D' AND t <> start_ts THEN 'daily bar t is not 00:00 ET of its session date'
    WHEN resolution = '1' AND (t < start_ts OR t >= end_ts) THEN 'bar t is not on its session date (ET)'
    WHEN resolution = '1' AND epoch(t) % 60 <> 0 THEN 'minute bar does not start on a whole minute'
    WHEN o < 0 THEN 'negative value: open ' || ${price('o')}
    WHEN h < 0 THEN 'negative value: high ' || ${price('h')}
    WHEN l < 0 THEN 'negative value: low ' || ${price('l')}
    WHEN c < 0 THEN 'negative value: close ' || ${price('c')}
    WHEN h < greatest(o, c) THEN 'high ' || ${price('h')} || ' is below max(open, close) ' || ${price('greatest(o, c)')}
    WHEN l > least(o, c) THEN 'low ' || ${price('l')} || ' is above min(open, close) ' || ${price('least(o, c)')}
    WHEN v < 0 THEN 'negative value: volume ' || CAST(v AS VARCHAR)
    WHEN first_line < _line THEN 'duplicate row: same symbol, resolution and t as line ' || CAST(first_line AS VARCHAR)
  END`;

/**
 * Moves one file's typed bars from temp table `source` (bar columns, `_line`, `_reject`) into the staging
 * table `target`, recording the first broken rule of each row in `_reject` (a reason already there wins).
 * With `regularHoursOnly`, intraday bars of a session that start before its open or at/after its close are
 * dropped, not rejected. Returns the number of rows dropped.
 */
export async function validateBars(
  sql: SqlSession,
  source: string,
  target: string,
  options: { readonly regularHoursOnly?: boolean } = {},
): Promise<number> {
  const days = `${source}_days`;
  await createBarDaysTable(sql, days, source, 'session_date');
  try {
    const keep = options.regularHoursOnly
      ? `WHERE NOT coalesce(b.resolution = '1' AND d.session AND (b.t < d.open_ts OR b.t >= d.close_ts), false)`
      : '';
    const columns = [...BAR_COLUMNS, '_line', '_reject'].map(quoteIdentifier).join(', ');
    const before = await sql.value<number>(`SELECT count(*) FROM ${quoteIdentifier(target)}`);
    await sql.run(
      `INSERT INTO ${quoteIdentifier(target)} (${columns})
       SELECT ${BAR_COLUMNS.map(quoteIdentifier).join(', ')}, _line, coalesce(_reject, ${BAR_RULES_SQL})
       FROM (
         SELECT b.*, d.session, d.reason, d.start_ts, d.end_ts,
                min(b._line) OVER (PARTITION BY b.symbol, b.resolution, b.t) AS first_line
         FROM ${quoteIdentifier(source)} b LEFT JOIN ${quoteIdentifier(days)} d ON d.d = b.session_date
         ${keep}
       )
       ORDER BY _line`,
    );
    const after = await sql.value<number>(`SELECT count(*) FROM ${quoteIdentifier(target)}`);
    const read = await sql.value<number>(`SELECT count(*) FROM ${quoteIdentifier(source)}`);
    return read - (after - before);
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(days)}`);
  }
}

/**
 * Moves one file's splits from temp table `source` (`symbol, ex_date, ratio, _line, _reject`) into the
 * staging table `target`, rejecting a non-session ex-date, a ratio that is not a positive finite number
 * other than 1, and a second split of a symbol on one ex-date.
 */
export async function validateSplits(sql: SqlSession, source: string, target: string): Promise<void> {
  const days = `${source}_days`;
  await createBarDaysTable(sql, days, source, 'ex_date');
  try {
    await sql.run(
      `INSERT INTO ${quoteIdentifier(target)} (symbol, ex_date, ratio, _line, _reject)
       SELECT symbol, ex_date, ratio, _line, coalesce(_reject, CASE
           WHEN symbol IS NULL OR NOT regexp_full_match(symbol, '[A-Z0-9][A-Z0-9.\\-]{0,15}') THEN 'bad symbol ' || coalesce('"' || symbol || '"', '(missing)')
           WHEN ex_date IS NULL THEN 'missing ex-date'
           WHEN NOT session THEN 'not a session: ex-date ' || strftime(ex_date, '%Y-%m-%d') || ' (' || reason || ')'
           WHEN ratio IS NULL OR NOT isfinite(ratio) OR ratio <= 0 OR ratio = 1 THEN 'bad split ratio ' || coalesce(CAST(ratio AS VARCHAR), '(missing)')
           WHEN first_line < _line THEN 'duplicate row: same symbol and ex-date as line ' || CAST(first_line AS VARCHAR)
         END)
       FROM (
         SELECT s.*, d.session, d.reason, min(s._line) OVER (PARTITION BY s.symbol, s.ex_date) AS first_line
         FROM ${quoteIdentifier(source)} s LEFT JOIN ${quoteIdentifier(days)} d ON d.d = s.ex_date
       )
       ORDER BY _line`,
    );
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(days)}`);
  }
}
