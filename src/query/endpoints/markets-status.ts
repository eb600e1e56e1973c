/**
 * `GET /v1/markets/status/`: whether the US market is open on each calendar day asked for — `open` for a
 * session (early closes included), `closed` for weekends and holidays, null outside the calendar's years
 * (1990–2035). `date` (one day), or `from`/`to` (inclusive, every calendar day), or `countback` days
 * ending at `to`; `to` defaults to today and no parameter means today (Eastern date of the clock).
 * Relative inputs (`yesterday`, `-5 days` for `from` relative to `to`) are read against the clock.
 * `country`: only `US` has data; another two-letter code is no_data, anything else 400.
 * The exchange calendar is treated as known in advance (holidays are published years ahead), so the
 * answer does not depend on the as-of. At most 100,000 days per request.
 */
import { z } from 'zod';
import {
  type Clock,
  etDateOf,
  etMidnightSeconds,
  fixedClock,
  isSession,
  type ParsedDate,
  type RelativeDate,
  toEtDate,
} from '../../market-time/index.js';
import {
  countParam,
  dateOrRelativeParam,
  dayParam,
  parseParams,
  resolveDateParam,
  textParam,
} from '../params.js';
import type { Endpoint, EndpointContext, EndpointResult, FieldKind } from '../types.js';
import { badRequest, field } from './stocks-common.js';

/** The most days one request may list. */
const MAX_DAYS = 100_000;

/** The market status columns, with their human keys and kinds: the one list (the library's empty answers too). */
export const MARKET_STATUS_FIELDS = [
  ['date', 'Date', 'instant'],
  ['status', 'Status', 'string'],
] as const satisfies readonly (readonly [string, string, FieldKind])[];

function statusQuery(clock: Clock) {
  return z.object({
    country: textParam.optional(),
    date: dayParam(clock).optional(),
    from: dateOrRelativeParam(clock).optional(),
    to: dateOrRelativeParam(clock).optional(),
    countback: countParam.optional(),
  });
}

const DAY_MS = 86_400_000;

function shiftDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;
}

function dateOf(name: string, value: ParsedDate | RelativeDate, anchor: ParsedDate): string {
  const parsed = resolveDateParam(name, value, anchor);
  return etDateOf(parsed);
}

/** `open`, `closed`, or null outside the calendar. */
export function marketStatusOf(date: string): 'open' | 'closed' | null {
  try {
    return isSession(date) ? 'open' : 'closed';
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return null;
  }
}

/** Answers a market status request (see the module comment). */
export async function marketStatus(ctx: EndpointContext): Promise<EndpointResult> {
  const clock = fixedClock(ctx.nowSeconds);
  const query = parseParams(statusQuery(clock), ctx.query);
  const country = (query.country ?? 'US').trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(country)) {
    throw badRequest('Invalid parameter country: expected a two-letter ISO 3166 country code such as US.');
  }
  if (query.date !== undefined && (query.from ?? query.to ?? query.countback) !== undefined) {
    throw badRequest('The date parameter cannot be combined with from, to or countback.');
  }
  if (query.from !== undefined && query.countback !== undefined) {
    throw badRequest('The from and countback parameters cannot be used together.');
  }
  if (country !== 'US') return { kind: 'no_data' };
  const today = toEtDate(ctx.nowSeconds);
  let first: string;
  let last: string;
  if (query.date !== undefined) {
    first = last = query.date;
  } else {
    last = query.to === undefined ? today : dateOf('to', query.to, { kind: 'date', date: today });
    if (query.countback !== undefined) {
      if (query.countback > MAX_DAYS) throw badRequest(`Too many days: at most ${MAX_DAYS} per request.`);
      first = shiftDays(last, 1 - query.countback);
    } else {
      first = query.from === undefined ? last : dateOf('from', query.from, { kind: 'date', date: last });
    }
  }
  if (first > last) throw badRequest('The from date is after the to date.');
  const count = daysBetween(first, last);
  if (count > MAX_DAYS) throw badRequest(`Too many days: at most ${MAX_DAYS} per request.`);
  const days = Array.from({ length: count }, (_, i) => shiftDays(first, i));
  return {
    kind: 'ok',
    fields: [
      field(...MARKET_STATUS_FIELDS[0], days.map(etMidnightSeconds)),
      field(...MARKET_STATUS_FIELDS[1], days.map(marketStatusOf)),
    ],
    rowKey: 'date',
    billing: 'per-response',
    dataAsOfSeconds: null,
  };
}

/** The market status endpoint. */
export const marketStatusEndpoint = {
  service: '/v1/markets/status/',
  pattern: '/v1/markets/status/',
  family: 'none',
  cacheable: false,
  dated: false,
  schema: statusQuery,
  run: marketStatus,
} satisfies Endpoint;
