/**
 * When each field of an answer became known (semantics §3): the option row's fields fall into four
 * families, each with its own known-at instant stored per row. This table is the one place that says
 * which field belongs to which family.
 */

/** The known-at families of an option row. */
export type KnownAtFamily = 'quote' | 'volume' | 'openInterest' | 'listing';

/**
 * Per option field, the family whose instant says when its value became known. Its keys are exactly the
 * fields of `OPTION_FIELDS` (`query/options/columns.ts`), which this layer cannot import: `columns.ts`
 * types it over those fields (a field missing here is a type error) and `test/pit/known-at.test.ts`
 * refuses, at type-check, a field here that is not one of them.
 */
export const OPTION_FIELD_KNOWN_AT = {
  optionSymbol: 'listing',
  underlying: 'listing',
  expiration: 'listing',
  side: 'listing',
  strike: 'listing',
  firstTraded: 'listing',
  dte: 'quote',
  updated: 'quote',
  bid: 'quote',
  bidSize: 'quote',
  mid: 'quote',
  ask: 'quote',
  askSize: 'quote',
  last: 'quote',
  openInterest: 'openInterest',
  volume: 'volume',
  inTheMoney: 'quote',
  intrinsicValue: 'quote',
  extrinsicValue: 'quote',
  underlyingPrice: 'quote',
  iv: 'quote',
  delta: 'quote',
  gamma: 'quote',
  theta: 'quote',
  vega: 'quote',
} as const satisfies Record<string, KnownAtFamily>;

/** The known-at instants (epoch seconds) of one option row, one per family; null where no value is served. */
export type OptionKnownAt = {
  /** The snapshot's quote time q. */
  readonly quoteTime: number;
  /** The volume's own stamp v (a 15:45 Cboe snapshot's volume is stamped at the close). */
  readonly volumeTime: number | null;
  /** When the open interest on the row was published (settled the session before). */
  readonly oiPublishedAt: number | null;
  /** When the contract was first listed (its first traded date, 09:30 ET). */
  readonly listedAt: number;
};

/**
 * Per known-at family, the instant of each row (null where the row serves no value of the family), and
 * the latest of them (null when none).
 */
export type KnownAtByFamily = { readonly [F in KnownAtFamily]: readonly (number | null)[] } & {
  readonly latest: { readonly [F in KnownAtFamily]: number | null };
};

/**
 * The known-at columns of option rows, one per family: every field of a family shares its column. Made
 * in one pass with each family's latest instant, which lets a judge keep a family known by T whole
 * (`JudgedColumn.latest`).
 */
export function knownAtByFamily(rows: readonly OptionKnownAt[]): KnownAtByFamily {
  const n = rows.length;
  const quote = new Array<number>(n);
  const volume = new Array<number | null>(n);
  const openInterest = new Array<number | null>(n);
  const listing = new Array<number>(n);
  let latestQuote: number | null = null;
  let latestVolume: number | null = null;
  let latestInterest: number | null = null;
  let latestListing: number | null = null;
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    quote[i] = row.quoteTime;
    volume[i] = row.volumeTime;
    openInterest[i] = row.oiPublishedAt;
    listing[i] = row.listedAt;
    latestQuote = later(latestQuote, row.quoteTime);
    latestVolume = later(latestVolume, row.volumeTime);
    latestInterest = later(latestInterest, row.oiPublishedAt);
    latestListing = later(latestListing, row.listedAt);
  }
  return {
    quote,
    volume,
    openInterest,
    listing,
    latest: {
      quote: latestQuote,
      volume: latestVolume,
      openInterest: latestInterest,
      listing: latestListing,
    },
  };
}

/**
 * The known-at columns of option rows made one per family already (an answer made from columns), with
 * each family's latest instant, as {@link knownAtByFamily} gives them.
 */
export function knownAtOfColumns(
  columns: {
    readonly [F in KnownAtFamily]: readonly (number | null)[];
  },
): KnownAtByFamily {
  const latestOf = (column: readonly (number | null)[]) => column.reduce<number | null>(later, null);
  return {
    ...columns,
    latest: {
      quote: latestOf(columns.quote),
      volume: latestOf(columns.volume),
      openInterest: latestOf(columns.openInterest),
      listing: latestOf(columns.listing),
    },
  };
}

function later(latest: number | null, instant: number | null): number | null {
  return instant !== null && (latest === null || instant > latest) ? instant : latest;
}
