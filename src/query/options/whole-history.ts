/**
 * An underlying's whole history as one block, for random requests outside loops once they have asked
 * enough distinct sessions of it (a server's traffic, a notebook's exploring), when it fits in half the
 * session cache: every later chain and contract of it is then answered from memory.
 */
import { type AsOf, asOfSession } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import type { Block } from './block.js';
import { QUOTE_COLUMNS } from './block-columns.js';
import { contractIndex, loadContracts } from './block-contracts.js';
import { loadBlock } from './block-read.js';
import { covers, currentRows, datedRows } from './block-rows.js';
import { sessionCount } from './days.js';
import type { Scope } from './scope.js';
import { type RowSource, rowSource } from './snapshot-sql.js';

/** Distinct sessions asked of an underlying outside loops before its whole history is read at once. */
const WHOLE_HISTORY_AFTER_SESSIONS = 8;

/** About what a block holds a quote row (its columns and index) and an open interest row. */
const QUOTE_ROW_BYTES = QUOTE_COLUMNS.length * 8 + 8;
const INTEREST_ROW_BYTES = 32;

/** What an underlying's random requests have asked, for `wholeHistoryRows`. */
type WholeHistoryState = { readonly asked: Set<string>; read: boolean };

/**
 * An answer outside a loop from a block of the underlying's whole history, read once its requests have
 * asked `WHOLE_HISTORY_AFTER_SESSIONS` distinct sessions (a server's random traffic, a notebook's
 * exploring) when the history fits in half the session cache (on the sample, SPY's two years are some
 * 50 MB): every later chain and contract of any session of it is then answered from memory, dated or at
 * any instant. Read at most once per data version: a block the cache has let go is not read again (two
 * such histories taking turns would read each other out). Undefined otherwise, or when the block cannot
 * prove the answer: the session paths and the query answer then.
 */
export async function wholeHistoryRows(
  sql: SqlSession,
  cache: StoreCache,
  asOf: AsOf,
  scope: Scope,
): Promise<RowSource | undefined> {
  if (!('optionSymbol' in scope) && scope.root !== undefined) return undefined;
  const underlying = scope.underlying;
  const key = `read-ahead|whole|${underlying}`;
  let pending = cache.heldSized<Block>(key);
  if (pending === undefined) {
    const state = cache.state<WholeHistoryState>(key, () => ({ asked: new Set(), read: false }));
    if (state.read) return undefined;
    state.asked.add(asOfSession(asOf));
    if (state.asked.size < WHOLE_HISTORY_AFTER_SESSIONS) return undefined;
    // Decided once, read or not: the manifest is not walked again on every request after.
    state.read = true;
    const quotes = sql.extent('option_quotes', { underlying });
    const interest = sql.extent('open_interest', { underlying });
    if (quotes === undefined) return undefined;
    const bytes = quotes.rows * QUOTE_ROW_BYTES + (interest?.rows ?? 0) * INTEREST_ROW_BYTES;
    if (bytes > cache.sessionCacheCapacity / 2) return undefined;
    const whole = { underlying };
    const sessions = Math.max(1, sessionCount(quotes.first, quotes.last) + 1);
    pending = cache.sized(
      key,
      () =>
        loadBlock(
          sql,
          whole,
          quotes.first,
          quotes.last,
          loadContracts(sql, cache, whole, quotes.first, quotes.last),
          {
            rowsPerSession: Math.max(1, quotes.rows / sessions),
            sliceRows: quotes.rows,
          },
        ),
      (block) => block.bytes,
    );
  }
  // Only a way to answer sooner: a history that could not be read leaves the answer to the other paths.
  const block = await pending.catch(() => undefined);
  if (block === undefined || !covers(block, asOf)) return undefined;
  let only: number | undefined;
  if ('optionSymbol' in scope) {
    only = contractIndex(block.contracts, scope.optionSymbol);
    // The block holds every contract of the history: one it does not hold has no row at any instant of it.
    if (only === -1) return rowSource([]);
  }
  const expiration = 'optionSymbol' in scope ? undefined : scope.expiration;
  return asOf.kind === 'dated'
    ? datedRows(block, asOf.session, only, expiration)
    : currentRows(block, asOf, only, expiration);
}
