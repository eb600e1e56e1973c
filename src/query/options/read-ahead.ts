/**
 * Read-ahead for session loops. A backtest asks one scope (an underlying's chain) at consecutive
 * sessions; a cold Parquet query per session costs tens of milliseconds, while one range scan of the
 * sessions ahead costs about as much as one. Once a scope is asked at a later session than before, the
 * rows of a block of sessions around it are read once and kept in the store's cache; every as-of whose
 * answer the block holds whole is then answered from memory, by the same rules as `snapshot-sql.ts`.
 * Whatever the block cannot prove complete (a contract whose last snapshot may be older than the block)
 * falls back to the query.
 */
import { nextSession, previousSession } from '../../market-time/index.js';
import { type AsOf, asOfSession, lastSessionOf } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import { dayNumberOfIso, isoDateOfDay } from './days.js';
import type { Scope } from './scope.js';
import { type RowSource, rowSource, type SnapshotRow } from './snapshot-sql.js';

/** Sessions a block keeps before the session that started it (a current answer may reach back). */
const LOOKBACK_SESSIONS = 5;
/** Sessions the first block of a loop reads past the session that started it. */
const FIRST_AHEAD_SESSIONS = 30;
/** Rows a block may hold (16 numbers each, about 130 bytes a row with the open interest). */
const ROW_BUDGET = 300_000;
/** Rows the first block of a loop may hold: a dense chain (thousands of contracts) reads fewer sessions. */
const FIRST_ROW_BUDGET = 100_000;
/** How much larger each next block of a loop may be than the last, and the most sessions one reads. */
const GROWTH = 4;
const MAX_AHEAD_SESSIONS = 1_000;
/** Rows a block of an announced loop may hold (about 200 MB at its widest). */
const ANNOUNCED_ROW_BUDGET = 1_500_000;
/** Where the store's cache keeps an announced loop's period. */
const SESSION_LOOP_KEY = 'read-ahead|announced-loop';
type SessionLoop = { from?: string; to?: string };
/** How far past the last asked session a request still counts as the loop going on. */
const LOOP_STRIDE_SESSIONS = 10;
/** How many forward steps in a row make a loop (random requests at a server take one now and then). */
const LOOP_STEPS = 2;

/** One session's rows of a block: the half-open range of row indices. */
type SessionRange = { readonly start: number; readonly end: number };

/** A contract of the block, with the columns every one of its rows shares. */
type Contract = Omit<
  SnapshotRow,
  | 'session_date'
  | 'quote_time'
  | 'bid'
  | 'ask'
  | 'bid_size'
  | 'ask_size'
  | 'last'
  | 'volume'
  | 'volume_time'
  | 'underlying_price'
  | 'iv'
  | 'delta'
  | 'gamma'
  | 'theta'
  | 'vega'
  | 'open_interest'
  | 'oi_published_at'
>;

/** The snapshot columns of a block, one Float64Array each (NULL as NaN), in `QUOTE_COLUMNS` order. */
type QuoteColumns = Record<(typeof QUOTE_COLUMNS)[number], Float64Array>;

/**
 * A scope's snapshots of a range of sessions: the contracts once, the rows as numeric columns ordered by
 * session, contract and quote time (strings are what make reading rows slow), open interest per contract.
 */
type Block = {
  readonly first: string;
  readonly last: string;
  readonly contracts: readonly Contract[];
  readonly quotes: QuoteColumns;
  readonly sessions: ReadonlyMap<string, SessionRange>;
  /** Per contract index, its rows (in session, then quote time order): `byContract[offsets[id]…offsets[id+1])`. */
  readonly offsets: Int32Array;
  readonly byContract: Int32Array;
  /** Contract indices in expiration order, and their expirations: the contracts alive at a session are a suffix. */
  readonly byExpiration: Int32Array;
  readonly expirations: readonly string[];
  /** Per contract index: its open interest rows in settled-session, then publication order. */
  readonly interest: ReadonlyMap<number, readonly InterestRow[]>;
  /** About how many bytes the block holds (what the session cache counts). */
  readonly bytes: number;
};

/**
 * The contracts of a block: numbered in symbol order, with their order by expiration and an index from
 * symbol to number.
 */
type ScopeContracts = {
  readonly contracts: readonly Contract[];
  readonly ids: ReadonlyMap<string, number>;
  /**
   * The contracts' numbers by a 53-bit hash of their symbols, which DuckDB hands over as numbers (its
   * strings cost more to read than the rest of a session's columns); undefined when two contracts of the
   * underlying share a hash, and rows are then matched by their symbols.
   */
  readonly keys: { get(key: number): number | undefined } | undefined;
  readonly byExpiration: Int32Array;
  readonly expirations: readonly string[];
  readonly bytes: number;
};

/** One open interest row: the settled session as a day number. */
type InterestRow = {
  readonly settledDay: number;
  readonly openInterest: number | null;
  readonly publishedAt: number;
};

/** The snapshot columns a block reads, all as DOUBLE. */
const QUOTE_COLUMNS = [
  'contract',
  'day',
  'quote_time',
  'bid',
  'ask',
  'bid_size',
  'ask_size',
  'last',
  'volume',
  'volume_time',
  'underlying_price',
  'iv',
  'delta',
  'gamma',
  'theta',
  'vega',
] as const;

/** What the store's cache remembers of a scope between requests. */
type LoopState = {
  lastSession: string | undefined;
  /** The cutoff of the last current as-of: a later one in the same session is a step of an intraday loop. */
  lastCutoff: number | undefined;
  /** How many requests in a row each went forward by at most LOOP_STRIDE_SESSIONS sessions. */
  forward: number;
  block: Promise<Block> | undefined;
  /** Sessions the next block reads ahead: grows while the loop goes on, within the row budget. */
  ahead: number;
};

/**
 * The scope's answer rows at an as-of from a read-ahead block, or undefined when this request does not
 * look like part of a session loop, or the block cannot answer it whole (then the caller queries).
 */
export async function readAheadRows(
  sql: SqlSession,
  cache: StoreCache,
  asOf: AsOf,
  scope: Scope,
): Promise<RowSource | undefined> {
  if ('optionSymbol' in scope) {
    // One contract in a loop (a backtest marking what it holds) rides on its underlying's chain block:
    // the block answers every contract alive at the session, so the contract's rows cost a lookup.
    const block = await loopBlock(sql, cache, asOf, { underlying: scope.underlying });
    if (block === undefined) return undefined;
    const id = contractIndex(block.contracts, scope.optionSymbol);
    // The block holds every contract listed by its last session and not expired before its first: one
    // it does not hold has no row at any as-of the block covers.
    if (id === -1) return rowSource([]);
    return asOf.kind === 'dated' ? datedRows(block, asOf.session, id) : currentRows(block, asOf, id);
  }
  const block = await loopBlock(sql, cache, asOf, scope);
  if (block === undefined) return undefined;
  return asOf.kind === 'dated' ? datedRows(block, asOf.session) : currentRows(block, asOf);
}

/**
 * Random access: the scope's rows at a dated as-of from the one session's block, read on first use and
 * kept in the store's session cache (bounded in bytes). Reads only the session's rows of the files that
 * hold it and the open interest settled the session before; the same rules as the loop's blocks.
 */
export async function sessionBlockRows(
  sql: SqlSession,
  cache: StoreCache,
  asOf: Extract<AsOf, { kind: 'dated' }>,
  scope: Exclude<Scope, { optionSymbol: string }>,
): Promise<RowSource> {
  const session = asOf.session;
  const block = await cache.sized(
    `session|${scope.underlying}|${scope.root ?? ''}|${session}`,
    async () =>
      loadBlock(sql, scope, session, session, await loadContracts(sql, cache, scope, session, session)),
    (block) => block.bytes,
  );
  return datedRows(block, session);
}

/**
 * The block of the scope's session loop that covers the as-of: the one held, or a new one read when the
 * request continues a forward loop past it; undefined when the request is not part of a loop.
 */
async function loopBlock(
  sql: SqlSession,
  cache: StoreCache,
  asOf: AsOf,
  scope: Exclude<Scope, { optionSymbol: string }>,
): Promise<Block | undefined> {
  const state = cache.state<LoopState>(`read-ahead|${scope.underlying}|${scope.root ?? ''}`, () => ({
    lastSession: undefined,
    lastCutoff: undefined,
    forward: 0,
    block: undefined,
    ahead: FIRST_AHEAD_SESSIONS,
  }));
  const session = asOfSession(asOf);
  const previous = state.lastSession;
  state.lastSession = session;
  // Several requests at one session (a backtest's several questions at one instant) neither make nor break it.
  if (session !== previous) {
    state.forward = previous !== undefined && loopContinues(previous, session) ? state.forward + 1 : 0;
  } else if (
    asOf.kind === 'current' &&
    state.lastCutoff !== undefined &&
    asOf.cutoffSeconds > state.lastCutoff
  ) {
    // Minute by minute through one session of intraday snapshots: a loop that never changes session.
    state.forward++;
  }
  if (asOf.kind === 'current') state.lastCutoff = asOf.cutoffSeconds;
  let block = state.block === undefined ? undefined : await state.block;
  if (block !== undefined && covers(block, asOf)) return block;
  const announced = cache.state<SessionLoop>(SESSION_LOOP_KEY, () => ({}));
  if (
    announced.from !== undefined &&
    announced.to !== undefined &&
    session >= announced.from &&
    session <= announced.to
  ) {
    // A loop announced by its caller (a backtest over a period): one scan reads the rest of the period
    // at once, as far as the announced budget holds at this session's density.
    const rows = await sessionRows(sql, scope.underlying, session);
    const left = sessionCount(session, announced.to);
    state.ahead = Math.max(
      LOOKBACK_SESSIONS + 1,
      Math.min(left, Math.floor(ANNOUNCED_ROW_BUDGET / Math.max(1, rows))),
    );
  } else if (state.forward < LOOP_STEPS) {
    // Random requests go forward now and then; a loop goes forward every time. Until it has, each request
    // is answered on its own (a dated one from its session's rows).
    return undefined;
  } else if (block === undefined) {
    // The first block: as many sessions as the first budget holds at this session's density.
    const rows = await sessionRows(sql, scope.underlying, session);
    state.ahead = Math.max(
      LOOKBACK_SESSIONS + 1,
      Math.min(FIRST_AHEAD_SESSIONS, Math.floor(FIRST_ROW_BUDGET / Math.max(1, rows))),
    );
  } else {
    // The loop outran a block: read further ahead next time, as far as the row budget allows.
    const rowsPerSession = Math.max(1, block.quotes.day.length / Math.max(1, block.sessions.size));
    state.ahead = Math.min(state.ahead * GROWTH, MAX_AHEAD_SESSIONS, Math.floor(ROW_BUDGET / rowsPerSession));
    state.ahead = Math.max(state.ahead, LOOKBACK_SESSIONS + 1);
  }
  let first = session;
  for (let i = 0; i < LOOKBACK_SESSIONS; i++) first = previousSession(first);
  let last = session;
  for (let i = 0; i < state.ahead; i++) {
    const next = tryNextSession(last);
    if (next === undefined) break; // the calendar's end
    last = next;
  }
  const pending = loadContracts(sql, cache, scope, first, last).then((contracts) =>
    loadBlock(sql, scope, first, last, contracts),
  );
  state.block = pending;
  pending.catch(() => {
    if (state.block === pending) state.block = undefined;
  });
  block = await pending;
  return covers(block, asOf) ? block : undefined;
}

/** A contract's number in a block (contracts are in symbol order), or -1. */
function contractIndex(contracts: readonly Contract[], optionSymbol: string): number {
  let low = 0;
  let high = contracts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (contracts[middle]!.option_symbol < optionSymbol) low = middle + 1;
    else high = middle;
  }
  return contracts[low]?.option_symbol === optionSymbol ? low : -1;
}

/** The rows an underlying has on one session: how dense its blocks are. */
async function sessionRows(sql: SqlSession, underlying: string, session: string): Promise<number> {
  const quotes = await sql.from('option_quotes', { underlying }, { first: session, last: session });
  const rows = await sql.value<number>(
    `SELECT count(*) FROM ${quotes} q WHERE underlying = $underlying AND session_date = CAST($session AS DATE)`,
    { underlying, session },
  );
  return Number(rows);
}

/** Sessions after `from` up to `to` (0 when `to` is not after it). */
function sessionCount(from: string, to: string): number {
  let count = 0;
  for (let at = tryNextSession(from); at !== undefined && at <= to; at = tryNextSession(at)) count++;
  return count;
}

/**
 * Tells the store's read-ahead that a session loop will ask about the sessions `from`…`to` (a backtest's
 * period): the first request inside it reads the rest of the period in one scan, instead of proving a
 * loop first and then growing blocks.
 */
export function announceSessionLoop(cache: StoreCache, from: string, to: string): void {
  const loop = cache.state<SessionLoop>(SESSION_LOOP_KEY, () => ({}));
  loop.from = from;
  loop.to = to;
}

/** Whether a request at `session` after one at `previous` continues a forward session loop. */
function loopContinues(previous: string, session: string): boolean {
  if (session <= previous) return false;
  let at = previous;
  for (let i = 0; i < LOOP_STRIDE_SESSIONS; i++) {
    at = nextSession(at);
    if (at >= session) return true;
  }
  return false;
}

/** Whether every row an as-of may use lies in the block's sessions (older ones are checked later). */
function covers(block: Block, asOf: AsOf): boolean {
  if (asOf.kind === 'dated') return asOf.session >= block.first && asOf.session <= block.last;
  const through = lastSessionOf(asOf);
  const after = tryNextSession(block.last);
  return through >= block.first && (after === undefined || through < after);
}

/**
 * An underlying's contracts, read once per data version into compact columns in symbol order (an
 * underlying lists a hundred thousand contracts over the years; a block needs the few thousand alive in
 * its sessions, made into objects from here).
 */
type ContractTable = {
  readonly underlying: string;
  readonly symbols: readonly string[];
  /** Per contract: its root's index in `roots`. */
  readonly root: Uint16Array;
  readonly roots: readonly string[];
  readonly expirationDay: Float64Array;
  readonly expirationTime: Float64Array;
  readonly strike: Float64Array;
  readonly firstTradedDay: Float64Array;
  /** Bits: call, AM-settled, monthly, weekly, quarterly, nonstandard. */
  readonly flags: Float64Array;
  /** Contract index by the 53-bit hash of its symbol; undefined when two symbols share one. */
  readonly keys: ReadonlyMap<number, number> | undefined;
  readonly bytes: number;
};

const CALL = 1;
const AM = 2;
const MONTHLY = 4;
const WEEKLY = 8;
const QUARTERLY = 16;
const NONSTANDARD = 32;

/** The underlying's contract table, from the session cache or read. */
function contractTable(sql: SqlSession, cache: StoreCache, underlying: string): Promise<ContractTable> {
  return cache.sized(
    `contracts|${underlying}`,
    () => readContractTable(sql, underlying),
    (table) => table.bytes,
  );
}

async function readContractTable(sql: SqlSession, underlying: string): Promise<ContractTable> {
  const from = await sql.from('contracts', { underlying });
  const day = (column: string) => `CAST(${column} - DATE '1970-01-01' AS DOUBLE)`;
  const flag = (condition: string, bit: number) => `CASE WHEN ${condition} THEN ${bit} ELSE 0 END`;
  const { columns } = await sql.typedColumns(
    `SELECT option_symbol, root, ${day('expiration')}, CAST(epoch_ms(expiration_time) / 1000 AS DOUBLE),
       CAST(strike AS DOUBLE), ${day('first_traded')},
       CAST(${[
         flag("side = 'call'", CALL),
         flag("settlement = 'AM'", AM),
         flag('monthly', MONTHLY),
         flag('weekly', WEEKLY),
         flag('quarterly', QUARTERLY),
         flag('nonstandard', NONSTANDARD),
       ].join(' + ')} AS DOUBLE),
       ${SYMBOL_KEY('c')}
     FROM ${from} c WHERE c.underlying = $underlying ORDER BY option_symbol`,
    { underlying },
  );
  const symbols = (columns[0] ?? []) as string[];
  const rootTexts = (columns[1] ?? []) as string[];
  const [expirationDay, expirationTime, strike, firstTradedDay, flags, hashes] = columns
    .slice(2)
    .map((column) => column as Float64Array);
  const roots: string[] = [];
  const rootIndex = new Map<string, number>();
  const root = new Uint16Array(symbols.length);
  rootTexts.forEach((text, i) => {
    let index = rootIndex.get(text);
    if (index === undefined) {
      index = roots.push(text) - 1;
      rootIndex.set(text, index);
    }
    root[i] = index;
  });
  const keys = new Map<number, number>();
  for (let i = 0; i < symbols.length; i++) keys.set(hashes![i]!, i);
  return {
    underlying,
    symbols,
    root,
    roots,
    expirationDay: expirationDay ?? new Float64Array(0),
    expirationTime: expirationTime ?? new Float64Array(0),
    strike: strike ?? new Float64Array(0),
    firstTradedDay: firstTradedDay ?? new Float64Array(0),
    flags: flags ?? new Float64Array(0),
    keys: keys.size === symbols.length ? keys : undefined,
    bytes: symbols.length * CONTRACT_TABLE_BYTES,
  };
}

/**
 * The scope's contracts that can answer at a session from `first` to `last` (listed by `last`, not
 * expired before `first`: a contract's first snapshot is no earlier than its first_traded), in symbol
 * order, made into objects and indexed for one block.
 */
async function loadContracts(
  sql: SqlSession,
  cache: StoreCache,
  scope: Exclude<Scope, { optionSymbol: string }>,
  first: string,
  last: string,
): Promise<ScopeContracts> {
  const table = await contractTable(sql, cache, scope.underlying);
  const firstDay = dayNumberOfIso(first);
  const lastDay = dayNumberOfIso(last);
  const root = scope.root === undefined ? -1 : table.roots.indexOf(scope.root);
  const picked: number[] = [];
  for (let i = 0; i < table.symbols.length; i++) {
    if (scope.root !== undefined && table.root[i] !== root) continue;
    if (table.expirationDay[i]! >= firstDay && table.firstTradedDay[i]! <= lastDay) picked.push(i);
  }
  const global = Int32Array.from(picked);
  const contracts: Contract[] = picked.map((i) => {
    const flags = table.flags[i]!;
    return {
      option_symbol: table.symbols[i]!,
      underlying: table.underlying,
      root: table.roots[table.root[i]!]!,
      expiration: isoDateOfDay(table.expirationDay[i]!),
      expiration_time: table.expirationTime[i]!,
      side: flags & CALL ? 'call' : 'put',
      strike: table.strike[i]!,
      settlement: flags & AM ? 'AM' : 'PM',
      monthly: (flags & MONTHLY) !== 0,
      weekly: (flags & WEEKLY) !== 0,
      quarterly: (flags & QUARTERLY) !== 0,
      nonstandard: (flags & NONSTANDARD) !== 0,
      first_traded: isoDateOfDay(table.firstTradedDay[i]!),
    };
  });
  const ids = new Map(contracts.map((contract, id) => [contract.option_symbol, id]));
  const byExpiration = Int32Array.from(contracts.keys()).sort((a, b) =>
    contracts[a]!.expiration < contracts[b]!.expiration
      ? -1
      : contracts[a]!.expiration > contracts[b]!.expiration
        ? 1
        : a - b,
  );
  const expirations = Array.from(byExpiration, (id) => contracts[id]!.expiration);
  // A row's hash names a contract of the table; its number in this block is its place among the picked.
  const keys =
    table.keys === undefined
      ? undefined
      : {
          get(key: number): number | undefined {
            const index = table.keys!.get(key);
            if (index === undefined) return undefined;
            let low = 0;
            let high = global.length;
            while (low < high) {
              const middle = (low + high) >>> 1;
              if (global[middle]! < index) low = middle + 1;
              else high = middle;
            }
            return global[low] === index ? low : undefined;
          },
        };
  return { contracts, ids, keys, byExpiration, expirations, bytes: contracts.length * CONTRACT_BYTES };
}

/** The 53-bit hash of a row's contract symbol, exact as a double. */
const SYMBOL_KEY = (alias: string) => `CAST(hash(${alias}.option_symbol) >> 11 AS DOUBLE)`;

/** About what one contract of a contract table costs: its symbol, its columns, its hash's entry. */
const CONTRACT_TABLE_BYTES = 200;

/** About what one contract of a block costs: its object, its entries in the block's indexes. */
const CONTRACT_BYTES = 300;

/**
 * Reads the scope's snapshots of the sessions `first`…`last` (and the open interest settled from the
 * session before `first`). The rows are read in the files' own order (session, symbol, quote time) with
 * their symbols, which the scope's contract index numbers: no join, no sort beyond the files' own.
 */
async function loadBlock(
  sql: SqlSession,
  scope: Exclude<Scope, { optionSymbol: string }>,
  first: string,
  last: string,
  known: ScopeContracts,
): Promise<Block> {
  const { contracts, byExpiration, expirations } = known;
  const symbol = (alias: string) => (known.keys === undefined ? `${alias}.option_symbol` : SYMBOL_KEY(alias));
  const underlying = { underlying: scope.underlying };
  const oiFirst = previousSession(first);
  const [quoteSource, interestSource] = await Promise.all([
    sql.from('option_quotes', underlying, { first, last }),
    sql.from('open_interest', underlying, { first: oiFirst, last }),
  ]);
  const double = (expression: string) => `CAST(${expression} AS DOUBLE)`;
  const read = await sql.typedColumns(
    `SELECT ${symbol('q')}, ${double("q.session_date - DATE '1970-01-01'")},
       ${double('epoch_ms(q.quote_time) / 1000')}, ${double('q.bid')}, ${double('q.ask')}, ${double('q.bid_size')},
       ${double('q.ask_size')}, ${double('q."last"')}, ${double('q.volume')},
       ${double('epoch_ms(q.volume_time) / 1000')}, ${double('q.underlying_price')}, ${double('q.iv')},
       ${double('q.delta')}, ${double('q.gamma')}, ${double('q.theta')}, ${double('q.vega')}
     FROM ${quoteSource} q
     WHERE q.underlying = $underlying AND q.session_date BETWEEN CAST($first AS DATE) AND CAST($last AS DATE)
     ORDER BY q.session_date, q.option_symbol, q.quote_time`,
    { underlying: scope.underlying, first, last },
  );
  const quotes = numbered(read.columns, known, QUOTE_COLUMNS) as QuoteColumns;
  const interestRead = await sql.typedColumns(
    `SELECT ${symbol('o')}, ${double("o.settled_session - DATE '1970-01-01'")}, ${double('o.open_interest')},
       ${double('epoch_ms(o.published_at) / 1000')}
     FROM ${interestSource} o
     WHERE o.underlying = $underlying
       AND o.settled_session BETWEEN CAST($oiFirst AS DATE) AND CAST($last AS DATE)
     ORDER BY o.option_symbol, o.settled_session, o.published_at`,
    { underlying: scope.underlying, oiFirst, last },
  );
  const {
    contract: interestIds,
    settled: settledDays,
    openInterest,
    publishedAt,
  } = numbered(interestRead.columns, known, ['contract', 'settled', 'openInterest', 'publishedAt'] as const);
  const interest = new Map<number, InterestRow[]>();
  for (let i = 0; i < interestIds.length; i++) {
    const entry = {
      settledDay: settledDays[i]!,
      openInterest: nullable(openInterest[i]!),
      publishedAt: publishedAt[i]!,
    };
    const list = interest.get(interestIds[i]!);
    if (list === undefined) interest.set(interestIds[i]!, [entry]);
    else list.push(entry);
  }
  // Each contract's rows, in the block's order (session, then quote time): a compressed row index.
  const offsets = new Int32Array(contracts.length + 1);
  for (const id of quotes.contract) offsets[id + 1]!++;
  for (let id = 0; id < contracts.length; id++) offsets[id + 1]! += offsets[id]!;
  const byContract = new Int32Array(quotes.contract.length);
  const fill = offsets.slice(0, contracts.length);
  quotes.contract.forEach((id, i) => {
    byContract[fill[id]!++] = i;
  });
  const sessions = new Map<string, SessionRange>();
  const days = quotes.day;
  let start = 0;
  for (let i = 1; i <= days.length; i++) {
    if (i === days.length || days[i] !== days[start]) {
      sessions.set(isoDateOfDay(days[start]!), { start, end: i });
      start = i;
    }
  }
  const rows = days.length;
  return {
    first,
    last,
    contracts,
    quotes,
    sessions,
    offsets,
    byContract,
    byExpiration,
    expirations,
    interest,
    // Sixteen numbers and a row index a row, a list entry an open interest row, the per-contract offsets.
    bytes: rows * (QUOTE_COLUMNS.length * 8 + 4) + interestIds.length * 64 + offsets.byteLength + known.bytes,
  };
}

/**
 * Columns read with the contract's symbol (or its hash) first, as numeric columns with the contract's number first
 * (named `names`), leaving out the rows of contracts the scope does not hold (another root's).
 */
function numbered<const N extends readonly string[]>(
  columns: readonly (Float64Array | (string | null)[])[],
  known: ScopeContracts,
  names: N,
): Record<N[number], Float64Array> {
  const symbols = columns[0]!;
  const lookup =
    symbols instanceof Float64Array
      ? (i: number) => known.keys!.get(symbols[i]!)
      : (i: number) => known.ids.get(symbols[i]!);
  const contract = new Float64Array(symbols.length);
  let kept = 0;
  for (let i = 0; i < symbols.length; i++) {
    const id = lookup(i);
    if (id === undefined) continue;
    contract[kept] = id;
    // Rows of other contracts are rare (another root's): the columns are compacted only when there are.
    if (kept !== i)
      for (let c = 1; c < columns.length; c++)
        (columns[c] as Float64Array)[kept] = (columns[c] as Float64Array)[i]!;
    kept++;
  }
  const out = [contract, ...columns.slice(1)].map((column) => (column as Float64Array).subarray(0, kept));
  return Object.fromEntries(names.map((name, i) => [name, out[i]!])) as Record<N[number], Float64Array>;
}

/** The session after `date`, or undefined past the calendar's end. */
function tryNextSession(date: string): string | undefined {
  try {
    return nextSession(date);
  } catch {
    return undefined;
  }
}

/** A NaN read for NULL, back to null. */
function nullable(value: number): number | null {
  return Number.isNaN(value) ? null : value;
}

/** The store row of a block's row `i`, with the open interest that answers it. */
function rowAt(block: Block, i: number, interest: InterestRow | undefined, session: string): SnapshotRow {
  const q = block.quotes;
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
    open_interest: interest?.openInterest ?? null,
    oi_published_at: interest === undefined ? null : interest.publishedAt,
  };
}

/** A dated as-of: each contract's latest snapshot of session D, open interest settled from D−1. */
function datedRows(block: Block, session: string, only?: number): RowSource {
  const range = block.sessions.get(session);
  const rows: number[] = [];
  if (range !== undefined) {
    const contractOf = block.quotes.contract;
    for (let i = range.start; i < range.end; i++) {
      const id = contractOf[i]!;
      if (only !== undefined && id !== only) continue;
      if (i + 1 < range.end && contractOf[i + 1] === id) continue; // not the contract's latest snapshot
      if (block.contracts[id]!.expiration >= session) rows.push(i);
    }
  }
  const settledDay = dayNumberOfIso(previousSession(session));
  return blockSource(block, rows, (id) =>
    block.interest.get(id)?.find((entry) => entry.settledDay === settledDay),
  );
}

/** The rows of a block chosen for an as-of, made into store rows only when asked for. */
function blockSource(
  block: Block,
  rows: readonly number[],
  interestOf: (contract: number) => InterestRow | undefined,
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

/**
 * A current as-of: per listed contract the latest snapshot with q ≤ cutoff (with `eodOnly`, among the
 * sessions' last snapshots), and the latest open interest published by the cutoff. Undefined when a
 * contract may have an older snapshot or open interest than the block holds.
 */
function currentRows(
  block: Block,
  asOf: Extract<AsOf, { kind: 'current' }>,
  only?: number,
): RowSource | undefined {
  const session = asOfSession(asOf);
  const through = lastSessionOf(asOf);
  const cutoff = asOf.cutoffSeconds;
  const throughDay = dayNumberOfIso(through);
  const { day, quote_time: quoteTime } = block.quotes;
  const { offsets, byContract, byExpiration, expirations } = block;
  const interestFloor = previousSession(block.first);
  // Only contracts that expire on or after the as-of session are listed: a suffix in expiration order.
  let low = 0;
  let high = expirations.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (expirations[middle]! < session) low = middle + 1;
    else high = middle;
  }
  const rows: number[] = [];
  const interests = new Map<number, InterestRow | undefined>();
  // One contract (`only`): the same walk over a one-element suffix, empty when it expired before.
  const suffix =
    only === undefined
      ? byExpiration.subarray(low)
      : block.contracts[only]!.expiration >= session
        ? Int32Array.of(only)
        : new Int32Array(0);
  for (const id of suffix) {
    const contract = block.contracts[id]!;
    if (contract.first_traded > through) continue;
    const found = latestRow(offsets[id]!, offsets[id + 1]!);
    if (found === -1) {
      // A contract traded before the block may have its latest snapshot before it: only the query knows.
      if (contract.first_traded < block.first) return undefined;
      continue;
    }
    const interest = latestInterest(block.interest.get(id), cutoff);
    // Open interest settled before the block may be the latest published: only the query knows.
    if (interest === undefined && contract.first_traded < interestFloor) return undefined;
    interests.set(id, interest);
    rows.push(found);
  }
  return blockSource(block, rows, (id) => interests.get(id));

  /** The contract's latest row on or before `through` with q ≤ cutoff (`eodOnly`: its sessions' last rows). */
  function latestRow(start: number, end: number): number {
    // The last of the contract's rows on or before `through`, by binary search over its sessions.
    let first = start;
    let last = end;
    while (first < last) {
      const middle = (first + last) >>> 1;
      if (day[byContract[middle]!]! <= throughDay) first = middle + 1;
      else last = middle;
    }
    for (let k = first - 1; k >= start; k--) {
      const row = byContract[k]!;
      if (asOf.eodOnly) {
        // Only a session's last snapshot counts; one taken after the cutoff leaves its session out.
        const lastOfSession = k + 1 === end || day[byContract[k + 1]!] !== day[row];
        if (!lastOfSession) continue;
      }
      if (quoteTime[row]! <= cutoff) return row;
    }
    return -1;
  }
}

/** The latest settled session's open interest published by the cutoff (then its latest publication). */
function latestInterest(list: readonly InterestRow[] | undefined, cutoff: number): InterestRow | undefined {
  if (list === undefined) return undefined;
  for (let i = list.length - 1; i >= 0; i--) if (list[i]!.publishedAt <= cutoff) return list[i];
  return undefined;
}
