/**
 * What a loop's block carries from before its first session: for the contracts listed before it and not
 * quoted on it, each one's latest snapshot and open interest from before the block, so that a current
 * as-of can be answered from the block alone. Taken from the loop's previous block when it knows them,
 * else looked back for in the store: in the session column files when every session of the span has
 * them, else through DuckDB in steps that grow.
 */
import { previousSession } from '../../market-time/index.js';
import type { SqlSession } from '../../store/sql.js';
import type { Block } from './block.js';
import { concatenated, INTEREST_NAMES, QUOTE_COLUMNS, type QuoteColumns } from './block-columns.js';
import { contractIndex, numbered, type ScopeContracts } from './block-contracts.js';
import { interestColumnsSql, quoteColumnsSql } from './block-sql.js';
import { dayNumberOfIso, isoDateOfDay, sessionCount } from './days.js';
import type { Scope } from './scope.js';
import { latestByKey, type SymbolOrder, symbolOrder } from './session-file-rows.js';

/** What a loop's block carries from before its first session (see `carriedRows`). */
export type Carried = {
  readonly quotes: QuoteColumns;
  readonly interest: Record<'contract' | 'settled' | 'openInterest' | 'publishedAt', Float64Array>;
  readonly quoteSearched: Uint8Array;
  readonly interestSearched: Uint8Array;
};

/**
 * For the contracts of a block listed before its first session and not quoted on it (or with no open
 * interest settled the session before), each one's latest snapshot and open interest before the block:
 * from the loop's previous block when it reaches the session before this one's first and knows the
 * contract's history (its rows, its own carried row), else one query each over the sessions since the
 * earliest of the rest was first traded. Undefined when no contract lacks them, or when that query would
 * look back over more than `mostSessions` sessions.
 */
export async function carriedRows(
  sql: SqlSession,
  scope: Exclude<Scope, { optionSymbol: string }>,
  first: string,
  known: ScopeContracts,
  /** The block's first slice of quotes (its first sessions' rows), if any. */
  firstQuotes: QuoteColumns | undefined,
  interestParts: readonly Record<'contract' | 'settled', Float64Array>[],
  previous: Block | undefined,
  mostSessions?: number,
): Promise<Carried | undefined> {
  const count = known.contracts.length;
  const firstDay = dayNumberOfIso(first);
  const oiFirst = previousSession(first);
  const oiFirstDay = dayNumberOfIso(oiFirst);
  const quoted = firstQuotes === undefined ? new Uint8Array(count) : quotedOn(firstQuotes, firstDay, count);
  const settled = new Uint8Array(count);
  for (const part of interestParts) markSettledOn(part, oiFirstDay, settled);
  const quoteSearched = new Uint8Array(count);
  const interestSearched = new Uint8Array(count);
  const symbols: string[] = [];
  let since = Number.POSITIVE_INFINITY;
  const reaches = previous !== undefined && previous.first < first && previousSession(first) <= previous.last;
  const held = reaches ? heldHistory(previous!, firstDay, oiFirstDay) : undefined;
  const quoteRows: [id: number, row: number][] = [];
  const interestRows: [id: number, row: number][] = [];
  let searched = 0;
  for (let id = 0; id < count; id++) {
    const firstTraded = known.firstTradedDay[id]!;
    const needsQuote = firstTraded < firstDay && !quoted[id];
    // Open interest may be settled the session before a contract's first traded session (a vendor that
    // files each session's open interest as of the session before, as Lean's universes do): a contract
    // traded before the block may have some settled before the block's open interest starts.
    const needsInterest = firstTraded < firstDay && !settled[id];
    if (!needsQuote && !needsInterest) continue;
    quoteSearched[id] = 1;
    interestSearched[id] = 1;
    searched++;
    const symbol = known.contracts[id]!.option_symbol;
    const fromPrevious = held?.(symbol);
    if (fromPrevious !== undefined) {
      if (fromPrevious.quote !== -1) quoteRows.push([id, fromPrevious.quote]);
      if (fromPrevious.interest !== -1) interestRows.push([id, fromPrevious.interest]);
      continue;
    }
    symbols.push(symbol);
    if (firstTraded < since) since = firstTraded;
  }
  if (searched === 0) return undefined;
  const quotesHeld = copiedQuotes(previous, quoteRows);
  const interestHeld = copiedInterest(previous, interestRows);
  if (symbols.length === 0) {
    return { quotes: quotesHeld, interest: interestHeld, quoteSearched, interestSearched };
  }
  const from = isoDateOfDay(since);
  // Too long a search through DuckDB (a contract listed years ago and never quoted since): the block
  // carries nothing, and the answers that would need it go to the query.
  if (
    mostSessions !== undefined &&
    sessionCount(from, first) > mostSessions &&
    !lookBackInFiles(sql, scope.underlying, known, from, first)
  ) {
    return undefined;
  }
  const before = previousSession(first);
  const { underlying } = scope;
  const quotesFound = await latestRowsBefore(
    sql,
    underlying,
    known,
    symbols,
    from,
    before,
    quoteLookBack(known),
  );
  // From the session before the earliest first traded session (see needsInterest above).
  const oiFrom = previousSession(from);
  const oiBefore = previousSession(oiFirst);
  const interestFound = await latestRowsBefore(
    sql,
    underlying,
    known,
    symbols,
    oiFrom,
    oiBefore,
    interestLookBack(known),
  );
  return {
    quotes: concatenated([quotesHeld, ...quotesFound], QUOTE_COLUMNS),
    interest: concatenated([interestHeld, ...interestFound], INTEREST_NAMES),
    quoteSearched,
    interestSearched,
  };
}

/**
 * Whether the look back for carried rows before `first`, from `from` on, reads session column files
 * (`latestFromFiles`) for both tables: it then costs the few sessions that hold the rows it finds (the
 * files say which), however long its span, where a scan through DuckDB reads every row of the span.
 */
export function lookBackInFiles(
  sql: SqlSession,
  underlying: string,
  known: ScopeContracts,
  from: string,
  first: string,
): boolean {
  if (known.keys === undefined) return false;
  const before = previousSession(first);
  return (
    sql.sessionColumns('option_quotes', { underlying }, { first: from, last: before }) !== undefined &&
    sql.sessionColumns(
      'open_interest',
      { underlying },
      { first: previousSession(from), last: previousSession(before) },
    ) !== undefined
  );
}

/** Sessions the first step of a look back for carried rows covers (`latestRowsBefore`). */
export const CARRY_FIRST_STEP_SESSIONS = 20;
/** How many times longer each next step of the look back is than the one before. */
const CARRY_STEP_GROWTH = 4;

/** One table's look back: its rows' columns (of `alias`), its session column, its latest-first order. */
export type LookBack<N extends readonly string[]> = {
  readonly table: 'option_quotes' | 'open_interest';
  readonly alias: 'q' | 'o';
  readonly select: string;
  readonly session: string;
  readonly latestFirst: string;
  readonly names: N;
  /** Per name, the session column file's column it is read from (`day`: the row's session). */
  readonly fileColumns: { readonly [K in N[number]]: string };
};

/** The look back for contracts' latest snapshots (`latestRowsBefore`). */
export function quoteLookBack(known: ScopeContracts): LookBack<typeof QUOTE_COLUMNS> {
  return {
    table: 'option_quotes',
    alias: 'q',
    select: quoteColumnsSql(known.keys),
    session: 'session_date',
    latestFirst: 'q.session_date DESC, q.quote_time DESC',
    names: QUOTE_COLUMNS,
    fileColumns: Object.fromEntries(
      QUOTE_COLUMNS.map((name) => [name, name === 'contract' ? 'key' : name]),
    ) as LookBack<typeof QUOTE_COLUMNS>['fileColumns'],
  };
}

/** The look back for contracts' latest open interest (`latestRowsBefore`). */
function interestLookBack(known: ScopeContracts): LookBack<typeof INTEREST_NAMES> {
  return {
    table: 'open_interest',
    alias: 'o',
    select: interestColumnsSql(known.keys),
    session: 'settled_session',
    latestFirst: 'o.settled_session DESC',
    names: INTEREST_NAMES,
    fileColumns: {
      contract: 'key',
      settled: 'day',
      openInterest: 'open_interest',
      publishedAt: 'published_at',
    },
  };
}

/**
 * Each of `symbols`' latest row of `table` in the sessions `from`…`before`, as numbered parts: searched
 * newest first, in steps that grow from `CARRY_FIRST_STEP_SESSIONS` sessions, each for the symbols no later
 * step found. A scan costs what it reads, and one scan from the earliest first traded session read years of
 * the chain for rows that were often weeks old: on the 26 M-row bench store, a 2019 SPY loop's look backs
 * took 1.25 s in one scan each and 0.75 s in steps (answers identical), where contracts last quoted at the
 * year before's end are found by the first steps and only those never quoted since their first year are
 * looked for over the whole span, in a few statements more.
 */
export async function latestRowsBefore<const N extends readonly string[]>(
  sql: SqlSession,
  underlying: string,
  known: ScopeContracts,
  symbols: readonly string[],
  from: string,
  before: string,
  lookBack: LookBack<N>,
): Promise<Record<N[number], Float64Array>[]> {
  const fromFiles = latestFromFiles(sql, underlying, known, symbols, from, before, lookBack);
  if (fromFiles !== undefined) return [fromFiles];
  const parts: Record<N[number], Float64Array>[] = [];
  const left = new Set(symbols);
  let last = before;
  let size = CARRY_FIRST_STEP_SESSIONS;
  while (left.size > 0 && last >= from) {
    let start = last;
    for (let i = 1; i < size && start > from; i++) start = previousSession(start);
    if (start < from) start = from;
    const source = await sql.from(lookBack.table, { underlying }, { first: start, last });
    const a = lookBack.alias;
    const read = await sql.typedColumns(
      `SELECT ${lookBack.select}
       FROM ${source} ${a}
       WHERE ${a}.underlying = $underlying
         AND ${a}.${lookBack.session} BETWEEN CAST($from AS DATE) AND CAST($before AS DATE)
         AND ${a}.option_symbol IN (SELECT unnest(string_split($symbols, ',')))
       QUALIFY row_number() OVER (PARTITION BY ${a}.option_symbol ORDER BY ${lookBack.latestFirst}) = 1`,
      { underlying, from: start, before: last, symbols: [...left].join(',') },
    );
    const part = numbered(read.columns, known, lookBack.names) as Record<N[number], Float64Array> & {
      contract: Float64Array;
    };
    for (const id of part.contract) left.delete(known.contracts[id]!.option_symbol);
    parts.push(part);
    if (start <= from) break;
    last = previousSession(start);
    size *= CARRY_STEP_GROWTH;
  }
  return parts;
}

/**
 * `latestRowsBefore` from the session column files, when every session of `from`…`before` has them: the
 * sessions walked newest first, each symbol's key looked for until every one is found (no steps: a
 * session read costs its keys, not a scan). Undefined when they are to be read through DuckDB.
 */
function latestFromFiles<const N extends readonly string[]>(
  sql: SqlSession,
  underlying: string,
  known: ScopeContracts,
  symbols: readonly string[],
  from: string,
  before: string,
  lookBack: LookBack<N>,
): Record<N[number], Float64Array> | undefined {
  const index = known.keys;
  if (index === undefined || from > before) return undefined;
  const parts = sql.sessionColumns(lookBack.table, { underlying }, { first: from, last: before });
  if (parts === undefined) return undefined;
  const wanted = new Set<number>();
  const ids: number[] = [];
  for (const symbol of symbols) {
    const id = contractIndex(known.contracts, symbol);
    if (id === -1) continue;
    wanted.add(index.hashOf[id]!);
    ids.push(id);
  }
  // The wanted contracts' rows found by halves in sessions in symbol order (a date's unquoted few).
  const order = known.order === undefined ? undefined : wantedOrder(known.order, index.hashOf, ids);
  const names = lookBack.names as readonly N[number][];
  const read = names.filter(
    (name) => lookBack.fileColumns[name] !== 'key' && lookBack.fileColumns[name] !== 'day',
  );
  try {
    const rows = latestByKey(
      parts,
      wanted,
      read.map((name) => lookBack.fileColumns[name]),
      order,
    );
    const columns = new Map(read.map((name, c) => [name, rows.values[c]!]));
    const out = {} as Record<N[number], Float64Array>;
    for (const name of names) {
      const column = lookBack.fileColumns[name];
      out[name] =
        column === 'key'
          ? rows.keys.map((key) => index.get(key) ?? -1)
          : column === 'day'
            ? rows.days
            : columns.get(name)!;
    }
    return out;
  } catch {
    return undefined; // read through DuckDB instead
  }
}

/** The `SymbolOrder` of some of a block's contracts (`ids`, whose keys are `hashOf[id]`). */
function wantedOrder(
  order: SymbolOrder,
  hashOf: Float64Array,
  ids: readonly number[],
): SymbolOrder | undefined {
  const numbers: [number, number][] = [];
  for (const id of ids) {
    const number = order.numberOf(hashOf[id]!);
    if (number === undefined) return undefined;
    numbers.push([number, number + 1]);
  }
  return symbolOrder(order.numberOf, numbers);
}

/** Per contract: 1 if it has a row on `day`, the day of the block's first rows. */
function quotedOn(quotes: QuoteColumns, day: number, count: number): Uint8Array {
  const quoted = new Uint8Array(count);
  for (let i = 0; i < quotes.day.length && quotes.day[i] === day; i++) quoted[quotes.contract[i]!] = 1;
  return quoted;
}

/** Sets `settled[id]` for each contract with an open interest row of `part` settled on `day`. */
function markSettledOn(
  part: Record<'contract' | 'settled', Float64Array>,
  day: number,
  settled: Uint8Array,
): void {
  for (let i = 0; i < part.contract.length; i++) if (part.settled[i] === day) settled[part.contract[i]!] = 1;
}

/**
 * What a loop's previous block knows of a contract's history before a session (`day`; open interest
 * settled before `oiDay`): its latest row there (-1: none), or undefined when the block cannot tell (the
 * contract may have older rows than the block holds).
 */
function heldHistory(
  previous: Block,
  day: number,
  oiDay: number,
): (symbol: string) => { quote: number; interest: number } | undefined {
  const firstDay = dayNumberOfIso(previous.first);
  const oiFloorDay = dayNumberOfIso(previousSession(previous.first));
  return (symbol) => {
    const id = contractIndex(previous.contracts, symbol);
    if (id === -1) return undefined;
    let quote = -1;
    for (let k = previous.offsets[id + 1]! - 1; k >= previous.offsets[id]!; k--) {
      const row = previous.byContract[k]!;
      if (previous.quotes.day[row]! < day) {
        quote = row;
        break;
      }
    }
    const firstTraded = previous.firstTradedDay[id]!;
    if (quote === -1 && !previous.carriedQuotes?.[id] && firstTraded < firstDay) return undefined;
    const { offsets, settledDay } = previous.interest;
    let interest = -1;
    for (let k = offsets[id + 1]! - 1; k >= offsets[id]!; k--) {
      if (settledDay[k]! < oiDay) {
        interest = k;
        break;
      }
    }
    if (interest === -1 && !previous.carriedInterest?.[id] && firstTraded < oiFloorDay) return undefined;
    return { quote, interest };
  };
}

/** Rows of the previous block's quotes, numbered as the new block's contracts. */
function copiedQuotes(previous: Block | undefined, rows: readonly [number, number][]): QuoteColumns {
  const out = {} as Record<string, Float64Array>;
  for (const name of QUOTE_COLUMNS) {
    out[name] = Float64Array.from(rows, ([id, row]) =>
      name === 'contract' ? id : previous!.quotes[name][row]!,
    );
  }
  return out as QuoteColumns;
}

/** Open interest rows of the previous block, numbered as the new block's contracts. */
function copiedInterest(
  previous: Block | undefined,
  rows: readonly [number, number][],
): Record<(typeof INTEREST_NAMES)[number], Float64Array> {
  const interest = previous?.interest;
  const pick = (column: 'settledDay' | 'openInterest' | 'publishedAt') =>
    Float64Array.from(rows, ([, row]) => interest![column][row]!);
  return {
    contract: Float64Array.from(rows, ([id]) => id),
    settled: pick('settledDay'),
    openInterest: pick('openInterest'),
    publishedAt: pick('publishedAt'),
  };
}
