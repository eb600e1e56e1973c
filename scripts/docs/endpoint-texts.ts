/**
 * The words of the endpoint pages in `docs/endpoints/`: what each parameter and field means, its default
 * and unit, and which requests the pages show. Everything else on a page — which parameters exist and
 * what they accept, the fields and their types, the known-at family of each option field, the credits,
 * the modes, the example responses — is read from the code and the sample store by `endpoint-pages.ts`,
 * which refuses these texts when they name a parameter or field the code does not have, or miss one it has.
 */

/** A parameter's meaning and, when it has one, its default. */
export type ParamText = { readonly meaning: string; readonly default?: string };

/** A field's unit and meaning; `knownAt` is required except for option rows (their family says it). */
export type FieldText = { readonly unit: string; readonly meaning: string; readonly knownAt?: string };

/** A request the page runs against the sample store: shown as an example, or run only for its fields. */
export type ExampleText = {
  readonly target: string;
  /** A heading for a shown example; none: a probe (its fields and credits count, it is not shown). */
  readonly title?: string;
  /** Which credit rule it illustrates, e.g. `current`, `historical (date)`. */
  readonly case?: string;
  /** Request headers, for the utilities. */
  readonly headers?: Readonly<Record<string, string>>;
};

/** One page. */
export type PageText = {
  readonly title: string;
  /** One line for the index. */
  readonly summary: string;
  /** The opening paragraph(s), markdown. */
  readonly intro: string;
  readonly path: Readonly<Record<string, string>>;
  readonly params: Readonly<Record<string, ParamText>>;
  readonly fields: Readonly<Record<string, FieldText>>;
  readonly examples: readonly ExampleText[];
  /** Anything else worth knowing (no-data answers, refusals), markdown. */
  readonly notes?: string;
};

const DATE_PARAM: ParamText = {
  meaning:
    'a past session D: D’s answer as it stood at its end of day (for options, D’s latest snapshot) instead of the current one. A date that is not before the clock’s Eastern date is a 400; a past date that was not a session, a 404 “Market closed on this date.”',
  default: 'none: the current answer at the clock T, in the request’s mode',
};

/** The option row of the chain and of option quotes; the known-at of each is its family's. */
const OPTION_FIELDS: Readonly<Record<string, FieldText>> = {
  optionSymbol: { unit: 'OCC symbol', meaning: 'the contract, e.g. `SPY200320P00240000`' },
  underlying: {
    unit: 'ticker',
    meaning: 'the underlying (index roots are filed under their index: SPXW under SPX)',
  },
  expiration: {
    unit: 'epoch seconds',
    meaning:
      'when the contract expires: 16:00 ET for equity options, 16:15 ET PM-settled index, 09:30 ET AM-settled index',
  },
  side: { unit: '`call` or `put`', meaning: 'the contract’s side' },
  strike: { unit: 'USD', meaning: 'the exercise price' },
  firstTraded: {
    unit: 'epoch seconds',
    meaning:
      '09:30 ET of the first session the contract traded: the source’s listing date, else its first snapshot in the store',
  },
  dte: {
    unit: 'calendar days',
    meaning: 'from the session of the snapshot served to the expiration date (0 on expiration day)',
  },
  updated: {
    unit: 'epoch seconds',
    meaning: 'the true quote time q of the snapshot served (16:00 ET for an end-of-day source)',
  },
  bid: { unit: 'USD per share', meaning: 'the bid' },
  bidSize: { unit: 'contracts', meaning: 'size at the bid' },
  mid: {
    unit: 'USD per share',
    meaning: '(bid + ask) / 2, rounded half-up to the cent on the exact decimal',
  },
  ask: { unit: 'USD per share', meaning: 'the ask' },
  askSize: { unit: 'contracts', meaning: 'size at the ask' },
  last: { unit: 'USD per share', meaning: 'the last trade price at the quote time; null without one' },
  openInterest: {
    unit: 'contracts',
    meaning:
      'open interest settled from the session before the snapshot’s (the figure published that morning)',
  },
  volume: {
    unit: 'contracts',
    meaning:
      'the session’s volume as of its own stamp; null in a current answer whose cutoff is before that stamp',
  },
  inTheMoney: { unit: 'boolean', meaning: 'call: underlyingPrice > strike; put: strike > underlyingPrice' },
  intrinsicValue: {
    unit: 'USD per share',
    meaning:
      'max(0, underlyingPrice − strike) for a call, max(0, strike − underlyingPrice) for a put, to the cent',
  },
  extrinsicValue: { unit: 'USD per share', meaning: '|mid − intrinsicValue|, to the cent' },
  underlyingPrice: { unit: 'USD', meaning: 'the underlying’s price at the quote time' },
  iv: {
    unit: 'fraction per year',
    meaning:
      'implied volatility (0.25 = 25%); current answers: the vendor’s where stored, else computed from the quote; historical (`date`): null',
  },
  delta: { unit: 'per $1 of the underlying', meaning: 'delta; null in historical answers, as `iv`' },
  gamma: { unit: 'per $1 of the underlying', meaning: 'gamma; null in historical answers, as `iv`' },
  theta: { unit: 'USD per calendar day', meaning: 'theta; null in historical answers, as `iv`' },
  vega: { unit: 'USD per volatility point', meaning: 'vega; null in historical answers, as `iv`' },
};

const BAR_KNOWN_AT =
  'the bar it comes from: a minute bar starting at t at t + 60 s, a daily bar at its session’s close';

const STOCK_QUOTE_FIELDS: Readonly<Record<string, FieldText>> = {
  symbol: { unit: 'ticker', meaning: 'the stock', knownAt: 'its first bar' },
  ask: { unit: 'USD', meaning: 'null: the store keeps bars, not quotes', knownAt: '—' },
  askSize: { unit: 'shares', meaning: 'null, as `ask`', knownAt: '—' },
  bid: { unit: 'USD', meaning: 'null, as `ask`', knownAt: '—' },
  bidSize: { unit: 'shares', meaning: 'null, as `ask`', knownAt: '—' },
  mid: { unit: 'USD', meaning: 'null, as `ask`', knownAt: '—' },
  last: { unit: 'USD', meaning: 'the close of the latest bar known', knownAt: BAR_KNOWN_AT },
  change: {
    unit: 'USD',
    meaning: '`last` minus the previous session’s close (split-adjusted), to 4 decimals; null without one',
    knownAt: 'as `last`',
  },
  changepct: {
    unit: 'fraction',
    meaning: '`change` over the previous close (0.03 = 3%), to 4 decimals',
    knownAt: 'as `last`',
  },
  volume: { unit: 'shares', meaning: 'the session’s volume so far', knownAt: 'as `last`' },
  updated: {
    unit: 'epoch seconds',
    meaning: 'when the latest bar became known (the end of its minute, or the close)',
    knownAt: 'itself',
  },
  '52weekHigh': {
    unit: 'USD',
    meaning:
      'with `52week=true`: the highest high of the session so far and the daily bars of the year before it',
    knownAt: 'as `last`; the earlier daily bars at their closes',
  },
  '52weekLow': {
    unit: 'USD',
    meaning: 'with `52week=true`: the lowest low, as `52weekHigh`',
    knownAt: 'as `52weekHigh`',
  },
  o: { unit: 'USD', meaning: 'with `candle=true`: the session’s open so far', knownAt: 'as `last`' },
  h: { unit: 'USD', meaning: 'with `candle=true`: the session’s high so far', knownAt: 'as `last`' },
  l: { unit: 'USD', meaning: 'with `candle=true`: the session’s low so far', knownAt: 'as `last`' },
  c: {
    unit: 'USD',
    meaning: 'with `candle=true`: the session’s close so far (= `last`)',
    knownAt: 'as `last`',
  },
};

const QUOTE_PARAMS: Readonly<Record<string, ParamText>> = {
  symbols: { meaning: 'the tickers, for the list form `/v1/stocks/quotes/?symbols=SPY,AAPL`' },
  '52week': {
    meaning: 'add `52weekHigh` and `52weekLow` (single-symbol requests only, as the service)',
    default: 'false',
  },
  extended: { meaning: 'count minute bars outside regular hours', default: 'true' },
  candle: { meaning: 'add the session’s `o`, `h`, `l`, `c` so far', default: 'false' },
};

const CANDLE_KNOWN_AT =
  'the candle’s end: a daily candle at its session’s close, a weekly/monthly/yearly one at the close of its last session, an N-minute one at min(t + N min, close); a candle still in progress is not served';

/** The pages, keyed by the service name of their endpoints (or the utility's path). */
export const ENDPOINT_TEXTS: Readonly<Record<string, PageText>> = {
  '/v1/options/chain/': {
    title: 'Option chain',
    summary: 'an underlying’s option chain, filtered by expiration, strike, delta, side, price and liquidity',
    intro:
      'The chain of an underlying as the service answers it at the clock T: the current chain in the request’s mode, or the historical chain of a past session with `date`. Expiration filters choose expiration groups first (standard contracts only unless `nonstandard=true`); strike, side, price and liquidity filters then run on the rows, and `strikeLimit` last. Rows come in the service’s order: expiration, calls before puts, strike.',
    path: {
      underlying:
        'the underlying ticker (`SPY`, `SPX`, `AAPL`); an option root such as `SPXW` asks for that root only',
    },
    params: {
      date: DATE_PARAM,
      expiration: {
        meaning: 'one expiration date, or `all`; wins over `dte`',
        default:
          'the front monthly expiration, unless `dte`, `from`, `to`, `month`, `year`, `weekly`, `monthly` or `quarterly` chooses',
      },
      dte: {
        meaning:
          'the one expiration closest to N calendar days from the session served (the earlier on a tie); with `from` or `to` a 400',
      },
      from: { meaning: 'expirations on or after this date' },
      to: { meaning: 'expirations on or before this date' },
      month: { meaning: 'expirations in this month' },
      year: { meaning: 'expirations in this year' },
      weekly: {
        meaning:
          'true: weekly expirations only; false: none of them. Mixing true and false among weekly, monthly and quarterly is a 400',
      },
      monthly: { meaning: 'true: monthly expirations only; false: none of them' },
      quarterly: { meaning: 'true: quarterly expirations only; false: none of them' },
      nonstandard: { meaning: 'include non-standard (adjusted) contracts', default: 'false' },
      am: {
        meaning: 'index options only (else a 400): true keeps AM-settled expirations, false drops them',
        default: 'both',
      },
      pm: {
        meaning: 'index options only (else a 400): true keeps PM-settled expirations, false drops them',
        default: 'both',
      },
      strike: { meaning: 'strikes matching any term; wins over `delta`' },
      delta: {
        meaning:
          'absolute delta: an exact term keeps the contract closest to it per expiration and side, an interval keeps those inside; skipped when any row has no delta (historical answers), as the service',
      },
      strikeLimit: {
        meaning:
          'per expiration and side, the N strikes nearest below the underlying price and the N nearest at or above it; applied last',
      },
      range: { meaning: 'in-the-money or out-of-the-money contracts only', default: '`all`' },
      side: { meaning: 'calls or puts only', default: 'both' },
      minBid: { meaning: 'bid ≥ this (a row without a bid is left out)' },
      maxBid: { meaning: 'bid ≤ this' },
      minAsk: { meaning: 'ask ≥ this' },
      maxAsk: { meaning: 'ask ≤ this' },
      maxBidAskSpread: { meaning: 'ask − bid ≤ this, in USD' },
      maxBidAskSpreadPct: {
        meaning: 'ask − bid ≤ this percentage of the underlying price (0.5 on a $200 stock: $1.00)',
      },
      minOpenInterest: { meaning: 'openInterest ≥ this' },
      minVolume: { meaning: 'volume ≥ this' },
    },
    fields: OPTION_FIELDS,
    examples: [
      {
        title: 'Current chain, live at 15:45 ET (the 15:45 snapshot)',
        target: '/v1/options/chain/SPY/?expiration=2020-03-20&side=put&strikeLimit=1',
        case: 'current (live, delayed, eod, historical)',
      },
      {
        title: 'Historical chain of the session before (`date`)',
        target: '/v1/options/chain/SPY/?date=2020-03-13&expiration=2020-03-20&side=put&strikeLimit=1',
        case: 'historical (`date`)',
      },
    ],
    notes:
      'A valid underlying whose filters match nothing is 404 `{"s":"no_data","nextTime":…,"prevTime":…}`; an underlying the store has never listed, 404 `{"s":"no_data","errmsg":"Symbol not found."}`. Combinations the service refuses (`dte` with `from`/`to`, mixed `weekly`/`monthly`/`quarterly`, `am`/`pm` on a stock) are 400 `Bad parameters. …`.',
  },

  '/v1/options/quotes/': {
    title: 'Option quotes',
    summary: 'one contract’s row: now, on a past session, or per session of a range',
    intro:
      'One contract’s row in the chain’s full field set and order: the current row at T, the end-of-day row of a past session (`date`), or one end-of-day row per session of a range (`from`/`to`/`countback`), each with historical semantics. A range serves only sessions before T’s Eastern date.',
    path: { optionSymbol: 'an OCC symbol (`SPY200320P00240000`); a malformed one is a 400' },
    params: {
      date: DATE_PARAM,
      from: { meaning: 'first session of a range (inclusive); not with `countback` or `date`' },
      to: { meaning: 'end of a range (exclusive)', default: 'T’s Eastern date' },
      countback: { meaning: 'the last N sessions before `to`; not with `from` or `date`' },
    },
    fields: OPTION_FIELDS,
    examples: [
      {
        title: 'Current quote, live at 15:45 ET',
        target: '/v1/options/quotes/SPY200320P00240000/',
        case: 'current (live, delayed, eod, historical)',
      },
      {
        title: 'The last two sessions’ end-of-day rows (`countback`)',
        target: '/v1/options/quotes/SPY200417P00240000/?countback=2',
        case: 'a range (`from`, `to`, `countback`)',
      },
      { target: '/v1/options/quotes/SPY200320P00240000/?date=2020-03-13', case: 'historical (`date`)' },
    ],
    notes:
      'A well-formed symbol the store does not know is 404 `No option found. …`; a known contract with no row in range, 404 no_data with `nextTime`/`prevTime`.',
  },

  '/v1/options/lookup/': {
    title: 'Option lookup',
    summary: 'the OCC symbol of a contract named in human text',
    intro:
      'The OCC symbol of a contract named in human text, when the store lists that contract at the as-of session. A root’s sibling serves the same underlying’s contract (`SPX 1/31/18 2700 call` gives the SPXW symbol when only the weekly root lists it).',
    path: {
      text: 'underlying, expiration date, strike and side separated by spaces, URL-encoded (`AAPL 7/28/23 $200 Call`); the slashes of the date may stay unencoded',
    },
    params: {},
    fields: {
      optionSymbol: {
        unit: 'OCC symbol',
        meaning: 'the contract',
        knownAt: 'the contract’s listing: 09:30 ET of its first traded date',
      },
    },
    examples: [
      {
        title: 'A put by its description',
        target: '/v1/options/lookup/SPY%203/20/20%20240%20put',
        case: 'any',
      },
    ],
    notes:
      'Text that does not describe a contract is a 400; a contract not listed at the session, 404 `No option found. …`.',
  },

  '/v1/options/expirations/': {
    title: 'Option expirations',
    summary: 'the expiration dates listed for an underlying',
    intro:
      'The expiration dates listed at the as-of session and not yet expired, standard contracts only unless `nonstandard=true`.',
    path: { underlying: 'the underlying ticker' },
    params: {
      date: DATE_PARAM,
      strike: { meaning: 'only expirations that list this strike' },
      nonstandard: { meaning: 'include non-standard (adjusted) contracts', default: 'false' },
    },
    fields: {
      expirations: {
        unit: 'date',
        meaning: 'the expiration dates, ascending',
        knownAt: 'the quote times of the snapshots they are read from (≤ `updated`)',
      },
      updated: {
        unit: 'epoch seconds',
        meaning: 'the quote time of the latest snapshot behind the answer',
        knownAt: 'itself',
      },
    },
    examples: [
      { title: 'Expirations listed at 15:45 ET', target: '/v1/options/expirations/SPY/', case: 'any' },
      { target: '/v1/options/expirations/SPY/?date=2020-03-13', case: 'any' },
    ],
  },

  '/v1/options/strikes/': {
    title: 'Option strikes',
    summary: 'the strikes listed per expiration date',
    intro:
      'The strikes listed at the as-of session, per expiration date (both sides, standard contracts): one key per `YYYY-MM-DD` after the scalar `updated`. The service no longer documents this endpoint but still answers it.',
    path: { underlying: 'the underlying ticker' },
    params: {
      date: DATE_PARAM,
      expiration: { meaning: 'one expiration date, or `all`', default: '`all`' },
    },
    fields: {
      updated: {
        unit: 'epoch seconds',
        meaning: 'the quote time of the latest snapshot behind the answer',
        knownAt: 'itself',
      },
      'YYYY-MM-DD': {
        unit: 'USD',
        meaning: 'one key per expiration date: its strikes, ascending',
        knownAt: 'the quote times of the snapshots they are read from (≤ `updated`)',
      },
    },
    examples: [
      {
        title: 'Strikes of one expiration at 15:45 ET',
        target: '/v1/options/strikes/SPY/?expiration=2020-03-18',
        case: 'any',
      },
    ],
  },

  '/v1/stocks/quotes/': {
    title: 'Stock quotes',
    summary: 'the latest price of one or several stocks, built from the bars known',
    intro:
      'A stock’s quote at the as-of, built from the bars known then: `last` is the close of the latest bar known and `updated` the instant it became known. The store keeps bars, not NBBO quotes, so `bid`, `ask`, their sizes and `mid` are null rather than made up. With several symbols the found ones are answered, and no_data only when none is.',
    path: { symbol: 'one ticker (the path form); the list form takes `symbols` instead' },
    params: {
      ...QUOTE_PARAMS,
      snapshot: { meaning: 'read, but it acts only on `/v1/stocks/bulkquotes/`', default: 'false' },
    },
    fields: STOCK_QUOTE_FIELDS,
    examples: [
      {
        title: 'One stock, delayed 15 minutes (a non-professional account’s cap)',
        target: '/v1/stocks/quotes/SPY/',
        case: 'any',
      },
      { title: 'Several stocks', target: '/v1/stocks/quotes/?symbols=SPY,AAPL', case: 'any' },
      { target: '/v1/stocks/quotes/SPY/?52week=true&candle=true', case: 'any' },
    ],
    notes: 'An unknown single symbol is 404 `Symbol not found.`.',
  },

  '/v1/stocks/bulkquotes/': {
    title: 'Stock bulk quotes',
    summary: 'the deprecated alias of list-form stock quotes, with `snapshot=true` for every symbol',
    intro:
      'The deprecated alias of `/v1/stocks/quotes/?symbols=…` that the service still answers (and some of its SDKs still call), with the same fields; `snapshot=true` asks for every symbol the store holds.',
    path: {},
    params: {
      ...QUOTE_PARAMS,
      symbols: { meaning: 'the tickers; may be left out with `snapshot=true`' },
      snapshot: { meaning: 'every stored symbol', default: 'false' },
    },
    fields: STOCK_QUOTE_FIELDS,
    examples: [
      { title: 'Every symbol of the store', target: '/v1/stocks/bulkquotes/?snapshot=true', case: 'any' },
      { target: '/v1/stocks/bulkquotes/?symbols=SPY&52week=true&candle=true', case: 'any' },
    ],
  },

  '/v1/stocks/prices/': {
    title: 'Stock prices',
    summary: 'the service’s “SmartMid” price of one or several stocks',
    intro:
      'The service’s “SmartMid” price. With bars only, `mid` is the latest price known at the as-of — the close of the latest bar known — and `change`, `changepct` and `updated` are those of the stock quote. Prices are real-time for every account.',
    path: { symbol: 'one ticker (the path form); the list form takes `symbols` instead' },
    params: {
      symbols: { meaning: 'the tickers, for the list form `/v1/stocks/prices/?symbols=SPY,AAPL`' },
      extended: { meaning: 'count minute bars outside regular hours', default: 'true' },
    },
    fields: {
      symbol: STOCK_QUOTE_FIELDS['symbol']!,
      mid: { unit: 'USD', meaning: 'the close of the latest bar known', knownAt: BAR_KNOWN_AT },
      change: STOCK_QUOTE_FIELDS['change']!,
      changepct: STOCK_QUOTE_FIELDS['changepct']!,
      updated: STOCK_QUOTE_FIELDS['updated']!,
    },
    examples: [
      { title: 'One stock, live at 15:45 ET', target: '/v1/stocks/prices/SPY/', case: 'any' },
      { title: 'Several stocks', target: '/v1/stocks/prices/?symbols=SPY,AAPL', case: 'any' },
    ],
  },

  '/v1/stocks/candles/': {
    title: 'Stock candles',
    summary: 'one stock’s candles of any resolution',
    intro:
      'Candles of any resolution, aggregated in Eastern time from the stored bars known at the as-of: minute and daily bars are stored, the rest is built from them. Daily and longer candles are stamped 00:00 ET of their first session, intraday ones at their start (aligned to 09:30 ET). Splits are applied once their ex-date has come by T. An intraday range of one year or more is a 413.',
    path: {
      resolution:
        'minutes (`1`, `5`, `15`, `minutely`), hours (`H`, `4H`, `hourly`), days (`D`, `2D`, `daily`), weeks (`W`, `weekly`), months (`M`, `monthly`), years (`Y`, `yearly`)',
      symbol: 'the ticker',
    },
    params: {
      date: { meaning: 'one past session’s candles (with `from`, `to` or `countback` a 400)' },
      from: { meaning: 'first candle (inclusive); a relative `-N unit` counts back from `to`' },
      to: { meaning: 'last candle (inclusive; a date covers its whole day)', default: 'T' },
      countback: { meaning: 'the N candles ending at `to`; not with `from`' },
      extended: {
        meaning: 'intraday: use minute bars outside regular hours, if the store holds any',
        default: 'false',
      },
      adjustsplits: {
        meaning: 'adjust prices and volumes for splits known at T',
        default: 'true daily and longer, false intraday',
      },
      adjustdividends: {
        meaning:
          'no dividends are stored, so a fully adjusted daily series equals the split-adjusted one; the service’s refusals are kept (daily `adjustsplits=false` without `adjustdividends=false`, intraday `true`: 400)',
        default: 'true daily and longer, false intraday',
      },
      exchange: { meaning: 'accepted and ignored (a legacy parameter of the service)' },
      country: { meaning: 'accepted and ignored (a legacy parameter of the service)' },
    },
    fields: {
      t: {
        unit: 'epoch seconds',
        meaning:
          'the candle’s start: 00:00 ET of its first session (daily and longer), its first minute (intraday)',
        knownAt: CANDLE_KNOWN_AT,
      },
      o: { unit: 'USD', meaning: 'open', knownAt: 'as `t`' },
      h: { unit: 'USD', meaning: 'high', knownAt: 'as `t`' },
      l: { unit: 'USD', meaning: 'low', knownAt: 'as `t`' },
      c: { unit: 'USD', meaning: 'close', knownAt: 'as `t`' },
      v: { unit: 'shares', meaning: 'volume', knownAt: 'as `t`' },
    },
    examples: [
      {
        title: 'Daily candles of a week',
        target: '/v1/stocks/candles/D/SPY/?from=2020-03-09&to=2020-03-13',
        case: 'any',
      },
      {
        title: 'The last three half-hour candles, delayed 15 minutes (a non-professional account’s cap)',
        target: '/v1/stocks/candles/30/SPY/?countback=3',
        case: 'any',
      },
    ],
    notes:
      'An unknown symbol is 404 `Symbol not found.`; a range without candles, 404 no_data with `nextTime`/`prevTime` among the known candles; a `date` that was not a session, 404 `Market closed on this date.`.',
  },

  '/v1/stocks/bulkcandles/': {
    title: 'Stock bulk candles',
    summary: 'one daily candle per symbol',
    intro:
      'One daily candle per symbol for one session. Without `date`, the most recent session with data known at the as-of among the requested symbols: during a session, with minute bars stored, the session in progress summarised from its minute bars known so far; with daily bars only, the last closed session. Symbols without a candle for that session are left out.',
    path: { resolution: 'daily only: `daily`, `D` or `1D`' },
    params: {
      date: DATE_PARAM,
      symbols: { meaning: 'the tickers; may be left out with `snapshot=true`' },
      snapshot: { meaning: 'every stored symbol', default: 'false' },
      adjustsplits: {
        meaning: 'adjust for splits known at T whose ex-date is after the session',
        default: 'true',
      },
      adjustdividends: {
        meaning:
          'as for candles: no dividends are stored; `adjustsplits=false` needs `adjustdividends=false`',
        default: 'true',
      },
    },
    fields: {
      symbol: { unit: 'ticker', meaning: 'the stock', knownAt: 'its first bar' },
      o: { unit: 'USD', meaning: 'the session’s open', knownAt: 'as `c`' },
      h: { unit: 'USD', meaning: 'the session’s high (so far)', knownAt: 'as `c`' },
      l: { unit: 'USD', meaning: 'the session’s low (so far)', knownAt: 'as `c`' },
      c: { unit: 'USD', meaning: 'the session’s close (so far)', knownAt: BAR_KNOWN_AT },
      v: { unit: 'shares', meaning: 'the session’s volume (so far)', knownAt: 'as `c`' },
      t: { unit: 'epoch seconds', meaning: '00:00 ET of the session', knownAt: 'as `c`' },
    },
    examples: [
      {
        title: 'The session in progress at 15:45 ET',
        target: '/v1/stocks/bulkcandles/D/?symbols=SPY,AAPL',
        case: 'current',
      },
      {
        title: 'A past session (`date`)',
        target: '/v1/stocks/bulkcandles/D/?symbols=SPY,AAPL&date=2020-03-13',
        case: 'historical (`date`)',
      },
    ],
  },

  '/v1/markets/status/': {
    title: 'Market status',
    summary: 'whether the US market is open on each day asked for',
    intro:
      'Whether the US market is open on each calendar day asked for: `open` for a session (early closes included), `closed` for weekends and holidays, null outside the calendar’s years. The exchange calendar is published years ahead, so the answer does not depend on the as-of. At most 100,000 days per request.',
    path: {},
    params: {
      country: {
        meaning: 'ISO 3166 two-letter code; only `US` has data (another code: no_data; anything else: 400)',
        default: '`US`',
      },
      date: { meaning: 'one day (not with `from`, `to` or `countback`)' },
      from: { meaning: 'first day (inclusive); a relative `-N unit` counts back from `to`' },
      to: { meaning: 'last day (inclusive)', default: 'T’s Eastern date' },
      countback: { meaning: 'the N calendar days ending at `to`; not with `from`' },
    },
    fields: {
      date: { unit: 'epoch seconds', meaning: '00:00 ET of the day', knownAt: 'in advance (the calendar)' },
      status: {
        unit: '`open`, `closed` or null',
        meaning: 'the market on that day',
        knownAt: 'in advance (the calendar)',
      },
    },
    examples: [
      {
        title: 'A Friday, a weekend and a Monday',
        target: '/v1/markets/status/?from=2020-03-13&to=2020-03-16',
        case: 'any',
      },
    ],
  },

  '/status/': {
    title: 'Service status',
    summary: 'whether each service is online (free, no token)',
    intro:
      'The status of each service the API answers, as the service’s SDKs read it before retrying. Free, and answered without a token. Every service of this store is online.',
    path: {},
    params: {},
    fields: {
      service: { unit: 'path prefix', meaning: 'the service, e.g. `/v1/options/chain/`', knownAt: '—' },
      status: { unit: '`online`', meaning: 'its status', knownAt: '—' },
      online: { unit: 'boolean', meaning: 'whether it is online', knownAt: '—' },
      uptimePct30d: { unit: 'fraction', meaning: 'uptime over 30 days', knownAt: '—' },
      uptimePct90d: { unit: 'fraction', meaning: 'uptime over 90 days', knownAt: '—' },
      updated: { unit: 'epoch seconds', meaning: 'the clock T', knownAt: '—' },
    },
    examples: [{ title: 'Status', target: '/status/' }],
  },

  '/headers/': {
    title: 'Request headers',
    summary: 'the request’s headers echoed back, the token redacted (free, no token)',
    intro:
      'The request’s headers echoed as one flat object with lower-case names, for comparing what a client sends with what it should; the `Authorization` value is redacted but for its last four characters. Free, and answered without a token.',
    path: {},
    params: {},
    fields: {
      '<header name>': {
        unit: 'string',
        meaning: 'each header received, under its lower-case name',
        knownAt: '—',
      },
    },
    examples: [
      {
        title: 'Headers of a client',
        target: '/headers/',
        headers: {
          Accept: 'application/json',
          Authorization: 'Bearer my-secret-token-1a2b',
          'User-Agent': 'marketdata-sdk-js/1.0.0',
        },
      },
    ],
  },

  '/user/': {
    title: 'User',
    summary: 'the account’s remaining credits and options data permission (free)',
    intro:
      'What the service’s SDKs ask at startup: the account’s credits and its options data permission (`realtime` for a non-professional account with OPRA, `delayed` without it, `historical` otherwise). Free; it needs a token when the server has an accounts file, and carries the rate-limit headers.',
    path: {},
    params: {},
    fields: {
      'x-ratelimit-requests-remaining': {
        unit: 'credits',
        meaning: 'left in the current window',
        knownAt: '—',
      },
      'x-ratelimit-requests-limit': { unit: 'credits', meaning: 'per window', knownAt: '—' },
      'x-options-data-permissions': {
        unit: '`realtime`, `delayed` or `historical`',
        meaning: 'the freshest options data the account may see',
        knownAt: '—',
      },
    },
    examples: [{ title: 'The local account (no accounts file)', target: '/user/' }],
  },
};

/** The universal parameters, in the service's words: the pipeline reads them before any endpoint. */
export const UNIVERSAL_TEXTS: Readonly<Record<string, { readonly type: string } & ParamText>> = {
  format: {
    type: '`json` | `csv`',
    meaning: 'the body’s format; CSV has a header row of the JSON keys (without `s`) and CRLF line ends',
    default: '`json`',
  },
  headers: { type: 'boolean', meaning: 'CSV only: whether to write the header row', default: 'true' },
  dateformat: {
    type: '`unix` | `timestamp` | `spreadsheet`',
    meaning:
      'how instants are written: epoch seconds, ISO-8601 with the Eastern offset (`2020-03-16T15:45:00-04:00`), or days since 1899-12-30 in Eastern wall time; dates become instants at 00:00 ET',
    default: 'instants as epoch seconds, dates as `YYYY-MM-DD`',
  },
  columns: {
    type: 'comma-separated field names',
    meaning:
      'only these fields, in this order (API or human names); `s` and the row key are dropped unless named',
    default: 'every field',
  },
  human: { type: 'boolean', meaning: 'human-readable keys (`Open Interest`), without `s`', default: 'false' },
  limit: { type: 'integer', meaning: 'at most this many rows', default: '' },
  offset: { type: 'integer', meaning: 'skip this many rows first', default: '0' },
  mode: {
    type: '`live` | `delayed` | `eod` | `historical` | `cached` (`cache`, `stale`)',
    meaning:
      'how fresh the data may be (see [point in time](../point-in-time.md#current-requests-and-modes)); capped by the account’s entitlement; free and trial accounts get `historical` and a 402 for any other',
    default: '`live` for paid accounts, `historical` for free and trial',
  },
  maxage: {
    type: 'duration (`30s`, `5min`, `1h`, `2d`) or instant',
    meaning: 'with `mode=cached`: the oldest cached snapshot accepted',
    default: 'any age',
  },
  maxAge: { type: 'as `maxage`', meaning: 'the old spelling of `maxage`' },
  feed: { type: 'as `mode`', meaning: 'the old name of `mode`' },
  token: { type: 'text', meaning: 'the API token, when not sent as `Authorization: Bearer <token>`' },
};
