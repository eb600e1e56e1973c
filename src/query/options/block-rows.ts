/**
 * Answering an as-of from a block, by the same rules as `snapshot-sql.ts`: a dated as-of from its
 * session's last snapshots, a current one from each contract's latest snapshot and open interest by the
 * cutoff. A current answer the block cannot prove (a contract whose latest row may be older than the
 * block) is undefined: the caller queries.
 */
import { previousSession } from '../../market-time/index.js';
import { type AsOf, asOfSession, type CurrentAsOf, lastSessionOf } from '../../pit/as-of.js';
import type { Block } from './block.js';
import { ColumnBuffer, type InterestColumns } from './block-columns.js';
import { dayNumberOfIso, isoDateOfDay, tryNextSession } from './days.js';
import type {
  CurrentSnapshotColumns,
  DatedSnapshotColumns,
  RowSource,
  SnapshotColumns,
  SnapshotRow,
} from './snapshot-sql.js';
import { firstAbove, firstNot } from './sorted-search.js';

/** Whether every row an as-of may use lies in the block's sessions (older ones are checked later). */
export function covers(block: Block, asOf: AsOf): boolean {
  if (asOf.kind === 'dated') return asOf.session >= block.first && asOf.session <= block.last;
  const through = lastSessionOf(asOf);
  const after = tryNextSession(block.last);
  return through >= block.first && (after === undefined || through < after);
}

/** A NaN read for NULL, back to null. */
export function nullable(value: number): number | null {
  return Number.isNaN(value) ? null : value;
}

/** The store row of a block's row `i`, with the open interest row that answers it (-1: none). */
function rowAt(block: Block, i: number, interestRow: number, session: string): SnapshotRow {
  const q = block.quotes;
  const interest = block.interest;
  const contract = block.contracts[q.contract[i]!]!;
  // Every field named, in one order: one object shape for all rows (a spread of the driver's row
  // objects made each row slow to build and to read).
  return {
    option_symbol: contract.option_symbol,
    underlying: contract.underlying,
    root: contract.root,
    expiration: contract.expiration,
    expiration_time: contract.expiration_time,
    side: contract.side,
    strike: contract.strike,
    settlement: contract.settlement,
    monthly: contract.monthly,
    weekly: contract.weekly,
    quarterly: contract.quarterly,
    nonstandard: contract.nonstandard,
    first_traded: contract.first_traded,
    session_date: session,
    quote_time: q.quote_time[i]!,
    bid: nullable(q.bid[i]!),
    ask: nullable(q.ask[i]!),
    bid_size: nullable(q.bid_size[i]!),
    ask_size: nullable(q.ask_size[i]!),
    last: nullable(q.last[i]!),
    volume: nullable(q.volume[i]!),
    volume_time: nullable(q.volume_time[i]!),
    underlying_price: nullable(q.underlying_price[i]!),
    iv: nullable(q.iv[i]!),
    delta: nullable(q.delta[i]!),
    gamma: nullable(q.gamma[i]!),
    theta: nullable(q.theta[i]!),
    vega: nullable(q.vega[i]!),
    open_interest: interestRow === -1 ? null : nullable(interest.openInterest[interestRow]!),
    oi_published_at: interestRow === -1 ? null : interest.publishedAt[interestRow]!,
  };
}

/**
 * A dated as-of: each contract's latest snapshot of session D, open interest settled from D−1 (only
 * contract `only`, or only the contracts of one expiration, when given).
 */
export function datedRows(block: Block, session: string, only?: number, expiration?: string): RowSource {
  const range = block.sessions.get(session);
  const rows: number[] = [];
  if (range !== undefined) {
    const contractOf = block.quotes.contract;
    for (let i = range.start; i < range.end; i++) {
      const id = contractOf[i]!;
      if (only !== undefined && id !== only) continue;
      if (i + 1 < range.end && contractOf[i + 1] === id) continue; // not the contract's latest snapshot
      const expires = block.contracts[id]!.expiration;
      if (expires >= session && (expiration === undefined || expires === expiration)) rows.push(i);
    }
  }
  const settledDay = dayNumberOfIso(previousSession(session));
  const interestOf = (id: number) => settledInterest(block.interest, id, settledDay);
  return {
    ...blockSource(block, rows, interestOf),
    datedColumns: (): DatedSnapshotColumns => ({
      ...columnsOf(block, rows, interestOf, new ColumnBuffer(rows.length, DATED_COLUMNS)),
      session,
    }),
  };
}

/** The rows of a block chosen for an as-of, made into store rows only when asked for. */
function blockSource(
  block: Block,
  rows: readonly number[],
  interestOf: (contract: number) => number,
): RowSource {
  const contractOf = block.quotes.contract;
  return {
    length: rows.length,
    groupOf: (index) => block.contracts[contractOf[rows[index]!]!]!,
    row: (index) => {
      const row = rows[index]!;
      return rowAt(block, row, interestOf(contractOf[row]!), isoDateOfDay(block.quotes.day[row]!));
    },
  };
}

/** The number columns of a dated answer's rows (`columnsOf`), and of a current one's (`currentColumnsOf`). */
const DATED_COLUMNS = 15;
const CURRENT_COLUMNS = 21;

/**
 * An answer's rows of a block as columns (`datedValueColumns`, `currentValueColumns`), gathered once: what
 * `rowAt` reads.
 */
function columnsOf(
  block: Block,
  rows: readonly number[],
  interestOf: (contract: number) => number,
  columns: ColumnBuffer,
): SnapshotColumns {
  const q = block.quotes;
  const length = rows.length;
  const contracts = new Int32Array(length);
  const interestRows = new Int32Array(length);
  for (let index = 0; index < length; index++) {
    const id = q.contract[rows[index]!]!;
    contracts[index] = id;
    interestRows[index] = interestOf(id);
  }
  const terms = block.terms;
  const ofContracts = (column: Float64Array) => columns.gathered(column, contracts);
  const ofRows = (column: Float64Array) => columns.gathered(column, rows);
  const ofInterest = (column: Float64Array) => {
    const out = columns.take();
    for (let index = 0; index < length; index++) {
      const row = interestRows[index]!;
      out[index] = row === -1 ? Number.NaN : column[row]!;
    }
    return out;
  };
  const isCall = new Uint8Array(length);
  for (let index = 0; index < length; index++) isCall[index] = terms.isCall[contracts[index]!]!;
  return {
    length,
    underlying: length === 0 ? '' : block.contracts[contracts[0]!]!.underlying,
    symbolAt: (index) => block.contracts[contracts[index]!]!.option_symbol,
    isCall,
    strike: ofContracts(terms.strike),
    expirationTime: ofContracts(terms.expirationTime),
    expirationDay: ofContracts(terms.expirationDay),
    firstTradedDay: ofContracts(block.firstTradedDay),
    quoteTime: ofRows(q.quote_time),
    bid: ofRows(q.bid),
    ask: ofRows(q.ask),
    bidSize: ofRows(q.bid_size),
    askSize: ofRows(q.ask_size),
    last: ofRows(q.last),
    volume: ofRows(q.volume),
    volumeTime: ofRows(q.volume_time),
    underlyingPrice: ofRows(q.underlying_price),
    openInterest: ofInterest(block.interest.openInterest),
    oiPublishedAt: ofInterest(block.interest.publishedAt),
  };
}

/**
 * A current as-of: per listed contract the latest snapshot with q ≤ cutoff (with `eodOnly`, among the
 * sessions' last snapshots), and the latest open interest published by the cutoff. Undefined when a
 * contract may have an older snapshot or open interest than the block holds.
 */
export function currentRows(
  block: Block,
  asOf: CurrentAsOf,
  only?: number,
  expiration?: string,
): RowSource | undefined {
  const session = asOfSession(asOf);
  const through = lastSessionOf(asOf);
  const cutoff = asOf.cutoffSeconds;
  const throughDay = dayNumberOfIso(through);
  const { offsets, byExpiration, expirations, firstTradedDay } = block;
  const firstDay = dayNumberOfIso(block.first);
  const interestFloorDay = dayNumberOfIso(previousSession(block.first));
  // Only contracts that expire on or after the as-of session are listed: a suffix in expiration order.
  const low = firstNot(0, expirations.length, (i) => expirations[i]! < session);
  const rows: number[] = [];
  // One contract (`only`): the same walk over a one-element suffix, empty when it expired before. One
  // expiration: its contracts only, a run of the suffix (a minute loop over a 0DTE chain asks one date of
  // an index's thousands of contracts).
  let suffix: Int32Array;
  if (only !== undefined) {
    suffix = block.contracts[only]!.expiration >= session ? Int32Array.of(only) : new Int32Array(0);
  } else if (expiration !== undefined) {
    const start =
      expiration < session
        ? byExpiration.length
        : firstNot(low, expirations.length, (i) => expirations[i]! < expiration);
    suffix = byExpiration.subarray(
      start,
      firstNot(start, expirations.length, (i) => expirations[i]! === expiration),
    );
  } else suffix = byExpiration.subarray(low);
  const cursor = asOf.eodOnly ? undefined : latestCursor(block, throughDay, cutoff);
  for (const id of suffix) {
    const firstTraded = firstTradedDay[id]!;
    if (firstTraded > throughDay) continue;
    const found =
      cursor === undefined
        ? latestRow(block, offsets[id]!, offsets[id + 1]!, throughDay, cutoff, asOf.eodOnly)
        : cursorRow(block, cursor, id, throughDay, cutoff);
    if (found === -1) {
      // A contract traded before the block may have its latest snapshot before it: only the query knows.
      if (firstTraded < firstDay && !block.carriedQuotes?.[id]) return undefined;
      continue;
    }
    // Open interest settled before the block may be the latest published: only the query knows. (It may
    // be settled as early as the session before the contract's first traded session: see `carriedRows`.)
    if (
      firstTraded < firstDay &&
      !interestPublishedBy(block.interest, id, cutoff) &&
      !(block.carriedInterest?.[id] && !interestBefore(block.interest, id, interestFloorDay))
    ) {
      return undefined;
    }
    rows.push(found);
  }
  // Which open interest answers is found only for the rows made into records, or into columns.
  const interestOf = (id: number) => latestInterest(block.interest, id, cutoff);
  return {
    ...blockSource(block, rows, interestOf),
    currentColumns: () => currentColumnsOf(block, rows, interestOf),
  };
}

/** A current answer's rows of a block as columns: each row's own session, and the vendor's figures. */
function currentColumnsOf(
  block: Block,
  rows: readonly number[],
  interestOf: (contract: number) => number,
): CurrentSnapshotColumns {
  const q = block.quotes;
  // Let go once the answer's values are made from them: one buffer for the 21 columns.
  const columns = new ColumnBuffer(rows.length, CURRENT_COLUMNS);
  const ofRows = (column: Float64Array) => columns.gathered(column, rows);
  return {
    ...columnsOf(block, rows, interestOf, columns),
    sessionDay: ofRows(q.day),
    iv: ofRows(q.iv),
    delta: ofRows(q.delta),
    gamma: ofRows(q.gamma),
    theta: ofRows(q.theta),
    vega: ofRows(q.vega),
  };
}

/**
 * Where the last current answer from a block at one session found each contract's latest row of that
 * session by its cutoff: the next answer at a later cutoff of the session (a minute loop's next minute)
 * walks on from there, a row or two, instead of three searches by halves through the contract's rows
 * (each read a cache miss: an eighth of a minute's answer). One per block, made at the second answer
 * through one session (a loop over sessions answers once a session and makes none), and anew when a
 * request goes back in time or to another session.
 */
type LatestCursor = {
  readonly throughDay: number;
  cutoff: number;
  /** Whether it has been used: the positions below are kept from the second answer through the day on. */
  walking: boolean;
  /** Per contract index: the end of its rows on or before `throughDay` in `byContract`, -1 when not yet found. */
  readonly end: Int32Array;
  /** Per contract index: where its rows of its latest session by `throughDay` start in `byContract`. */
  readonly sessionStart: Int32Array;
  /** Per contract index: its latest row of that session by `cutoff` (`sessionStart - 1`: none yet). */
  readonly at: Int32Array;
};

const cursors = new WeakMap<Block, LatestCursor>();

/**
 * The block's cursor for a current answer through `throughDay` at `cutoff` (see {@link LatestCursor}), or
 * undefined for the first answer through that day: its arrays are made for the second.
 */
function latestCursor(block: Block, throughDay: number, cutoff: number): LatestCursor | undefined {
  let cursor = cursors.get(block);
  if (cursor === undefined || cursor.throughDay !== throughDay || cutoff < cursor.cutoff) {
    cursor = { throughDay, cutoff, walking: false, end: NONE, sessionStart: NONE, at: NONE };
    cursors.set(block, cursor);
    return undefined;
  }
  if (!cursor.walking) {
    const count = block.contracts.length;
    cursor = {
      throughDay,
      cutoff,
      walking: true,
      end: new Int32Array(count).fill(-1),
      sessionStart: new Int32Array(count),
      at: new Int32Array(count),
    };
    cursors.set(block, cursor);
  }
  cursor.cutoff = cutoff;
  return cursor;
}

const NONE = new Int32Array(0);

/**
 * Contract `id`'s latest row on or before `throughDay` with q ≤ cutoff, or -1: `latestRow` without
 * `eodOnly`. A session's rows of a contract are in quote time order, so the latest of its latest session
 * by a later cutoff is the one last found or after it; a contract with none of that session by the
 * cutoff is searched for before it by `latestRow`.
 */
function cursorRow(
  block: Block,
  cursor: LatestCursor,
  id: number,
  throughDay: number,
  cutoff: number,
): number {
  const { byContract, offsets } = block;
  const { day, quote_time: quoteTime } = block.quotes;
  const start = offsets[id]!;
  let end = cursor.end[id]!;
  if (end === -1) {
    end = firstAbove(day, byContract, start, offsets[id + 1]!, throughDay);
    const sessionStart = end > start ? latestSessionStart(block, start, end) : end;
    cursor.end[id] = end;
    cursor.sessionStart[id] = sessionStart;
    cursor.at[id] = sessionStart - 1;
  }
  let k = cursor.at[id]!;
  while (k + 1 < end && quoteTime[byContract[k + 1]!]! <= cutoff) k++;
  cursor.at[id] = k;
  if (k >= cursor.sessionStart[id]!) return byContract[k]!;
  return latestRow(block, start, offsets[id + 1]!, throughDay, cutoff, false);
}

/**
 * Of a contract's rows `byContract[start…end)` (session, then quote time order), the latest on or before
 * day `throughDay` with q ≤ cutoff (`eodOnly`: among its sessions' last rows), or -1. Runs once per
 * contract of an answer: its searches are loops, with no function made per call.
 */
function latestRow(
  block: Block,
  start: number,
  end: number,
  throughDay: number,
  cutoff: number,
  eodOnly: boolean,
): number {
  const { byContract } = block;
  const { day, quote_time: quoteTime } = block.quotes;
  // The last of the contract's rows on or before `through`, by halves over its sessions.
  const first = firstAbove(day, byContract, start, end, throughDay);
  let k = first - 1;
  if (!eodOnly && k >= start) {
    // The latest session's rows are in quote time order: the last one by the cutoff is found by halves
    // (an intraday session holds hundreds of snapshots a contract), else the walk goes on before them.
    k = firstAbove(quoteTime, byContract, latestSessionStart(block, start, first), first, cutoff) - 1;
  }
  for (; k >= start; k--) {
    const row = byContract[k]!;
    if (eodOnly) {
      // Only a session's last snapshot counts; one taken after the cutoff leaves its session out.
      const lastOfSession = k + 1 === end || day[byContract[k + 1]!] !== day[row];
      if (!lastOfSession) continue;
    }
    if (quoteTime[row]! <= cutoff) return row;
  }
  return -1;
}

/**
 * Where the rows of the last session among `byContract[start…end)` (one contract's, `end > start`) begin:
 * by halves over the rows before the last, for the first of that session's day.
 */
function latestSessionStart(block: Block, start: number, end: number): number {
  const { byContract } = block;
  const day = block.quotes.day;
  return firstAbove(day, byContract, start, end - 1, day[byContract[end - 1]!]! - 1);
}

/** Contract `id`'s open interest row settled on `settledDay`, or -1. */
function settledInterest(interest: InterestColumns, id: number, settledDay: number): number {
  let low = interest.offsets[id]!;
  let high = interest.offsets[id + 1]!;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (interest.settledDay[middle]! < settledDay) low = middle + 1;
    else high = middle;
  }
  return low < interest.offsets[id + 1]! && interest.settledDay[low] === settledDay ? low : -1;
}

/**
 * Contract `id`'s latest settled session's open interest published by the cutoff (the last of its rows,
 * in settled order, published by then), or -1.
 */
function latestInterest(interest: InterestColumns, id: number, cutoff: number): number {
  const start = interest.offsets[id]!;
  const end = interest.offsets[id + 1]!;
  const publishedAt = interest.publishedAt;
  if (interest.rising[id]) {
    let low = start;
    let high = end;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (publishedAt[middle]! <= cutoff) low = middle + 1;
      else high = middle;
    }
    // None published by the cutoff (or none at all): the row before is another contract's.
    return low > start ? low - 1 : -1;
  }
  for (let k = end - 1; k >= start; k--) if (publishedAt[k]! <= cutoff) return k;
  return -1;
}

/** Whether contract `id` has open interest published by the cutoff. */
function interestPublishedBy(interest: InterestColumns, id: number, cutoff: number): boolean {
  const start = interest.offsets[id]!;
  if (start === interest.offsets[id + 1]!) return false;
  return interest.rising[id]
    ? interest.publishedAt[start]! <= cutoff
    : latestInterest(interest, id, cutoff) !== -1;
}

/** Whether contract `id` has an open interest row settled before `day`. */
function interestBefore(interest: InterestColumns, id: number, day: number): boolean {
  const start = interest.offsets[id]!;
  return start < interest.offsets[id + 1]! && interest.settledDay[start]! < day;
}
