/**
 * Pricing: implied volatility and Greeks of option quotes at their quote instant. Pure: no store, no
 * clock, no query; the caller supplies the spot, the years to expiration and the quotes.
 *
 * CONTRACT (names relied on elsewhere):
 *   computeSnapshotGreeks(input: SnapshotGreeksInput): SnapshotGreeks
 *       one underlying's snapshot, columnar: { spot, style, contracts: { strike[], side[], years[], bid[],
 *       ask[], expirationKey[] }, rate?, dividendYield?, quoteTime?, rounding? } → columns iv, ivBid, ivAsk,
 *       delta, gamma, theta, vega (number | null each) and `forwards` (per expiration key: the forward,
 *       from put–call parity or, without a quoted pair or with a stated dividend yield, the carried spot)
 *   contractGreeks(quote: ContractQuote): QuoteGreeks   // one contract, same rules, optional `forward`
 *   greekColumns(terms: OptionTerms, iv: number | null, price: number | null): GreekColumns
 *       European iv (given or implied from a price) and Greeks, rounded as the service prints them
 *   optionValuation(terms, vol, style?): Valuation       // value and Greeks at a volatility
 *   impliedVolatility(terms, price, style?): number | null
 *   blackScholes(terms, vol): Valuation                  // the European model alone
 *   DEFAULT_RATE = 0                                     // the rate when none is given (why: snapshot.ts)
 *
 * Units are the service's columns (semantics §3.1): iv a fraction, delta and gamma per $1 of the
 * underlying, theta per calendar day, vega per volatility point; `rounding: 'service'` (the default) rounds
 * to three decimals as the service prints them. Nulls, never made-up numbers: a price outside the
 * no-arbitrage bounds, a one-sided or crossed quote (no mid), non-finite or non-positive inputs, a solver
 * that does not converge.
 *
 * Models: European options (the index roots, `exerciseStyleOf` in market-time) are Black–Scholes–Merton on
 * the expiration's forward; American ones (equities, ETFs) are Bjerksund–Stensland (2002), which needs a
 * positive rate for early exercise of puts.
 */
export {
  americanValuation,
  americanValue,
  bjerksundStenslandCall,
  earlyExerciseCanPay,
  earlyExercisePremiumBound,
} from './american.js';
export {
  blackScholes,
  europeanValuation,
  europeanValue,
  type MutableValuation,
  type OptionTerms,
  type Valuation,
  yearsBetween,
} from './european.js';
export { americanImpliedVolatility, europeanImpliedVolatility } from './implied-volatility.js';
export { impliedVolatility, optionValuation } from './models.js';
export {
  bivariateNormalCdfWith,
  bivariateRule,
  inverseNormalCdf,
  normalCdf,
  normalDensity,
} from './normal.js';
export {
  type ContractQuote,
  computeSnapshotGreeks,
  contractGreeks,
  DEFAULT_RATE,
  type ExpirationForward,
  type GreekColumns,
  type GreekRounding,
  greekColumns,
  type QuoteGreeks,
  type RateInput,
  roundGreek,
  type SnapshotContracts,
  type SnapshotGreeks,
  type SnapshotGreeksInput,
} from './snapshot.js';
