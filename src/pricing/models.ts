/**
 * The models behind one contract's terms, by exercise style: its value and Greeks at a volatility, and the
 * volatility of a price. Thin wrappers that take {@link OptionTerms} over the positional functions the
 * batch uses.
 */
import type { ExerciseStyle } from '../market-time/index.js';
import { americanValuation } from './american.js';
import { europeanValuation, type MutableValuation, type OptionTerms, type Valuation } from './european.js';
import { americanImpliedVolatility, europeanImpliedVolatility } from './implied-volatility.js';

/** The value and Greeks at volatility `vol`: Black–Scholes–Merton, or Bjerksund–Stensland for `american`. */
export function optionValuation(
  terms: OptionTerms,
  vol: number,
  style: ExerciseStyle = 'european',
): Valuation {
  const out: MutableValuation = { price: 0, delta: 0, gamma: 0, theta: 0, vega: 0 };
  const { spot, strike, years, rate } = terms;
  const carry = rate - (terms.dividendYield ?? 0);
  const valuation = style === 'american' ? americanValuation : europeanValuation;
  valuation(terms.side === 'call', spot, strike, years, rate, carry, vol, out);
  return out;
}

/**
 * The volatility at which the model of `style` gives `price`, or null when none does: a price at or outside
 * the no-arbitrage bounds (at or below the exercise value, at or above the spot for a call or the
 * discounted strike for a put), degenerate terms, or no convergence.
 */
export function impliedVolatility(
  terms: OptionTerms,
  price: number,
  style: ExerciseStyle = 'european',
): number | null {
  const { spot, strike, years, rate } = terms;
  const carry = rate - (terms.dividendYield ?? 0);
  const isCall = terms.side === 'call';
  const vol =
    style === 'american'
      ? americanImpliedVolatility(isCall, spot, strike, years, rate, carry, price)
      : europeanImpliedVolatility(
          isCall,
          spot * Math.exp(carry * years),
          strike,
          years,
          Math.exp(-rate * years),
          price,
        );
  return vol > 0 && vol < Number.POSITIVE_INFINITY ? vol : null;
}
