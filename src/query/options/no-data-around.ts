/**
 * The no-data answer of an option query: the scope's nearest sessions with data on either side of the
 * sessions asked, looked for in the session column files when they can say, else by statements over
 * widening spans of the files.
 */
import { sessionEndSeconds } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import type { SessionRange, SqlSession, SqlValue } from '../../store/sql.js';
import type { NoData } from '../types.js';
import { contractTable } from './contract-table.js';
import { dayNumberOfIso, isoDateOfDay } from './days.js';
import type { Scope } from './scope.js';
import { partRuns } from './session-file-rows.js';

/**
 * A no-data answer carrying the nearest sessions with data for the scope before `first` and after `last`
 * (default: `first`), each as the `updated` instant (16:00 ET) a dated request for it would show, or null.
 * An underlying's or a root's are looked for in the session column files first (a root's contracts from
 * the contract table `cache` keeps).
 */
export async function noDataAround(
  sql: SqlSession,
  cache: StoreCache,
  scope: Scope,
  first: string,
  last: string = first,
): Promise<NoData> {
  const previous = await nearestSession(sql, scope, dayNumberOfIso(first), -1, cache);
  const next = await nearestSession(sql, scope, dayNumberOfIso(last), 1, cache);
  return {
    kind: 'no_data',
    nextTime: next === null ? null : sessionEndSeconds(next),
    prevTime: previous === null ? null : sessionEndSeconds(previous),
  };
}

/** Days the first look for the nearest session with data spans; each next look spans ten times more. */
const FIRST_LOOK_DAYS = 14;

/**
 * The scope's nearest session with data before (`direction` -1) or after (1) day number `from`, or null.
 * Looked for in widening spans of days over the files that hold them, within the partition's extent: the
 * nearest is mostly a session or two away, and one statement over every file of the underlying (a chain
 * whose filters keep nothing, a root without monthlies asked its front month) cost 0.5 s of CPU on a
 * 26 M-row store. Without an extent (outside a store reader), one statement over all of them.
 */
async function nearestSession(
  sql: SqlSession,
  scope: Scope,
  from: number,
  direction: -1 | 1,
  cache: StoreCache,
): Promise<string | null> {
  const extent = sql.extent('option_quotes', { underlying: scope.underlying });
  const low = extent === undefined ? Number.NEGATIVE_INFINITY : dayNumberOfIso(extent.first);
  const high = extent === undefined ? Number.POSITIVE_INFINITY : dayNumberOfIso(extent.last);
  // From outside the extent, the looks start at its edge.
  let near = direction === 1 ? Math.max(from + 1, low) : Math.min(from - 1, high);
  for (let span = FIRST_LOOK_DAYS; ; span *= 10) {
    const far = extent === undefined ? direction * Number.POSITIVE_INFINITY : near + direction * (span - 1);
    // The span's days within the extent: none left, no data that way.
    const first = Math.max(Math.min(near, far), low);
    const last = Math.min(Math.max(near, far), high);
    if (first > last) return null;
    const inFiles = await sessionWithDataInFiles(sql, cache, scope, direction, first, last);
    const found = inFiles !== undefined ? inFiles : await sessionWithData(sql, scope, direction, first, last);
    if (found !== null) return found;
    if (first === low && direction === -1) return null;
    if (last === high && direction === 1) return null;
    near = far + direction;
  }
}

/**
 * `sessionWithData` from the session column files, with no statement: the first session of the span (from
 * its near end) with a row of the scope. An underlying's is its first session with rows; a root's, its
 * first with a row whose contract is of that root (the session's keys read at once, each looked up in the
 * contract table: a root without monthlies asked its front month, SPXW's, took 48-64 ms of statements
 * on the 213 M-row bench store). Undefined when the files cannot say (a session without such a file, rows
 * named by symbols, a file that cannot be read) and for one contract (whose nearest session may be months
 * away, many sessions' keys): the statement answers then.
 */
async function sessionWithDataInFiles(
  sql: SqlSession,
  cache: StoreCache,
  scope: Scope,
  direction: -1 | 1,
  first: number,
  last: number,
): Promise<string | null | undefined> {
  if ('optionSymbol' in scope || !Number.isFinite(first) || !Number.isFinite(last)) return undefined;
  const parts = sql.sessionColumns(
    'option_quotes',
    { underlying: scope.underlying },
    { first: isoDateOfDay(first), last: isoDateOfDay(last) },
  );
  if (parts === undefined) return undefined;
  let ofRoot: ((key: number) => boolean) | undefined;
  if (scope.root !== undefined) {
    const table = await contractTable(sql, cache, scope.underlying);
    const keys = table.keys;
    if (keys === undefined) return undefined;
    // A root the table does not list is -1, which no contract's is: no session has data of it.
    const root = table.roots.indexOf(scope.root);
    ofRoot = (key) => {
      const id = keys.get(key);
      return id !== undefined && table.root[id] === root;
    };
  }
  try {
    for (let i = 0; i < parts.length; i++) {
      const part = parts[direction === 1 ? i : parts.length - 1 - i]!;
      if (part.rows > 0 && (ofRoot === undefined || partRuns([part], ofRoot).rows > 0))
        return isoDateOfDay(part.day);
    }
  } catch {
    return undefined; // read by the statement instead
  }
  return null;
}

/** The scope's latest (`direction` -1) or earliest (1) session with data among days `first`…`last`. */
async function sessionWithData(
  sql: SqlSession,
  scope: Scope,
  direction: -1 | 1,
  first: number,
  last: number,
): Promise<string | null> {
  const params: Record<string, SqlValue> = { underlying: scope.underlying };
  let where = 'q.underlying = $underlying';
  const sessions: { -readonly [K in keyof SessionRange]: SessionRange[K] } = {};
  if (Number.isFinite(first)) {
    params['first'] = sessions.first = isoDateOfDay(first);
    where += ' AND q.session_date >= CAST($first AS DATE)';
  }
  if (Number.isFinite(last)) {
    params['last'] = sessions.last = isoDateOfDay(last);
    where += ' AND q.session_date <= CAST($last AS DATE)';
  }
  if ('optionSymbol' in scope) {
    where += ' AND q.option_symbol = $symbol';
    params['symbol'] = scope.optionSymbol;
  } else if (scope.root !== undefined) {
    const contracts = await sql.from('contracts', { underlying: scope.underlying });
    where += ` AND q.option_symbol IN (SELECT option_symbol FROM ${contracts} c WHERE c.underlying = $underlying AND c.root = $root)`;
    params['root'] = scope.root;
  }
  const quotes = await sql.from('option_quotes', { underlying: scope.underlying }, sessions);
  const found = await sql.value<string | null>(
    `SELECT ${direction === -1 ? 'max' : 'min'}(q.session_date) FROM ${quotes} q WHERE ${where}`,
    params,
  );
  return found ?? null;
}
