/**
 * The typed result of the library face: the service's columns under the service's field names, typed,
 * as the endpoint computed them (no JSON text, no rows → objects → columns detours), with the metadata a
 * backtest needs: the decision instant, the latest known-at instant served, the data version, the
 * credits the service would bill, and the look-ahead found.
 */
import { Bool, Float64, Table, Utf8, type Vector, vectorFromArray } from 'apache-arrow';
import { type KnownAtByFamily, knownAtByFamily, type OptionKnownAt } from '../pit/known-at.js';
import type { LookAheadField } from '../pit/policy.js';
import type { FieldKind, Mode } from '../query/types.js';

/** Columns: one array per field, all of one length. */
export type Columns = { readonly [field: string]: readonly unknown[] };

/** One row of some columns: each field's value type. */
export type RowOf<C extends Columns> = { -readonly [K in keyof C]: C[K][number] };

/** What a result says about how it was answered. */
export type ResultMeta = {
  /** The clock instant T the question was asked at (epoch seconds). */
  readonly asOf: number;
  /** The latest known-at instant of any value served (epoch seconds), null when nothing was served. */
  readonly dataAsOf: number | null;
  /** The data version (content hash) of the store that answered. */
  readonly dataVersion: string;
  /** The credits the service would bill for this request. */
  readonly credits: number;
  /** Values not known at T (always empty on the API face; see `store.at` for the backtest face). */
  readonly lookAhead: readonly LookAheadField[];
  /** The mode the request ran in after defaults and entitlements. */
  readonly mode: Mode;
  /** 200 for a fresh answer, 203 for one from the response cache. */
  readonly status: 200 | 203;
  /**
   * Present and true for a no-data answer (an empty result: the endpoint's columns, no rows), with the
   * service's message when it gives one and the nearest sessions with data where known.
   */
  readonly noData?: true;
  /** The no-data answer's message: `Symbol not found.`, `Market closed on this date.` */
  readonly errmsg?: string;
  readonly nextTime?: number | null;
  readonly prevTime?: number | null;
  /** `computed` when the IV and Greeks were computed from the quotes (`greeks: 'computed'`), not the vendor's. */
  readonly greeks?: 'computed';
  /** Values the service prints beside the arrays (expirations' `updated`, lookup's `optionSymbol`). */
  readonly scalars: Readonly<Record<string, unknown>>;
};

/**
 * When each row's values became known (epoch seconds), one column per known-at family of semantics §3:
 * `quoteTime` (bid, ask, sizes, mid, last, underlying price, Greeks, `updated`, `dte`), `volumeTime`,
 * `oiPublishedAt` and `listedAt`; null where the row serves no value of the family.
 */
export type KnownAtColumns = {
  readonly quoteTime: number[];
  readonly volumeTime: (number | null)[];
  readonly oiPublishedAt: (number | null)[];
  readonly listedAt: number[];
};

/**
 * Where a result's known-at instants come from: its option rows, or their columns per family when the
 * answer came with them (a current chain made from columns).
 */
export type KnownAtSource = readonly OptionKnownAt[] | KnownAtByFamily;

/** A typed answer: columns by the service's field names, rows on demand, Arrow on demand. */
export class QueryResult<C extends Columns = Columns> {
  /** The number of rows. */
  readonly length: number;
  private knownAtColumns: KnownAtColumns | undefined;

  constructor(
    /** The service's columns, in the service's key order. */
    readonly columns: C,
    readonly meta: ResultMeta,
    private readonly kinds: Readonly<Record<string, FieldKind>> = {},
    private readonly knownAtSource?: KnownAtSource,
  ) {
    const first = Object.values(columns)[0];
    this.length = first === undefined ? 0 : first.length;
  }

  /**
   * With computed Greeks, the implied volatilities of each row's bid and of its ask (null where none
   * solves), beside `iv` from the mid; undefined otherwise.
   */
  quoteIv(): { readonly ivBid: (number | null)[]; readonly ivAsk: (number | null)[] } | undefined {
    const source = this.knownAtSource;
    if (source === undefined || 'latest' in source || this.meta.greeks !== 'computed') return undefined;
    const rows = source as readonly { ivBid?: number | null; ivAsk?: number | null }[];
    return { ivBid: rows.map((row) => row.ivBid ?? null), ivAsk: rows.map((row) => row.ivAsk ?? null) };
  }

  /**
   * The known-at instants beside the values, for option rows (chain, option quotes); undefined for
   * other answers, whose values are all known by `meta.dataAsOf`.
   */
  knownAt(): KnownAtColumns | undefined {
    const source = this.knownAtSource;
    if (source === undefined) return undefined;
    if (this.knownAtColumns === undefined) {
      // The answer's own columns are copied: the response cache keeps the answer, and its judge reads them.
      const made = 'latest' in source ? undefined : knownAtByFamily(source);
      const families = made ?? (source as KnownAtByFamily);
      const own = <T>(column: readonly T[]): T[] => (made === undefined ? column.slice() : (column as T[]));
      this.knownAtColumns = {
        quoteTime: own(families.quote) as number[],
        volumeTime: own(families.volume),
        oiPublishedAt: own(families.openInterest),
        listedAt: own(families.listing) as number[],
      };
    }
    return this.knownAtColumns;
  }

  /** The rows as objects, keys in the service's order. */
  rows(): RowOf<C>[] {
    const keys = Object.keys(this.columns);
    const out = new Array<RowOf<C>>(this.length);
    for (let i = 0; i < this.length; i++) {
      const row: Record<string, unknown> = {};
      for (const key of keys) row[key] = this.columns[key]![i];
      out[i] = row as RowOf<C>;
    }
    return out;
  }

  /**
   * The columns as an apache-arrow Table: text as Utf8, booleans as Bool, every number (instants as
   * epoch seconds, dates as `YYYY-MM-DD` text) as Float64, nulls kept.
   */
  toArrow(): Table {
    const vectors: Record<string, Vector> = {};
    for (const [key, values] of Object.entries(this.columns)) {
      const kind = this.kinds[key] ?? guessKind(values);
      const type =
        kind === 'string' || kind === 'date' ? new Utf8() : kind === 'boolean' ? new Bool() : new Float64();
      vectors[key] = vectorFromArray(values as unknown[], type as never) as Vector;
    }
    return new Table(vectors);
  }
}

function guessKind(values: readonly unknown[]): FieldKind {
  const sample = values.find((value) => value !== null && value !== undefined);
  return typeof sample === 'string' ? 'string' : typeof sample === 'boolean' ? 'boolean' : 'number';
}
