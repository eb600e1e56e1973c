/**
 * The expiration groups a chain can hold at an as-of, known from the underlying's contract table alone,
 * before any snapshot is read: a request that picks one expiration date (`dte`, the front month) can then
 * read that date's rows only (`options-chain.ts`).
 */
import { type AsOf, asOfSession, lastSessionOf } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import { dayNumberOfIso, isoDateOfDay } from './days.js';
import { CONTRACT_FLAGS, type ContractTable, contractTable } from './read-ahead.js';
import type { Scope } from './scope.js';
import type { GroupColumns } from './snapshot-sql.js';

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

function indexOf(table: ContractTable): GroupIndex {
  let index = indexes.get(table);
  if (index === undefined) {
    index = groupIndex(table);
    indexes.set(table, index);
  }
  return index;
}

/** Groups the table's contracts as `assemble` groups rows (calls and puts together). */
function groupIndex(table: ContractTable): GroupIndex {
  const { am, monthly, weekly, quarterly, nonstandard } = CONTRACT_FLAGS;
  const classification = am | monthly | weekly | quarterly | nonstandard;
  const byKey = new Map<string, number>();
  const groups: GroupColumns[] = [];
  const root: number[] = [];
  const expirationDay: number[] = [];
  const firstTradedDay: number[] = [];
  for (let i = 0; i < table.symbols.length; i++) {
    const flags = table.flags[i]! & classification;
    const key = `${table.root[i]}|${table.expirationDay[i]}|${flags}`;
    const at = byKey.get(key);
    if (at !== undefined) {
      // A contract without a first_traded (NaN) is never listed; it leaves its group's earliest alone.
      const first = table.firstTradedDay[i]!;
      const earliest = firstTradedDay[at]!;
      if (Number.isNaN(earliest) || first < earliest) firstTradedDay[at] = first;
      continue;
    }
    byKey.set(key, groups.length);
    groups.push({
      root: table.roots[table.root[i]!]!,
      expiration: isoDateOfDay(table.expirationDay[i]!),
      settlement: flags & am ? 'AM' : 'PM',
      monthly: (flags & monthly) !== 0,
      weekly: (flags & weekly) !== 0,
      quarterly: (flags & quarterly) !== 0,
      nonstandard: (flags & nonstandard) !== 0,
    });
    root.push(table.root[i]!);
    expirationDay.push(table.expirationDay[i]!);
    firstTradedDay.push(table.firstTradedDay[i]!);
  }
  return {
    groups,
    root: Uint16Array.from(root),
    expirationDay: Float64Array.from(expirationDay),
    firstTradedDay: Float64Array.from(firstTradedDay),
  };
}
