/**
 * Random access to one session: a dated chain at any session, read by ONE small statement over the
 * session's quote file and the open interest settled the session before, and kept in the store's session
 * cache as each contract's last snapshot only. Every DuckDB statement has a fixed cost (parsing, planning,
 * opening files) and every column read costs its decoding, so the statement reads only the columns a
 * dated answer prints (no Greeks: they are null on dated chains), and the choice of the last snapshot, the
 * matching of rows to contracts and the open interest are done here, over numbers, with no join or sort.
 * The same rules as `datedAnswerSql` (`snapshot-sql.ts`); the differential tests hold the two together.
 */
import { previousSession } from '../../market-time/index.js';
import type { AsOf } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import { gathered, QUOTE_COLUMNS } from './block-columns.js';
import { nullable } from './block-rows.js';
import { asDouble, contractKeySql, quoteReadSql, symbolRangesSql } from './block-sql.js';
import {
  CONTRACT_FLAGS,
  type ContractTable,
  callBits,
  contractTable,
  indexOfContract,
} from './contract-table.js';
import { dayNumberOfIso, isoDateOfDay } from './days.js';
import { KeyIndex } from './key-index.js';
import { contractRanges, groupKey, groupOfContract, rootsExpiringOn } from './listed-groups.js';
import type { Scope } from './scope.js';
import { partRuns, symbolOrder } from './session-file-rows.js';
import type { DatedSnapshotColumns, GroupColumns, RowSource, SnapshotRow } from './snapshot-sql.js';

/** The quote columns a dated answer prints (the loop blocks' without the contract, the day and the Greeks). */
const SESSION_COLUMNS = QUOTE_COLUMNS.slice(
  QUOTE_COLUMNS.indexOf('quote_time'),
  QUOTE_COLUMNS.indexOf('iv'),
) as readonly SessionColumn[];
type SessionColumn = Exclude<
  (typeof QUOTE_COLUMNS)[number],
  'contract' | 'day' | 'iv' | 'delta' | 'gamma' | 'theta' | 'vega'
>;

/** One session of an underlying: per contract that can answer, its last snapshot and its open interest. */
type SessionBlock = {
  readonly table: ContractTable;
  /** The contracts' numbers in the contract table, ascending (symbol order). */
  readonly ids: Int32Array;
  /** Per contract, its last snapshot's values (NULL as NaN). */
  readonly quotes: Record<SessionColumn, Float64Array>;
  /** Per contract, the open interest settled the session before and its publication (none: NaN). */
  readonly openInterest: Float64Array;
  readonly publishedAt: Float64Array;
  readonly bytes: number;
};

/** Marks a row of the statement as a quote or an open interest row. */
const QUOTE_ROW = 0;
const INTEREST_ROW = 1;

/**
 * The scope's rows at a dated as-of from its session's block, read on first use and kept in the store's
 * session cache (bounded in bytes): each contract's latest snapshot of the session, open interest settled
 * the session before. One block serves every root of the underlying; a request of one expiration reads a
 * block of that date alone, unless the whole session's is held.
 */
export async function sessionBlockRows(
  sql: SqlSession,
  cache: StoreCache,
  asOf: Extract<AsOf, { kind: 'dated' }>,
  scope: Exclude<Scope, { optionSymbol: string }>,
): Promise<RowSource> {
  const session = asOf.session;
  const table = await contractTable(sql, cache, scope.underlying);
  const key = `session|${scope.underlying}|${session}`;
  // One expiration's request reads that date's rows of the session only (a range of symbols per root: on
  // a dense listing a few hundred rows of twelve thousand, a third of the statement's CPU), unless the
  // whole session is held already.
  const { expiration } = scope;
  const block =
    expiration === undefined || cache.heldSized(key) !== undefined
      ? await cache.sized(
          key,
          () => loadSession(sql, table, session),
          (block) => block.bytes,
        )
      : await cache.sized(
          `${key}|${expiration}`,
          () => loadSession(sql, table, session, expiration),
          (block) => block.bytes,
        );
  return sessionSource(block, scope.root, session, expiration);
}

/**
 * Reads a session's block: the session's quote rows and the open interest settled the session before,
 * in one statement, each row keyed by a hash of its symbol (or the symbol, when two of the underlying's
 * share a hash); then, per contract listed by the session and not expired before it, its latest snapshot.
 */
async function loadSession(
  sql: SqlSession,
  table: ContractTable,
  session: string,
  expiration?: string,
): Promise<SessionBlock> {
  // One expiration's rows: the numbering below keeps only the table's contracts, and the answer that date's.
  const only = (alias: string) =>
    expiration === undefined ? '' : symbolRangesSql(alias, expiration, rootsExpiringOn(table, expiration));
  const settled = previousSession(session);
  // From the session column files when they are there: a read of the rows' bytes, no statement.
  const fromFiles = sessionFileRows(sql, table, session, settled, expiration);
  const columns = fromFiles ?? (await sessionStatementRows(sql, table, session, settled, only));
  const kinds = (columns[0] ?? new Float64Array(0)) as Float64Array;
  const keys = columns[1] ?? [];
  const values = columns.slice(2) as Float64Array[];
  const contractOf = contractLookup(table, keys);
  const sessionDay = dayNumberOfIso(session);
  // Per contract of the table: its latest quote row (-1: none yet) and its open interest row.
  const { latest, interest } = byContract(table.count);
  const rowContract = new Int32Array(kinds.length).fill(-1);
  try {
    const held: number[] = [];
    const quoteTime = values[0]!;
    for (let i = 0; i < kinds.length; i++) {
      const id = contractOf(i);
      rowContract[i] = id;
      if (id === -1) continue;
      if (kinds[i] === INTEREST_ROW) {
        interest[id] = i;
        continue;
      }
      // A contract answers on D when listed by D and not expired before it (datedAnswerSql's `listed`).
      if (table.expirationDay[id]! < sessionDay || table.firstTradedDay[id]! > sessionDay) continue;
      const best = latest[id]!;
      if (best === -1) held.push(id);
      // The latest snapshot of the session; of equal quote times, the last read (as the files order them).
      if (best === -1 || quoteTime[i]! >= quoteTime[best]!) latest[id] = i;
    }
    const ids = Int32Array.from(held).sort();
    // Plain loops: a callback per value cost more than the rest of the block's making.
    const kept = (column: Float64Array, rowOf: Int32Array) => {
      const out = new Float64Array(ids.length);
      for (let at = 0; at < ids.length; at++) {
        const row = rowOf[ids[at]!]!;
        out[at] = row === -1 ? Number.NaN : column[row]!;
      }
      return out;
    };
    const quotes = Object.fromEntries(
      SESSION_COLUMNS.map((name, c) => [name, kept(values[c]!, latest)]),
    ) as SessionBlock['quotes'];
    return {
      table,
      ids,
      quotes,
      openInterest: kept(values[1]!, interest),
      publishedAt: kept(values[0]!, interest),
      // Eleven numbers and a contract number a row.
      bytes: ids.length * ((SESSION_COLUMNS.length + 2) * 8 + 4) + 256,
    };
  } finally {
    // The slots set go back to -1 for the next block.
    for (const id of rowContract) {
      if (id === -1) continue;
      latest[id] = -1;
      interest[id] = -1;
    }
  }
}

/**
 * Per contract number, slots shared by every block's making, all -1 between makings (each making puts
 * back those it set, before it returns and with no wait in between). A front month's block matches a
 * few hundred rows to a table of up to a quarter of a million contracts: two arrays of the table's size
 * made for each block were half of the matching (over 116 front-month blocks of the 213 M-row bench
 * store's underlyings, 1.4 ms a block with them, 0.7 without).
 */
const slots = { latest: new Int32Array(0), interest: new Int32Array(0) };

/** The shared slots, for a table of `count` contracts. */
function byContract(count: number): { latest: Int32Array; interest: Int32Array } {
  if (slots.latest.length < count) {
    slots.latest = new Int32Array(count).fill(-1);
    slots.interest = new Int32Array(count).fill(-1);
  }
  return slots;
}

/** The statement's rows of `loadSession`: kind, key and the session columns of the quotes UNION ALL the open interest. */
async function sessionStatementRows(
  sql: SqlSession,
  table: ContractTable,
  session: string,
  settled: string,
  only: (alias: string) => string,
): Promise<readonly (Float64Array | (string | null)[])[]> {
  const underlying = table.underlying;
  const [quoteSource, interestSource] = await Promise.all([
    sql.from('option_quotes', { underlying }, { first: session, last: session }),
    sql.from('open_interest', { underlying }, { first: settled, last: settled }),
  ]);
  const key = (alias: string) => contractKeySql(alias, table.keys);
  const double = asDouble;
  // The wide columns whose every value fits in 32 bits go so (half the bytes to hand over). The open
  // interest rows' untyped NULLs take each column's type from the quotes'; the bid's place holds the
  // open interest too, a DOUBLE, so that column comes back as DOUBLE whatever the bid's type.
  const narrow = sql.narrowColumns('option_quotes', { underlying }, { first: session, last: session });
  const read = (name: SessionColumn) => quoteReadSql(name, narrow);
  const { columns } = await sql.typedColumns(
    `SELECT ${double(String(QUOTE_ROW))}, ${key('q')}, ${SESSION_COLUMNS.map(read).join(', ')}
     FROM ${quoteSource} q
     WHERE q.underlying = $underlying AND q.session_date = CAST($session AS DATE) ${only('q')}
     UNION ALL
     SELECT ${double(String(INTEREST_ROW))}, ${key('o')}, ${double('epoch_ms(o.published_at) / 1000')},
       ${double('o.open_interest')}, ${Array(SESSION_COLUMNS.length - 2)
         .fill('NULL')
         .join(', ')}
     FROM ${interestSource} o
     WHERE o.underlying = $underlying AND o.settled_session = CAST($settled AS DATE) ${only('o')}`,
    { underlying, session, settled },
  );
  return columns;
}

/**
 * The same rows as `sessionStatementRows`, read from the session column files of the session's quotes
 * and of the open interest settled the session before; undefined when either is to be read through
 * DuckDB, when rows are named by symbols (two contracts share a hash), or when a read fails.
 */
function sessionFileRows(
  sql: SqlSession,
  table: ContractTable,
  session: string,
  settled: string,
  expiration: string | undefined,
): Float64Array[] | undefined {
  const keys = table.keys;
  if (keys === undefined) return undefined;
  const partition = { underlying: table.underlying };
  const quotes = sql.sessionColumns('option_quotes', partition, { first: session, last: session });
  const interest = sql.sessionColumns('open_interest', partition, { first: settled, last: settled });
  if (quotes === undefined || interest === undefined) return undefined;
  // One expiration's request keeps the rows of its symbols (`symbolRangesSql`): per root, a range of the
  // table's contracts, whose symbols are sorted.
  const ranges = expiration === undefined ? undefined : contractRanges(table, expiration);
  const kept = ranges === undefined ? undefined : keptKeys(table, ranges);
  // Found by halves in sessions in symbol order: the table numbers every row's contract in that order.
  const order = ranges === undefined ? undefined : symbolOrder((key) => keys.get(key), ranges);
  try {
    const quoteRuns = partRuns(quotes, kept, order);
    const interestRuns = partRuns(interest, kept, order);
    const quoteRows = quoteRuns.rows;
    const total = quoteRows + interestRuns.rows;
    const kinds = new Float64Array(total).fill(INTEREST_ROW, quoteRows);
    const rowKeys = new Float64Array(total);
    const values = SESSION_COLUMNS.map(() => new Float64Array(total));
    quoteRuns.read([['key', rowKeys], ...SESSION_COLUMNS.map((name, c) => [name, values[c]!] as const)], 0);
    // The open interest rows take the quote time's and the bid's places (as in the statement).
    interestRuns.read(
      [
        ['key', rowKeys],
        ['published_at', values[0]!],
        ['open_interest', values[1]!],
      ],
      quoteRows,
    );
    for (const column of values.slice(2)) column.fill(Number.NaN, quoteRows);
    return [kinds, rowKeys, ...values];
  } catch {
    return undefined; // read through DuckDB instead
  }
}

/** Whether a row's key is one of the table's contracts in `ranges` (`KeyIndex.membership`). */
function keptKeys(
  table: ContractTable,
  ranges: readonly (readonly [number, number])[],
): (key: number) => boolean {
  const hashes = ranges.flatMap(([low, high]) => Array.from(table.hashes.subarray(low, high)));
  // The table's keys are distinct (its rows are named by them), so the test is made.
  return KeyIndex.membership(Float64Array.from(hashes))!;
}

/** The contract table's number of each row's contract (by its key or its symbol), or -1. */
function contractLookup(
  table: ContractTable,
  keys: Float64Array | readonly (string | null)[],
): (row: number) => number {
  if (keys instanceof Float64Array) {
    const index = table.keys!;
    let last = 0;
    return (row) => {
      const id = index.getNear(keys[row]!, last);
      if (id === undefined) return -1;
      last = id;
      return id;
    };
  }
  return (row) => {
    const symbol = keys[row];
    return symbol === null || symbol === undefined ? -1 : indexOfContract(table, symbol);
  };
}

/**
 * The block's rows of the scope's root (all roots without one), made into store rows only when asked
 * for; each expiration group's columns are one object shared by its rows.
 */
function sessionSource(
  block: SessionBlock,
  root: string | undefined,
  session: string,
  expiration: string | undefined,
): RowSource {
  const { table, ids, quotes } = block;
  // The block's positions of the root's contracts (every position without a root), of one expiration
  // when asked.
  const rootIndex = root === undefined ? -1 : table.roots.indexOf(root);
  const expirationDay = expiration === undefined ? -1 : dayNumberOfIso(expiration);
  const positions: number[] = [];
  for (let at = 0; at < ids.length; at++) {
    const id = ids[at]!;
    if (root !== undefined && table.root[id] !== rootIndex) continue;
    if (expiration !== undefined && table.expirationDay[id] !== expirationDay) continue;
    positions.push(at);
  }
  // A group per root, expiration and flags but the side, found once per row (a key of numbers: a text
  // key per row cost more than the rest of the answer's grouping).
  const groups = new Map<number, GroupColumns>();
  const groupAt: (GroupColumns | undefined)[] = new Array(positions.length);
  const groupOf = (id: number): GroupColumns => {
    const key = groupKey(table, id);
    let group = groups.get(key);
    if (group === undefined) {
      group = groupOfContract(table, id);
      groups.set(key, group);
    }
    return group;
  };
  /** The group of the row at `index`, looked up once per row. */
  const groupAtIndex = (index: number): GroupColumns => {
    let group = groupAt[index];
    if (group === undefined) {
      group = groupOf(ids[positions[index]!]!);
      groupAt[index] = group;
    }
    return group;
  };
  return {
    length: positions.length,
    groupOf: groupAtIndex,
    datedColumns: () => sessionColumnsOf(block, positions, session),
    // The block, and a position and a group a row.
    heldBytes: block.bytes + positions.length * 16,
    row: (index): SnapshotRow => {
      const at = positions[index]!;
      const id = ids[at]!;
      const group = groupAtIndex(index);
      const openInterest = block.openInterest[at]!;
      const hasInterest = !Number.isNaN(block.publishedAt[at]!);
      // Every field named, in one order: one object shape for all rows.
      return {
        option_symbol: table.symbolAt(id),
        underlying: table.underlying,
        root: group.root,
        expiration: group.expiration,
        expiration_time: table.expirationTime[id]!,
        side: table.flags[id]! & CONTRACT_FLAGS.call ? 'call' : 'put',
        strike: table.strike[id]!,
        settlement: group.settlement,
        monthly: group.monthly,
        weekly: group.weekly,
        quarterly: group.quarterly,
        nonstandard: group.nonstandard,
        first_traded: isoDateOfDay(table.firstTradedDay[id]!),
        session_date: session,
        quote_time: quotes.quote_time[at]!,
        bid: nullable(quotes.bid[at]!),
        ask: nullable(quotes.ask[at]!),
        bid_size: nullable(quotes.bid_size[at]!),
        ask_size: nullable(quotes.ask_size[at]!),
        last: nullable(quotes.last[at]!),
        volume: nullable(quotes.volume[at]!),
        volume_time: nullable(quotes.volume_time[at]!),
        underlying_price: nullable(quotes.underlying_price[at]!),
        iv: null,
        delta: null,
        gamma: null,
        theta: null,
        vega: null,
        open_interest: hasInterest ? nullable(openInterest) : null,
        oi_published_at: hasInterest ? block.publishedAt[at]! : null,
      };
    },
  };
}

/** The block's rows at `positions` as a dated answer's columns (`datedValueColumns`), gathered once. */
function sessionColumnsOf(
  block: SessionBlock,
  positions: readonly number[],
  session: string,
): DatedSnapshotColumns {
  const { table, ids, quotes } = block;
  const length = positions.length;
  const contracts = new Int32Array(length);
  for (let index = 0; index < length; index++) contracts[index] = ids[positions[index]!]!;
  const byContract = (column: Float64Array) => gathered(column, contracts);
  const byPosition = (column: Float64Array) => gathered(column, positions);
  return {
    length,
    session,
    underlying: table.underlying,
    symbolAt: (index) => table.symbolAt(contracts[index]!),
    isCall: callBits(table, contracts),
    strike: byContract(table.strike),
    expirationTime: byContract(table.expirationTime),
    expirationDay: byContract(table.expirationDay),
    firstTradedDay: byContract(table.firstTradedDay),
    quoteTime: byPosition(quotes.quote_time),
    bid: byPosition(quotes.bid),
    ask: byPosition(quotes.ask),
    bidSize: byPosition(quotes.bid_size),
    askSize: byPosition(quotes.ask_size),
    last: byPosition(quotes.last),
    volume: byPosition(quotes.volume),
    volumeTime: byPosition(quotes.volume_time),
    underlyingPrice: byPosition(quotes.underlying_price),
    // Open interest only where a settlement was read for the contract (its publication is known).
    openInterest: byPosition(block.openInterest),
    oiPublishedAt: byPosition(block.publishedAt),
  };
}
