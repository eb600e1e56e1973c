/**
 * A current answer outside a session loop (a request at a random instant, a server's traffic): from a
 * block of the as-of's session and the one before, read once and kept for the session's other instants,
 * with the contracts not quoted in them carried from before (`block-carry.ts`). `read-ahead.ts` decides
 * when a request is a loop's; `scope-answer.ts` asks this path when it is not.
 */
import { previousSession } from '../../market-time/index.js';
import { asOfSession, type CurrentAsOf } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import { lookBackInFiles } from './block-carry.js';
import { loadContracts, type ScopeContracts } from './block-contracts.js';
import { loadBlock } from './block-read.js';
import { covers, currentRows } from './block-rows.js';
import { SYMBOL_KEY } from './block-sql.js';
import { dayNumberOfIso, isoDateOfDay, sessionCount } from './days.js';
import type { Scope } from './scope.js';
import type { RowSource } from './snapshot-sql.js';

/**
 * Rows the block of a current request outside a loop may hold (its session and the one before): sessions
 * denser than half of it (an index's chain snapshotted every minute) are left to the query.
 */
const SESSION_PAIR_ROWS = 200_000;

/**
 * Rows the search for its contracts not quoted in the two sessions may scan through DuckDB (`carriedRows`):
 * a longer one costs as much as the query it would spare. One from session column files has no bound: on
 * the 26 M-row bench store, whose deep LEAPS go unquoted from one generated year to the next, a whole SPY
 * chain at a random 15:45 went from the query's 1.2 s of CPU (p50) to 73 ms with the bound lifted there.
 */
const SESSION_PAIR_CARRY_ROWS = 1_000_000;

/**
 * A current answer outside a session loop (a request at a random instant), from a block of the as-of's
 * session and the one before, read once and kept in the store's session cache for the session's other
 * instants. A contract's latest snapshot by the cutoff is in one of the two sessions, or is carried from
 * before them (`carriedRows`). Undefined when the block cannot prove the answer, or the sessions are too
 * dense for one: the query answers then. A whole chain at one instant by query scans its contracts' terms
 * and every snapshot before the cutoff (about half a second on a 26 M-row store).
 */
export async function sessionPairRows(
  sql: SqlSession,
  cache: StoreCache,
  asOf: CurrentAsOf,
  scope: Exclude<Scope, { optionSymbol: string }>,
): Promise<RowSource | undefined> {
  const session = asOfSession(asOf);
  const first = previousSession(session);
  const block = await cache.sized(
    `read-ahead|session-pair|${JSON.stringify(scope)}|${session}`,
    async () => {
      const quoted = await quotedKeys(sql, scope.underlying, first);
      if (quoted.length * 2 > SESSION_PAIR_ROWS) return undefined;
      const known = await loadContracts(sql, cache, scope, first, session);
      const rowsPerSession = Math.max(1, quoted.length);
      // A look back too long to make through DuckDB (`carriedRows`) would leave the block unable to
      // answer: the block is not read, and the query answers at no more than its own cost. One that reads
      // session column files costs the sessions holding its rows, whatever its span.
      const since = unquotedSince(known, quoted, dayNumberOfIso(first));
      const carryRows = cache.sessionPairCarryRows ?? SESSION_PAIR_CARRY_ROWS;
      if (
        since !== undefined &&
        sessionCount(since, first) * rowsPerSession > carryRows &&
        !lookBackInFiles(sql, scope.underlying, known, since, first)
      ) {
        return undefined;
      }
      return loadBlock(sql, scope, first, session, known, {
        rowsPerSession,
        sliceRows: SESSION_PAIR_ROWS,
        carryRows,
      });
    },
    (block) => block?.bytes ?? 0,
  );
  if (block === undefined || !covers(block, asOf)) return undefined;
  return currentRows(block, asOf, undefined, scope.expiration);
}

/** The symbol hashes (`SYMBOL_KEY`) of the underlying's quote rows of a session, one per row. */
async function quotedKeys(sql: SqlSession, underlying: string, session: string): Promise<Float64Array> {
  const quotes = await sql.from('option_quotes', { underlying }, { first: session, last: session });
  const { columns } = await sql.doubleColumns(
    `SELECT ${SYMBOL_KEY('q')} FROM ${quotes} q
     WHERE q.underlying = $underlying AND q.session_date = CAST($session AS DATE)`,
    { underlying, session },
  );
  return columns[0] ?? new Float64Array(0);
}

/**
 * Of the contracts traded before `firstDay` and not quoted on it (their hashes not among `quoted`): the
 * earliest first traded session, where the look back for their latest snapshots starts (`carriedRows`);
 * undefined when there are none, or when contracts are not named by hashes (the look back is then made).
 */
export function unquotedSince(
  known: Pick<ScopeContracts, 'firstTradedDay'> & {
    readonly keys: { readonly hashOf: Float64Array } | undefined;
  },
  quoted: Float64Array,
  firstDay: number,
): string | undefined {
  const hashOf = known.keys?.hashOf;
  if (hashOf === undefined) return undefined;
  const seen = new Set(quoted);
  let since = Number.POSITIVE_INFINITY;
  for (let id = 0; id < hashOf.length; id++) {
    const firstTraded = known.firstTradedDay[id]!;
    if (firstTraded < firstDay && firstTraded < since && !seen.has(hashOf[id]!)) since = firstTraded;
  }
  return since === Number.POSITIVE_INFINITY ? undefined : isoDateOfDay(since);
}
