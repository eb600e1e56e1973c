/**
 * A whole scope's answer at an as-of, decoded once from DuckDB's columns into records grouped by
 * expiration, and kept by the store's cache for the next requests at the same as-of.
 */
import { type AsOf, asOfKey } from '../../pit/as-of.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import { JsonColumn } from '../json-columns.js';
import type { Field } from '../types.js';
import { fieldsOfColumns, optionFields } from './columns.js';
import { type GreeksSource, type PricedSnapshots, withComputedGreeks } from './computed-greeks.js';
import { isoDateOfDay } from './days.js';
import { readAheadRows } from './read-ahead.js';
import {
  type AnswerKnownAt,
  compareRecords,
  currentValueColumns,
  datedValueColumns,
  type OptionRecord,
  recordMaker,
} from './records.js';
import type { Scope } from './scope.js';
import { sessionBlockRows } from './session-block.js';
import { sessionPairRows } from './session-pair.js';
import {
  answerRowsSql,
  type RowSource,
  rowSource,
  SNAPSHOT_COLUMNS,
  type SnapshotRow,
} from './snapshot-sql.js';
import { wholeHistoryRows } from './whole-history.js';

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

/**
 * A whole scope's answer at an as-of: its expiration groups (by expiration, root) and, on demand, their
 * records. A group's records are made when first asked for, so a question about one expiration (a
 * session loop's `dte=30`) does not pay for the whole chain.
 */
export type ScopeAnswer = {
  readonly groups: readonly ExpirationGroup[];
  /** All records in the service's order ({@link compareRecords}); shared between requests, never mutated. */
  readonly records: readonly OptionRecord[];
  /** Per group (same index as `groups`), the ascending indices of its records in `records`. */
  readonly members: readonly Int32Array[];
  /** The records of some of the groups, in the service's order. */
  recordsOf(groups: ReadonlySet<ExpirationGroup>): readonly OptionRecord[];
  /** The fields of all the records ({@link optionFields}), made on first use and shared: never mutated. */
  allFields(): readonly Field[];
  /**
   * The fields of some of the records, in the given order; printed from the whole columns' JSON text
   * once the whole chain has been made (a server answering many questions about one instant).
   */
  fieldsOf(records: readonly OptionRecord[]): readonly Field[];
  /**
   * The fields of some groups' records (those `fieldsOf(recordsOf(groups))` gives) and the latest
   * known-at instant of their values, made from the rows' columns without a record per row, when the
   * rows come as columns and those records have not been made: a dated answer from a session or loop
   * block, a current one from a block (of `fewestCurrentRows` rows or more, 0 by default). Undefined
   * otherwise (and with computed Greeks). Made anew at each call and not kept: most dated chains are asked once
   * (a repeat is kept by the response cache from its second ask), and columns kept here outlived young
   * collections, which copied them twice (in a series of random whole chains, keeping them took some
   * 5 ms of collecting a request).
   */
  columnsOf(groups: ReadonlySet<ExpirationGroup>, fewestCurrentRows?: number): GroupsColumns | undefined;
  /** The bytes of the rows the answer still holds to make records from, when its source knows them. */
  readonly heldBytes: number | undefined;
};

/** Some groups' fields made from columns, with what their records would say of them. */
export type GroupsColumns = {
  readonly fields: readonly Field[];
  readonly rows: number;
  /** The latest known-at instant of the values ({@link dataAsOf} of the records), null for none. */
  readonly dataAsOf: number | null;
  /** The known-at columns the records would give: made with a current answer's columns (undefined: ask the records). */
  readonly known?: AnswerKnownAt;
};

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
  greeks: GreeksSource = 'vendor',
): Promise<ScopeAnswer> {
  return cache.memoize(`option-scope|${asOfKey(asOf)}|${JSON.stringify(scope)}|${greeks}`, async () => {
    const source =
      (await readAheadRows(sql, cache, asOf, scope)) ??
      (await wholeHistoryRows(sql, cache, asOf, scope)) ??
      ('optionSymbol' in scope
        ? undefined
        : asOf.kind === 'dated'
          ? await sessionBlockRows(sql, cache, asOf, scope)
          : await sessionPairRows(sql, cache, asOf, scope)) ??
      rowSource(await scopeRows(sql, asOf, scope));
    // Snapshots priced before (a sweep's earlier run, a rerun) keep their figures in the store's cache.
    return assemble(asOf, source, greeks, cache);
  });
}

/** The scope's answer rows at an as-of, by one query, in the service's order. */
export async function scopeRows(sql: SqlSession, asOf: AsOf, scope: Scope): Promise<SnapshotRow[]> {
  const query = await answerRowsSql(sql, asOf, scope);
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
      expiration: isoDateOfDay(expirationDay![i]!),
      expiration_time: expirationTime![i]!,
      side: isCall![i] ? 'call' : 'put',
      strike: strike![i]!,
      settlement: amSettled![i] ? 'AM' : 'PM',
      monthly: monthly![i] as boolean,
      weekly: weekly![i] as boolean,
      quarterly: quarterly![i] as boolean,
      nonstandard: nonstandard![i] as boolean,
      first_traded: isoDateOfDay(firstTradedDay![i] as number),
      session_date: isoDateOfDay(sessionDay![i] as number),
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

/** The scope's answer assembled from its rows: grouped by expiration, records made per group on demand. */
export function assemble(
  asOf: AsOf,
  source: RowSource,
  greeks: GreeksSource = 'vendor',
  priced?: PricedSnapshots,
): ScopeAnswer {
  const make = recordMaker(asOf);
  const byKey = new Map<string, GroupEntry>();
  let entry: GroupEntry | undefined;
  for (let index = 0; index < source.length; index++) {
    const row = source.groupOf(index);
    // Rows come mostly ordered by expiration, so a group's key is only built when the row's group changes.
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
          rows: [],
        };
        byKey.set(key, entry);
      }
    }
    entry!.rows.push(index);
  }
  const entries = [...byKey.values()].sort(
    (a, b) => compareText(a.group.expiration, b.group.expiration) || compareText(a.group.root, b.group.root),
  );
  // The source is let go once every group has its records: a kept answer holds records, not rows twice.
  let rowsOf: RowSource | undefined = source;
  let made = 0;
  const recordsOfEntry = (e: GroupEntry) => {
    if (e.records === undefined) {
      const from = rowsOf!;
      const group = e.rows.map((index) => make(from.row(index)));
      // A group is one expiration of one root: computed Greeks price it together (its parity forward).
      e.records = (greeks === 'computed' ? withComputedGreeks(group, priced) : group).sort(compareRecords);
      e.rows.length = 0;
      if (++made === entries.length) rowsOf = undefined;
    }
    return e.records;
  };

  let whole: WholeChain | undefined;
  const wholeChain = (): WholeChain => {
    if (whole !== undefined) return whole;
    const ordered = entries.flatMap(recordsOfEntry).sort(compareRecords);
    const position = new Map(ordered.map((record, i) => [record, i]));
    const members = entries.map((e) =>
      Int32Array.from(recordsOfEntry(e), (record) => position.get(record)!).sort(),
    );
    whole = { ordered, members, position };
    return whole;
  };
  let fields: Field[] | undefined;
  const allFields = () =>
    (fields ??= optionFields(wholeChain().ordered).map((f) => ({
      ...f,
      json: { column: new JsonColumn(f.values, f.kind), rows: null },
    })));
  // Made anew for each request and not kept: see `ScopeAnswer.columnsOf`.
  const columnsOf = (
    groups: ReadonlySet<ExpirationGroup>,
    fewestCurrentRows = 0,
  ): GroupsColumns | undefined => {
    // Computed Greeks price records (a group's parity forward, its neighbours' volatilities).
    if (greeks === 'computed' || rowsOf === undefined) return undefined;
    const from = rowsOf;
    const chosen = entries.filter((e) => groups.has(e.group));
    // A group whose records are made has let its rows go (and its records are the answer then).
    if (chosen.some((e) => e.records !== undefined)) return undefined;
    const whole = chosen.length === entries.length;
    const rows = whole ? source.length : chosen.reduce((sum, e) => sum + e.rows.length, 0);
    // Gathered only once the columns are to be made (a current answer under the bound is left to records).
    const indices = () => (whole ? undefined : Int32Array.from(chosen.flatMap((e) => e.rows)));
    if (asOf.kind === 'dated') {
      if (from.datedColumns === undefined) return undefined;
      const made = datedValueColumns(from.datedColumns(), indices());
      return { fields: fieldsOfColumns(made.columns), rows, dataAsOf: made.knownAt };
    }
    if (from.currentColumns === undefined || rows < fewestCurrentRows) return undefined;
    const made = currentValueColumns(from.currentColumns(), asOf.cutoffSeconds, indices());
    return { fields: fieldsOfColumns(made.columns), rows, dataAsOf: made.knownAt, known: made.known };
  };
  return new AssembledAnswer(
    entries.map((e) => e.group),
    wholeChain,
    (groups) => {
      const chosen = entries.filter((e) => groups.has(e.group));
      // One group alone is its records as they are (a one-expiration scope is often one group whole).
      if (chosen.length === 1) return recordsOfEntry(chosen[0]!);
      if (chosen.length === entries.length) return wholeChain().ordered;
      return chosen.flatMap(recordsOfEntry).sort(compareRecords);
    },
    allFields,
    columnsOf,
    () => rowsOf?.heldBytes,
    (kept) => {
      if (whole === undefined) return optionFields(kept);
      const ordered = whole.ordered;
      if (kept.length === ordered.length) return allFields();
      const position = whole.position;
      const rows = Int32Array.from(kept, (record) => position.get(record) ?? -1);
      if (rows.includes(-1)) return optionFields(kept);
      const all = allFields();
      return optionFields(kept).map((f, i) => ({ ...f, json: { column: all[i]!.json!.column, rows } }));
    },
  );
}

/** A scope's whole chain: its records in order, each group's members, each record's position. */
type WholeChain = {
  readonly ordered: OptionRecord[];
  readonly members: Int32Array[];
  readonly position: ReadonlyMap<OptionRecord, number>;
};

/**
 * The answer `assemble` makes. Its getters are the class's, not an object literal's: V8 gives each
 * object made by a literal with accessors a hidden class of its own, in the old generation, pointing at
 * that object's getter closures. Every answer's rows and records were then reachable from the old
 * generation, and outlived every young collection until the next full one (a serve-like loop of dated
 * chains spent 39 % of its main thread collecting).
 */
class AssembledAnswer implements ScopeAnswer {
  constructor(
    readonly groups: readonly ExpirationGroup[],
    private readonly wholeChain: () => WholeChain,
    readonly recordsOf: ScopeAnswer['recordsOf'],
    readonly allFields: ScopeAnswer['allFields'],
    readonly columnsOf: ScopeAnswer['columnsOf'],
    private readonly sourceBytes: () => number | undefined,
    readonly fieldsOf: ScopeAnswer['fieldsOf'],
  ) {}

  get heldBytes(): number | undefined {
    return this.sourceBytes();
  }

  get records(): readonly OptionRecord[] {
    return this.wholeChain().ordered;
  }

  get members(): readonly Int32Array[] {
    return this.wholeChain().members;
  }
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

type GroupEntry = {
  readonly group: ExpirationGroup;
  /** The indices of the group's rows in the source. */
  readonly rows: number[];
  records?: OptionRecord[];
};

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
