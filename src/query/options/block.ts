/**
 * A block: a scope's snapshots and open interest of a range of sessions, held as numeric columns and
 * indexed by contract and session. `block-read.ts` reads one, `block-carry.ts` carries rows into it from
 * before its first session, and `block-rows.ts` answers as-ofs from it.
 */
import type { InterestColumns, QuoteColumns, SessionRange } from './block-columns.js';
import type { ContractTermColumns } from './block-contracts.js';
import type { Contract } from './contract-table.js';
import type { ExpirationWindow } from './expiration-window.js';

/**
 * A scope's snapshots of a range of sessions: the contracts once, the rows as numeric columns ordered by
 * session, contract and quote time (strings are what make reading rows slow), open interest per contract.
 */
export type Block = {
  readonly first: string;
  readonly last: string;
  /** The expiration dates it holds (a one-date loop's, `expiration-window.ts`); undefined: every date. */
  readonly window: ExpirationWindow | undefined;
  readonly contracts: readonly Contract[];
  readonly quotes: QuoteColumns;
  readonly sessions: ReadonlyMap<string, SessionRange>;
  /** Per contract index, its rows (in session, then quote time order): `byContract[offsets[id]…offsets[id+1])`. */
  readonly offsets: Int32Array;
  readonly byContract: Int32Array;
  /** Contract indices in expiration order, and their expirations: the contracts alive at a session are a suffix. */
  readonly byExpiration: Int32Array;
  readonly expirations: readonly string[];
  /** Per contract index: its first traded session as a day number. */
  readonly firstTradedDay: Float64Array;
  /** Per contract index: its terms as numbers (what an answer's columns gather). */
  readonly terms: ContractTermColumns;
  /** Per contract index: its open interest rows in settled-session order. */
  readonly interest: InterestColumns;
  /**
   * Per contract index, 1 when the block holds its latest snapshot (open interest) from before the block
   * too, found by looking back to its first traded session: then it has no older one than the block holds.
   */
  readonly carriedQuotes: Uint8Array | undefined;
  readonly carriedInterest: Uint8Array | undefined;
  /** About how many bytes the block holds (what the session cache counts). */
  readonly bytes: number;
};
