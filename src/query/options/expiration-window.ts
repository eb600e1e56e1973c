/**
 * The expiration dates a session loop's block holds. A loop whose every request asks one date of a chain
 * (the date a `dte` or the front month picks, an `expiration` asked, the contracts a backtest holds) needs
 * the few dates it can ask over the block's sessions, not the whole chain: on the 26 M-row bench store a
 * SPY session is 13,352 rows over 31 dates, and the dates a 30-day loop asks over the next month hold a
 * fifth of them. Such a block holds every row of the contracts expiring in its window, so each of those
 * dates is answered as a whole chain's block answers it; a request outside the window, or of the whole
 * chain, reads a new block.
 */
import { quoteLiteral } from '../../store/sql.js';
import { dayNumberOfIso, isoDateOfDay } from './days.js';

/** The dates a block holds, `low`…`high` (ISO dates, both included). */
export type ExpirationWindow = { readonly low: string; readonly high: string };

/**
 * Days past the asked date (moved on by the block's own span) that a window holds. The date a request
 * picks moves with the session, but not one for one: `dte=30` on a chain of monthlies picks the next
 * month's date while the nearest is 15 days out, so a month covers the jumps a calendar's dates make.
 */
export const WINDOW_SLACK_DAYS = 35;

/**
 * The rows a session of a chain holds from which a loop reads blocks of its dates: a sparser chain's whole
 * block reaches far ahead in a few statements (on the sample's SPY, 650 rows a session, blocks of a month's
 * dates took its `dte=30` loop from 1.33 to 1.51 ms a session), a denser one's a few weeks (the 26 M-row
 * bench store's SPY, 13,000 rows a session).
 */
export const WINDOW_SESSION_ROWS = 10_000;

/**
 * The most sessions a windowed block reads ahead: its window grows with its span (the date asked moves on
 * with every session), so a longer span reads more dates for every one of its sessions.
 */
export const WINDOW_AHEAD_SESSIONS = 30;

/**
 * What a request of a loop needs of a block: one date (an ISO date), or the whole chain (undefined). A
 * date before the session has no contract alive at it (`''`, before every date, is what a contract the
 * underlying does not list asks: it has no row in any block).
 */
export type ExpirationNeed = string | undefined;

/** Whether a block holding `window` (undefined: every date) answers `need` at `session` whole. */
export function windowHolds(
  window: ExpirationWindow | undefined,
  need: ExpirationNeed,
  session: string,
): boolean {
  if (window === undefined) return true;
  if (need === undefined) return false;
  if (need < session) return true;
  return need >= window.low && need <= window.high;
}

/**
 * The window of a new block from `session` to `last` for `need`: from the date asked to as far as the
 * block's span moves it, and the slack; with what the loop's previous window held that is still alive (a
 * backtest holds last month's pick while it asks this month's), so requests taking turns do not read
 * block after block.
 */
export function nextWindow(
  previous: ExpirationWindow | undefined,
  need: string,
  session: string,
  last: string,
): ExpirationWindow {
  let low = need < session ? session : need;
  const advance = Math.max(0, dayNumberOfIso(last) - dayNumberOfIso(session));
  let high = isoDateOfDay(dayNumberOfIso(low) + advance + WINDOW_SLACK_DAYS);
  if (previous !== undefined && previous.high >= session) {
    const alive = previous.low < session ? session : previous.low;
    if (alive < low) low = alive;
    if (previous.high > high) high = previous.high;
  }
  return { low, high };
}

/**
 * The condition keeping rows of `alias` that may belong to `contracts` (a block's, in symbol order): per
 * root, its contracts' symbols from the least to the greatest, a range the Parquet scan prunes row groups
 * with. Rows of other contracts in a range (another date's under a root whose symbols carry a Saturday, a
 * root that is another's prefix) are dropped when the rows are numbered. `AND false` without a contract.
 */
export function contractSymbolsSql(
  alias: string,
  contracts: readonly { readonly root: string; readonly option_symbol: string }[],
): string {
  if (contracts.length === 0) return 'AND false';
  const spans = new Map<string, [least: string, greatest: string]>();
  for (const { root, option_symbol: symbol } of contracts) {
    const span = spans.get(root);
    if (span === undefined) spans.set(root, [symbol, symbol]);
    else if (symbol < span[0]) span[0] = symbol;
    else if (symbol > span[1]) span[1] = symbol;
  }
  const ranges = [...spans.values()].map(
    ([least, greatest]) =>
      `(${alias}.option_symbol BETWEEN ${quoteLiteral(least)} AND ${quoteLiteral(greatest)})`,
  );
  return `AND (${ranges.join(' OR ')})`;
}
