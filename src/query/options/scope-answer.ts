/**
 * A whole scope's answer at an as-of, decoded once from DuckDB's columns into records grouped by
 * expiration, and kept by the store's cache for the next requests at the same as-of.
 */
import { type AsOf, asOfKey } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import { JsonColumn } from '../json-columns.js';
import type { Field } from '../types.js';
import { optionFields } from './columns.js';
import { readAheadRows } from './read-ahead.js';
import { compareRecords, type OptionRecord, recordMaker } from './records.js';
import type { Scope } from './scope.js';
import { answerRowsSql, SNAPSHOT_COLUMNS, type SnapshotRow } from './snapshot-sql.js';

/** One expiration of one root as the store classifies it. */
export type ExpirationGroup = {
  readonly root: string;
  readonly expiration: string;
  readonly settlement: 'AM' | 'PM';
  readonly monthly: boolean;
  readonly weekly: boolean;
  readonly quarterly: boolean;
  readonly nonstandard: boolean;
};

/** A whole scope's answer at an as-of: its expiration groups (by expiration, root) and its records in order. */
export type ScopeAnswer = {
  readonly groups: readonly ExpirationGroup[];
  /** In the service's order ({@link compareRecords}); shared between requests, so never mutated. */
  readonly records: readonly OptionRecord[];
  /** Per group (same index as `groups`), the ascending indices of its records. */
  readonly members: readonly Int32Array[];
  /** The fields of all the records ({@link optionFields}), made on first use and shared: never mutated. */
  allFields(): readonly Field[];
  /** The fields of some of the records, in the given order, printed from the whole columns' JSON text. */
  fieldsOf(records: readonly OptionRecord[]): readonly Field[];
};

/** The records of some of the answer's groups, still in the service's order. */
export function groupRecords(
  answer: ScopeAnswer,
  groups: ReadonlySet<ExpirationGroup>,
): readonly OptionRecord[] {
  const chosen = answer.groups.flatMap((group, g) => (groups.has(group) ? [answer.members[g]!] : []));
  if (chosen.length === answer.groups.length) return answer.records;
  let indices: Int32Array;
  if (chosen.length === 1) indices = chosen[0]!;
  else {
    indices = new Int32Array(chosen.reduce((sum, members) => sum + members.length, 0));
    let at = 0;
    for (const members of chosen) {
      indices.set(members, at);
      at += members.length;
    }
    indices.sort();
  }
  const out = new Array<OptionRecord>(indices.length);
  for (let i = 0; i < indices.length; i++) out[i] = answer.records[indices[i]!]!;
  return out;
}

/**
 * The answer of a whole scope (an underlying's chain) at an as-of, read once and kept by the store's cache
 * for the next requests at the same as-of (a backtest asks several chains of one instant). In a session
 * loop the rows come from a read-ahead block instead of a query per session (`read-ahead.ts`).
 */
export function scopeAnswer(
  sql: SqlSession,
  cache: StoreCache,
  asOf: AsOf,
  scope: Scope,
): Promise<ScopeAnswer> {
  return cache.memoize(`option-scope|${asOfKey(asOf)}|${JSON.stringify(scope)}`, async () => {
    const rows = (await readAheadRows(sql, cache, asOf, scope)) ?? (await scopeRows(sql, asOf, scope));
    return assemble(asOf, rows);
  });
}

/** The scope's answer rows at an as-of, by one query, in the service's order. */
export async function scopeRows(sql: SqlSession, asOf: AsOf, scope: Scope): Promise<SnapshotRow[]> {
  const query = answerRowsSql(asOf, scope);
  const { columns } = await sql.columns(
    `${query.sql} SELECT ${SCOPE_COLUMNS} FROM answer_rows
       ORDER BY expiration_time, side, strike, option_symbol`,
    query.params,
  );
  const [
    symbol,
    underlying,
    root,
    expirationDay,
    expirationTime,
    isCall,
    strike,
    amSettled,
    monthly,
    weekly,
    quarterly,
    nonstandard,
    firstTradedDay,
    sessionDay,
    quoteTime,
    bid,
    ask,
    bidSize,
    askSize,
    last,
    volume,
    volumeTime,
    underlyingPrice,
    iv,
    delta,
    gamma,
    theta,
    vega,
    openInterest,
    oiPublishedAt,
  ] = columns as [string[], string[], string[], number[], number[], boolean[], number[], ...unknown[][]];
  // A result without rows comes back without columns.
  const count = columns[0]?.length ?? 0;
  const rows: SnapshotRow[] = new Array(count);
  for (let i = 0; i < count; i++) {
    rows[i] = {
      option_symbol: symbol![i]!,
      underlying: underlying![i]!,
      root: root![i]!,
      expiration: isoDate(expirationDay![i]!),
      expiration_time: expirationTime![i]!,
      side: isCall![i] ? 'call' : 'put',
      strike: strike![i]!,
      settlement: amSettled![i] ? 'AM' : 'PM',
      monthly: monthly![i] as boolean,
      weekly: weekly![i] as boolean,
      quarterly: quarterly![i] as boolean,
      nonstandard: nonstandard![i] as boolean,
      first_traded: isoDate(firstTradedDay![i] as number),
      session_date: isoDate(sessionDay![i] as number),
      quote_time: quoteTime![i] as number,
      bid: bid![i] as number | null,
      ask: ask![i] as number | null,
      bid_size: bidSize![i] as number | null,
      ask_size: askSize![i] as number | null,
      last: last![i] as number | null,
      volume: volume![i] as number | null,
      volume_time: volumeTime![i] as number | null,
      underlying_price: underlyingPrice![i] as number | null,
      iv: iv![i] as number | null,
      delta: delta![i] as number | null,
      gamma: gamma![i] as number | null,
      theta: theta![i] as number | null,
      vega: vega![i] as number | null,
      open_interest: openInterest![i] as number | null,
      oi_published_at: oiPublishedAt![i] as number | null,
    };
  }
  return rows;
}

/** The scope's answer assembled from its rows: records in the service's order, grouped by expiration. */
export function assemble(asOf: AsOf, rows: readonly SnapshotRow[]): ScopeAnswer {
  const make = recordMaker(asOf);
  const records: OptionRecord[] = [];
  const groupOf: GroupEntry[] = [];
  const byKey = new Map<string, GroupEntry>();
  let entry: GroupEntry | undefined;
  for (const row of rows) {
    records.push(make(row));
    // Rows come ordered by expiration, so a group's key is only built when the row's group changes.
    const group = entry?.group;
    if (
      group === undefined ||
      group.root !== row.root ||
      group.expiration !== row.expiration ||
      group.settlement !== row.settlement ||
      group.monthly !== row.monthly ||
      group.weekly !== row.weekly ||
      group.quarterly !== row.quarterly ||
      group.nonstandard !== row.nonstandard
    ) {
      const key = `${row.root}|${row.expiration}|${row.settlement}|${row.monthly}|${row.weekly}|${row.quarterly}|${row.nonstandard}`;
      entry = byKey.get(key);
      if (entry === undefined) {
        const { root, expiration, settlement, monthly, weekly, quarterly, nonstandard } = row;
        entry = {
          group: { root, expiration, settlement, monthly, weekly, quarterly, nonstandard },
          members: [],
        };
        byKey.set(key, entry);
      }
    }
    groupOf.push(entry!);
  }
  // Already in this order from SQL; sorting again keeps the service's order the one compareRecords defines.
  const order = records.map((_, i) => i).sort((a, b) => compareRecords(records[a]!, records[b]!));
  for (const [to, from] of order.entries()) groupOf[from]!.members.push(to);
  const groups = [...byKey.values()].sort(
    (a, b) => compareText(a.group.expiration, b.group.expiration) || compareText(a.group.root, b.group.root),
  );
  const ordered = order.map((i) => records[i]!);
  let fields: Field[] | undefined;
  let positions: Map<OptionRecord, number> | undefined;
  const allFields = () =>
    (fields ??= optionFields(ordered).map((f) => ({
      ...f,
      json: { column: new JsonColumn(f.values, f.kind), rows: null },
    })));
  return {
    groups: groups.map((entry) => entry.group),
    records: ordered,
    members: groups.map((entry) => Int32Array.from(entry.members)),
    allFields,
    fieldsOf(kept) {
      if (kept.length === ordered.length) return allFields();
      positions ??= new Map(ordered.map((record, i) => [record, i]));
      const rows = Int32Array.from(kept, (record) => positions!.get(record)!);
      const whole = allFields();
      return optionFields(kept).map((f, i) => ({ ...f, json: { column: whole[i]!.json!.column, rows } }));
    },
  };
}

/**
 * The answer rows for {@link scopeAnswer}, in {@link SnapshotRow} order with fewer strings to decode:
 * dates as day numbers, side and settlement as booleans.
 */
const SCOPE_COLUMNS = [
  'option_symbol',
  'underlying',
  'root',
  ...dayNumbers(['expiration']),
  'epoch_ms(expiration_time) / 1000 AS expiration_time',
  "side = 'call' AS is_call",
  'CAST(strike AS DOUBLE) AS strike',
  "settlement = 'AM' AS am_settled",
  'monthly',
  'weekly',
  'quarterly',
  'nonstandard',
  ...dayNumbers(['first_traded', 'session_date']),
  ...SNAPSHOT_COLUMNS.slice(SNAPSHOT_COLUMNS.indexOf('epoch_ms(quote_time) / 1000 AS quote_time')),
].join(', ');

function dayNumbers(columns: readonly string[]): string[] {
  return columns.map((c) => `CAST(${c} - DATE '1970-01-01' AS INTEGER) AS ${c}_day`);
}

const DAY_MS = 86_400_000;
const isoDates = new Map<number, string>();

/** `YYYY-MM-DD` of a day number (days since 1970-01-01), remembered: a chain has few distinct dates. */
function isoDate(day: number): string {
  let text = isoDates.get(day);
  if (text === undefined) {
    text = new Date(day * DAY_MS).toISOString().slice(0, 10);
    isoDates.set(day, text);
  }
  return text;
}

type GroupEntry = { readonly group: ExpirationGroup; readonly members: number[] };

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
