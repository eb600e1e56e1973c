/**
 * The expiration groups a chain can hold at an as-of, known from the underlying's contract table alone,
 * before any snapshot is read: a request that picks one expiration date (`dte`, the front month) can then
 * read that date's rows only (`options-chain.ts`).
 */
import { type AsOf, asOfSession, lastSessionOf } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import { symbolRange } from './block-sql.js';
import { CONTRACT_FLAGS, type ContractTable, contractTable } from './contract-table.js';
import { dayNumberOfIso, isoDateOfDay } from './days.js';
import type { Scope } from './scope.js';
import type { GroupColumns } from './snapshot-sql.js';
import { firstNot } from './sorted-search.js';

/** A contract table's groups: one per root, expiration and classification, as a chain's answer groups rows. */
type GroupIndex = {
  readonly groups: readonly GroupColumns[];
  /** Per group: its root's index in the table's roots, its expiration and its earliest first_traded as day numbers. */
  readonly root: Uint16Array;
  readonly expirationDay: Float64Array;
  readonly firstTradedDay: Float64Array;
};

/** Each table's groups, made once: a table is read once per data version and never changes. */
const indexes = new WeakMap<ContractTable, GroupIndex>();

/**
 * The groups with a contract listed at the as-of: by its last session, and not expired before its
 * session (`snapshot-sql.ts`'s `listed`, for dated and current as-ofs alike). Every group a chain has
 * rows for is among them, since a row's contract is listed; some may have no row yet (a contract listed
 * and not yet quoted), which the caller must allow for.
 */
export async function listedGroups(
  sql: SqlSession,
  cache: StoreCache,
  asOf: AsOf,
  scope: Exclude<Scope, { optionSymbol: string }>,
): Promise<GroupColumns[]> {
  const table = await contractTable(sql, cache, scope.underlying);
  const index = indexOf(table);
  const notExpiredBefore = dayNumberOfIso(asOfSession(asOf));
  const listedBy = dayNumberOfIso(asOf.kind === 'dated' ? asOf.session : lastSessionOf(asOf));
  const root = scope.root === undefined ? -1 : table.roots.indexOf(scope.root);
  const listed: GroupColumns[] = [];
  for (let i = 0; i < index.groups.length; i++) {
    if (scope.root !== undefined && index.root[i] !== root) continue;
    if (index.expirationDay[i]! >= notExpiredBefore && index.firstTradedDay[i]! <= listedBy) {
      listed.push(index.groups[i]!);
    }
  }
  return listed;
}

/** The roots of the table's contracts that expire on `expiration` (a date's symbols begin with one). */
export function rootsExpiringOn(table: ContractTable, expiration: string): string[] {
  const index = indexOf(table);
  const day = dayNumberOfIso(expiration);
  const roots = new Set<string>();
  for (let i = 0; i < index.groups.length; i++) {
    if (index.expirationDay[i] === day) roots.add(index.groups[i]!.root);
  }
  return [...roots];
}

/**
 * Per root expiring on `expiration`, the range of the table's contracts whose symbols are that root's of
 * that date (`ROOTyymmdd…`, sorted): every contract expiring then is in one (a root that is another's
 * prefix and a digit may put a few of another root's in it too). Disjoint (no root's prefix with its date
 * begins another's), in ascending order.
 */
export function contractRanges(table: ContractTable, expiration: string): (readonly [number, number])[] {
  const { symbolAt } = table;
  const from = (prefix: string) => firstNot(0, table.count, (i) => symbolAt(i) < prefix);
  return rootsExpiringOn(table, expiration)
    .map((root) => {
      const [low, high] = symbolRange(root, expiration);
      return [from(low), from(high)] as const;
    })
    .sort((a, b) => a[0] - b[0]);
}

function indexOf(table: ContractTable): GroupIndex {
  let index = indexes.get(table);
  if (index === undefined) {
    index = groupIndex(table);
    indexes.set(table, index);
  }
  return index;
}

/**
 * The number naming contract `id`'s group in its table: its expiration, root and classification, not its
 * side (a group holds calls and puts).
 */
export function groupKey(table: ContractTable, id: number): number {
  return (
    (table.expirationDay[id]! * 65_536 + table.root[id]!) * 64 + (table.flags[id]! & ~CONTRACT_FLAGS.call)
  );
}

/** Contract `id`'s group, as a chain's answer groups its rows. */
export function groupOfContract(table: ContractTable, id: number): GroupColumns {
  const flags = table.flags[id]!;
  return {
    root: table.roots[table.root[id]!]!,
    expiration: isoDateOfDay(table.expirationDay[id]!),
    settlement: flags & CONTRACT_FLAGS.am ? 'AM' : 'PM',
    monthly: (flags & CONTRACT_FLAGS.monthly) !== 0,
    weekly: (flags & CONTRACT_FLAGS.weekly) !== 0,
    quarterly: (flags & CONTRACT_FLAGS.quarterly) !== 0,
    nonstandard: (flags & CONTRACT_FLAGS.nonstandard) !== 0,
  };
}

/** The table's contracts grouped as `assemble` groups rows, each group with its earliest first_traded. */
function groupIndex(table: ContractTable): GroupIndex {
  const byKey = new Map<number, number>();
  const groups: GroupColumns[] = [];
  const root: number[] = [];
  const expirationDay: number[] = [];
  const firstTradedDay: number[] = [];
  // A group's contracts lie in two runs of the table's symbol order (its calls, then its puts): a
  // contract of the group of the one before it is not looked up (the table of the 26 M-row store's SPY,
  // 121,134 contracts, took 19 ms to index looking each up).
  let lastKey = Number.NaN;
  let lastAt = -1;
  for (let id = 0; id < table.count; id++) {
    const key = groupKey(table, id);
    const at = key === lastKey ? lastAt : byKey.get(key);
    lastKey = key;
    lastAt = at ?? groups.length;
    if (at !== undefined) {
      // A contract without a first_traded (NaN) is never listed; it leaves its group's earliest alone.
      const first = table.firstTradedDay[id]!;
      const earliest = firstTradedDay[at]!;
      if (Number.isNaN(earliest) || first < earliest) firstTradedDay[at] = first;
      continue;
    }
    byKey.set(key, groups.length);
    groups.push(groupOfContract(table, id));
    root.push(table.root[id]!);
    expirationDay.push(table.expirationDay[id]!);
    firstTradedDay.push(table.firstTradedDay[id]!);
  }
  return {
    groups,
    root: Uint16Array.from(root),
    expirationDay: Float64Array.from(expirationDay),
    firstTradedDay: Float64Array.from(firstTradedDay),
  };
}
