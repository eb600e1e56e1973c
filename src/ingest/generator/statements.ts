/**
 * The set-based half of the generator: SQL over the small work tables that the JS half fills (sessions,
 * daily bars, underlying state, expirations, contracts). Every random draw is a hash of the seed and the
 * row's keys, so the output is the same whatever DuckDB's thread count or row order.
 */
import { quoteIdentifier } from '../../store/sql.js';

/** Work tables, all temporary and prefixed so that they never meet the caller's tables. */
export const WORK = {
  sessions: '_gen_sessions',
  days: '_gen_days',
  udays: '_gen_udays',
  underlyings: '_gen_underlyings',
  expirations: '_gen_expirations',
  contracts: '_gen_contracts',
  walk: '_gen_walk',
  path: '_gen_path',
  snap: '_gen_snap',
  es: '_gen_es',
  rows: '_gen_rows',
  cs: '_gen_cs',
} as const;

/** Column definitions of the tables the JS half appends to (types it can append cheaply). */
export const WORK_TABLES: Record<
  'sessions' | 'days' | 'udays' | 'underlyings' | 'expirations' | 'contracts',
  string
> = {
  sessions:
    'sid INTEGER, session_date DATE, day INTEGER, midnight_ts DOUBLE, open_ts DOUBLE, next_open_ts DOUBLE, eod_ts DOUBLE, snap_ts DOUBLE, minutes INTEGER',
  days: 'pid INTEGER, sid INTEGER, o DOUBLE, h DOUBLE, l DOUBLE, c DOUBLE, v BIGINT, th INTEGER, tl INTEGER',
  udays:
    'uid INTEGER, sid INTEGER, pid INTEGER, symbol VARCHAR, emit BOOLEAN, factor DOUBLE, close DOUBLE, prev_close DOUBLE, prev_var DOUBLE, share_1545 DOUBLE',
  underlyings:
    'uid INTEGER, symbol VARCHAR, rate DOUBLE, div DOUBLE, theta DOUBLE, skew DOUBLE, curv DOUBLE, tick_lo INTEGER, tick_hi INTEGER, spread_abs DOUBLE, spread_rel DOUBLE, volume_base DOUBLE, size_top INTEGER',
  expirations:
    'eid INTEGER, uid INTEGER, exp_day INTEGER, exp_ts DOUBLE, kind_mult DOUBLE, first_sid INTEGER, last_sid INTEGER',
  contracts:
    'kid INTEGER, cid INTEGER, eid INTEGER, call_symbol VARCHAR, put_symbol VARCHAR, strike DOUBLE, ln_k DOUBLE, first_sid INTEGER, last_sid INTEGER, list_day INTEGER, level_c DOUBLE, level_p DOUBLE, oi_mult INTEGER, open_end BOOLEAN',
};

const T = WORK;

/** A number literal typed DOUBLE (DuckDB reads `0.06` as a DECIMAL, whose products can overflow). */
const num = (value: number) => `${value}::DOUBLE`;

/** Uniform in (0, 1) from 16 bits `k` (0..3) of a 64-bit hash. */
const u = (h: string, k: number) => `((((${h}) >> ${16 * k}) & 65535)::DOUBLE + 0.5) / 65536.0`;

/** Approximately standard normal from the four 16-bit uniforms of one hash (Irwin–Hall, n = 4). */
const normal4 = (h: string) =>
  `((${u(h, 0)} + ${u(h, 1)} + ${u(h, 2)} + ${u(h, 3)} - 2.0) * 1.7320508075688772)`;

/** Abramowitz–Stegun 26.2.17 tail polynomial in t = 1/(1 + 0.2316419|x|) (|error| < 7.5e-8 on N(x)). */
const poly = (t: string) =>
  `(${t} * (0.319381530 + ${t} * (-0.356563782 + ${t} * (1.781477937 + ${t} * (-1.821255978 + ${t} * 1.330274429)))))`;

/** A non-negative price rounded to cents (cheaper than DuckDB's round(x, 2)). */
const cents = (x: string) => `(floor((${x}) * 100 + 0.5) / 100)`;

/** Random-walk increments (integers, so running sums are exact) at each minute boundary of each day. */
export function walkSql(): string {
  return `CREATE TEMP TABLE ${T.walk} AS
SELECT pid, sid, k, (sum(z) OVER (PARTITION BY pid, sid ORDER BY k ROWS UNBOUNDED PRECEDING))::BIGINT AS w
FROM (
  SELECT pid, sid, k,
    CASE WHEN k = 0 THEN 0 ELSE round(${normal4('hash($seed, 11, pid, sid, k)')} * 1e6)::BIGINT END AS z
  FROM (SELECT d.pid, d.sid, unnest(range(0, s.minutes + 1)) AS k
        FROM ${T.days} d JOIN ${T.sessions} s USING (sid)))`;
}

/**
 * The intraday price at every minute boundary: Brownian bridges pinned at the open (k = 0), the day's
 * high and low (at minutes th and tl) and the close (k = n), clipped to [low, high] and rounded to cents
 * between the pins, so the minute bars reproduce the daily bar exactly.
 */
export function pathSql(): string {
  return `CREATE TEMP TABLE ${T.path} AS
WITH a AS (
  SELECT w.pid, w.sid, w.k, w.w, d.o, d.h, d.l, d.c, s.minutes AS n,
    least(d.th, d.tl) AS t1, greatest(d.th, d.tl) AS t2,
    CASE WHEN d.th < d.tl THEN d.h ELSE d.l END AS v1,
    CASE WHEN d.th < d.tl THEN d.l ELSE d.h END AS v2,
    0.8e-6 * (d.h - d.l) / sqrt(s.minutes) AS scale
  FROM ${T.walk} w JOIN ${T.days} d USING (pid, sid) JOIN ${T.sessions} s USING (sid)
), b AS (
  SELECT *,
    max(CASE WHEN k = t1 THEN w END) OVER p AS w1,
    max(CASE WHEN k = t2 THEN w END) OVER p AS w2,
    max(CASE WHEN k = n THEN w END) OVER p AS wn
  FROM a WINDOW p AS (PARTITION BY pid, sid)
)
SELECT pid, sid, k, n, h, l, scale, CASE
  WHEN k = 0 THEN o WHEN k = n THEN c WHEN k = t1 THEN v1 WHEN k = t2 THEN v2
  ELSE least(h, greatest(l, ${cents(`CASE
    WHEN k < t1 THEN o + (v1 - o) * k / t1 + scale * (w - k / t1 * w1)
    WHEN k < t2 THEN v1 + (v2 - v1) * (k - t1) / (t2 - t1) + scale * ((w - w1) - (k - t1) / (t2 - t1) * (w2 - w1))
    ELSE v2 + (c - v2) * (k - t2) / (n - t2) + scale * ((w - w2) - (k - t2) / (n - t2) * (wn - w2)) END`)}))
  END AS p
FROM b`;
}

/** Daily bars of the equity underlyings ('D', t = 00:00 ET of the session). */
export function dailyBarsSql(table: string): string {
  return `INSERT INTO ${quoteIdentifier(table)} (symbol, resolution, session_date, t, o, h, l, c, v)
SELECT u.symbol, 'D', s.session_date, to_timestamp(s.midnight_ts),
  (d.o * u.factor)::DECIMAL(14,4), (d.h * u.factor)::DECIMAL(14,4), (d.l * u.factor)::DECIMAL(14,4),
  (d.c * u.factor)::DECIMAL(14,4), d.v
FROM ${T.udays} u JOIN ${T.days} d USING (pid, sid) JOIN ${T.sessions} s USING (sid)
WHERE u.emit`;
}

/**
 * One-minute bars of the equity underlyings (regular session): open and close are consecutive path
 * points, high and low add a small excursion inside the day's range, and the day's volume is split by
 * an intraday U-shaped profile with exact integer arithmetic so the minutes sum to the daily volume.
 */
export function minuteBarsSql(table: string): string {
  return `INSERT INTO ${quoteIdentifier(table)} (symbol, resolution, session_date, t, o, h, l, c, v)
WITH bars AS (
  SELECT pid, sid, k AS i, n, h AS day_h, l AS day_l, scale, p AS o, lead(p) OVER (PARTITION BY pid, sid ORDER BY k) AS c,
    hash($seed, 13, pid, sid, k) AS hh
  FROM ${T.path}
), shaped AS (
  SELECT *, 1 + floor(1000 * (1 + 2 * exp(-i / 20) + 1.5 * exp(-(n - 1 - i) / 15)) * (0.5 + ${u('hh', 2)}))::BIGINT AS wt
  FROM bars WHERE i < n
), cum AS (
  SELECT *, (sum(wt) OVER (PARTITION BY pid, sid ORDER BY i ROWS UNBOUNDED PRECEDING))::BIGINT AS cw,
    (sum(wt) OVER (PARTITION BY pid, sid))::BIGINT AS tw
  FROM shaped
)
SELECT u.symbol, '1', s.session_date, to_timestamp(s.open_ts + 60 * b.i),
  (b.o * u.factor)::DECIMAL(14,4),
  (least(b.day_h, greatest(b.o, b.c) + ${cents(`0.3e6 * b.scale * ${u('b.hh', 0)}`)}) * u.factor)::DECIMAL(14,4),
  (greatest(b.day_l, least(b.o, b.c) - ${cents(`0.3e6 * b.scale * ${u('b.hh', 1)}`)}) * u.factor)::DECIMAL(14,4),
  (b.c * u.factor)::DECIMAL(14,4),
  (d.v * b.cw) // b.tw - (d.v * (b.cw - b.wt)) // b.tw
FROM cum b JOIN ${T.udays} u USING (pid, sid) JOIN ${T.days} d USING (pid, sid) JOIN ${T.sessions} s USING (sid)
WHERE u.emit`;
}

/**
 * The underlying at each snapshot (snap 1 = EOD at 16:00 ET, snap 0 = 15:45 ET or 12:45 on early
 * closes) with its at-the-money volatility now: the EWMA variance through the previous session updated
 * with the return so far, blended with the long-run level (model.ts: volatilityNow).
 */
export function snapSql(
  intraday: boolean,
  constants: { decay: number; weight: number; premium: number },
): string {
  const intradayRows = intraday
    ? `UNION ALL
  SELECT u.uid, u.sid, 0 AS snap, s.snap_ts AS q_ts, p.p * u.factor AS spot, u.prev_close, u.prev_var
  FROM ${T.udays} u JOIN ${T.sessions} s USING (sid) JOIN ${T.path} p ON p.pid = u.pid AND p.sid = u.sid AND p.k = s.minutes - 15`
    : '';
  const { premium, weight, decay } = constants;
  return `CREATE TEMP TABLE ${T.snap} AS
SELECT r.uid, r.sid, r.snap, r.q_ts, r.spot,
  ${num(premium)} * sqrt(${num(weight)} * (${num(decay)} * r.prev_var + ${num(1 - decay)} * 252 * ln(r.spot / r.prev_close) * ln(r.spot / r.prev_close))
    + ${num(1 - weight)} * g.theta * g.theta) AS sig_now
FROM (
  SELECT u.uid, u.sid, 1 AS snap, s.eod_ts AS q_ts, u.close AS spot, u.prev_close, u.prev_var
  FROM ${T.udays} u JOIN ${T.sessions} s USING (sid)
  ${intradayRows}
) r JOIN ${T.underlyings} g USING (uid)`;
}

const EOD = 1;

/**
 * Everything that depends only on the expiration and the snapshot (time to expiry, forward, at-the-money
 * volatility, discounting, liquidity and open-interest scales), so the per-contract statements do little
 * more than arithmetic. Volume is a property of the session decided from its EOD state, so every
 * snapshot row also carries the EOD row's inputs (`v_*`), and the previous session's day (`p_*`).
 */
export function expirationSnapshotsSql(kappa: number): string {
  const atm = `sqrt(theta * theta + (sig_now * sig_now - theta * theta) * (1 - exp(-${num(kappa)} * greatest(t, 1e-9))) / (${num(kappa)} * greatest(t, 1e-9)))`;
  return `CREATE TEMP TABLE ${T.es} AS
WITH b AS (
  SELECT x.eid, x.first_sid, s.sid, s.snap, s.q_ts, s.spot, s.sig_now, x.kind_mult, x.exp_day, x.exp_day - se.day AS dte, se.day,
    (x.exp_ts - s.q_ts) / 31536000.0 AS t, g.symbol AS underlying, se.session_date, se.open_ts, se.next_open_ts,
    g.rate, g.div, g.theta, g.skew, g.curv, g.tick_lo, g.tick_hi, g.spread_abs, g.spread_rel, g.size_top, g.volume_base,
    u.share_1545
  FROM ${T.expirations} x JOIN ${T.snap} s ON s.uid = x.uid AND s.sid BETWEEN x.first_sid - 1 AND x.last_sid
    JOIN ${T.sessions} se ON se.sid = s.sid JOIN ${T.underlyings} g ON g.uid = x.uid
    JOIN ${T.udays} u ON u.uid = x.uid AND u.sid = s.sid
), c AS (
  SELECT *, sqrt(greatest(t, 1e-10)) AS sqt, ${atm} AS atm FROM b
), d AS (
  SELECT eid, first_sid, sid, snap, q_ts, spot, exp_day, dte, t, sqt, atm, atm * sqt AS atm_sqt, underlying, session_date,
    open_ts, next_open_ts, day, share_1545,
    ln(spot) + (rate - div) * t AS ln_fwd, spot * exp((rate - div) * t) AS fwd, exp(-rate * t) AS disc,
    exp(-div * t) AS dq, rate, div, skew, curv, tick_lo, tick_hi, spread_abs, spread_rel, size_top,
    1 + 1.5 / sqrt(dte + 1) AS spread_dte,
    volume_base * kind_mult * (1 + 3 * exp(-dte / 7)) * sqrt(sig_now / theta) AS lam,
    5 * volume_base * kind_mult AS oi_scale
  FROM c
)
SELECT d.*, v.ln_fwd AS v_ln_fwd, v.atm_sqt AS v_atm_sqt, v.lam AS v_lam, p.day AS p_day, p.session_date AS p_session_date
FROM d JOIN d v ON v.eid = d.eid AND v.sid = d.sid AND v.snap = ${EOD}
  JOIN d p ON p.eid = d.eid AND p.sid = d.sid - 1 AND p.snap = ${EOD}
WHERE d.sid >= d.first_sid`;
}

/**
 * One row per contract pair (call and put of a strike) and quoted session. Materialised because DuckDB
 * parallelises a pipeline by the row groups of its source: expanding the small contracts table inline
 * would run on one thread.
 */
export function contractRowsSql(): string {
  return `CREATE TEMP TABLE ${T.rows} AS SELECT kid, unnest(range(first_sid, last_sid + 1)) AS sid FROM ${T.contracts}`;
}

/**
 * Open interest (in the row's units) of one side settled from the session on `day`: zero before
 * listing, then the contract's level (larger for strikes near the money when listed) built up linearly
 * over the first three weeks, trimmed by closing trades over the last five days to expiry, with a small
 * wobble that changes once a week (16 bits of that week's hash, `bits` 1 for calls and 2 for puts). It
 * stays unchanged on most days, so the volume of a contract far from the money is often zero.
 */
const openInterest = (level: string, day: string, weekHash: string, bits: number) =>
  `CASE WHEN ${day} < list_day THEN 0 ELSE floor(${level} * oi_scale * least(1.0, (${day} - list_day + 1) / 15.0)
    * least(1.0, 0.6 + 0.08 * (exp_day - ${day})) * (0.98 + 0.04 * ${u(weekHash, bits)}) / oi_mult)::BIGINT END`;

/**
 * Per contract pair and session, decided from the session's EOD state: each side's open interest settled
 * from the previous session (and from this one when the contract outlives the range) and its volume —
 * the open-interest change plus trading that did not change it (exponential, heavier near the money and
 * near expiry). A figure for session D is the same number whether computed from D's row or D+1's, so open
 * interest never goes negative and moves by at most the session's volume.
 */
export function contractSessionsSql(): string {
  return `CREATE TEMP TABLE ${T.cs} AS
WITH a AS (
  SELECT r.kid, r.sid, c.cid, c.ln_k, c.list_day, c.level_c, c.level_p, c.oi_mult, c.open_end AND r.sid = c.last_sid AS tail,
    e.oi_scale, e.exp_day, e.day, e.p_day, e.v_lam, e.share_1545,
    greatest(-6.0, least(6.0, (c.ln_k - e.v_ln_fwd) / e.v_atm_sqt)) AS x_vol,
    hash($seed, 17, c.cid, e.day) AS hcn, hash($seed, 18, c.cid, e.day) AS hpn,
    hash($seed, 21, c.cid, e.day // 7) AS hw, hash($seed, 21, c.cid, e.p_day // 7) AS hwp
  FROM ${T.rows} r JOIN ${T.contracts} c ON c.kid = r.kid JOIN ${T.es} e ON e.eid = c.eid AND e.sid = r.sid AND e.snap = ${EOD}
), b AS (
  SELECT kid, sid, tail, hcn, hpn, share_1545,
    ${openInterest('level_c', 'p_day', 'hwp', 1)} AS oi_prev_c, ${openInterest('level_c', 'day', 'hw', 1)} AS oi_now_c,
    ${openInterest('level_p', 'p_day', 'hwp', 2)} AS oi_prev_p, ${openInterest('level_p', 'day', 'hw', 2)} AS oi_now_p,
    v_lam * exp(-0.5 * x_vol * x_vol) AS lam
  FROM a
), c AS (
  SELECT *, abs(oi_now_c - oi_prev_c) + floor(-lam * ln(${u('hcn', 0)}))::BIGINT AS vol_c,
    abs(oi_now_p - oi_prev_p) + floor(-1.2 * lam * ln(${u('hpn', 0)}))::BIGINT AS vol_p
  FROM b
)
SELECT kid, sid, tail, oi_prev_c, oi_prev_p, CASE WHEN tail THEN oi_now_c END AS oi_tail_c,
  CASE WHEN tail THEN oi_now_p END AS oi_tail_p, vol_c, vol_p,
  floor(vol_c * share_1545)::BIGINT AS vol_1545_c, floor(vol_p * share_1545)::BIGINT AS vol_1545_p
FROM c`;
}

/**
 * Open interest by settled session, published at 09:30 ET of the next session: each quoted session D
 * carries the figure settled from D−1 (0 for a contract listed on D); a contract still alive at the end
 * of the range also gets the row settled from its last session. Contracts adjusted for a split show
 * their open interest in post-split units from the ex-date (×ratio).
 */
export function openInterestSql(table: string): string {
  return `INSERT INTO ${quoteIdentifier(table)} (underlying, option_symbol, settled_session, published_at, open_interest)
WITH a AS (
  SELECT s.tail, s.oi_prev_c, s.oi_prev_p, s.oi_tail_c, s.oi_tail_p, c.call_symbol, c.put_symbol,
    e.underlying, e.p_session_date, e.open_ts, e.session_date, e.next_open_ts
  FROM ${T.cs} s JOIN ${T.contracts} c ON c.kid = s.kid JOIN ${T.es} e ON e.eid = c.eid AND e.sid = s.sid AND e.snap = ${EOD}
), b AS (
  SELECT *, unnest(CASE WHEN tail THEN [0, 1, 2, 3] ELSE [0, 1] END) AS k FROM a
)
SELECT underlying, CASE WHEN k % 2 = 0 THEN call_symbol ELSE put_symbol END,
  CASE WHEN k >= 2 THEN session_date ELSE p_session_date END,
  to_timestamp(CASE WHEN k >= 2 THEN next_open_ts ELSE open_ts END),
  CASE k WHEN 0 THEN oi_prev_c WHEN 1 THEN oi_prev_p WHEN 2 THEN oi_tail_c ELSE oi_tail_p END
FROM b`;
}

/** Displayed sizes are drawn from these round lots (as quoted sizes mostly are). */
export const SIZES = [
  1, 2, 3, 5, 8, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 250, 300, 400, 500, 750, 1000, 1500, 2000,
  2500, 5000,
];
const SIZE_LADDER = `[${SIZES.join(', ')}]`;

/** Which vendor columns to fill. */
export type GreeksMode = 'all' | 'iv' | 'none';

/**
 * The option snapshots. Black–Scholes with a continuous dividend yield is evaluated once per strike (the
 * put follows from the same normal-CDF values), on the snapshot's underlying price and the smile and
 * term-structure volatility; then per side: a noisy mid inside a spread that widens away from the money
 * and near expiry, tick-rounded quotes (never crossed, bid ≥ 0, 0/0 when worthless), sizes, last (null
 * without a trade that day), volume and the vendor greeks (theta per calendar day, vega per vol point).
 */
export function quotesSql(
  table: string,
  options: { snaps: readonly number[]; intradayMaxDte: number | null; greeks: GreeksMode },
): string {
  const snapFilter = `e.snap IN (${options.snaps.join(', ')})${
    options.intradayMaxDte === null ? '' : ` AND (e.snap = ${EOD} OR e.dte <= ${options.intradayMaxDte})`
  }`;
  const fixed = (expr: string) => `greatest(-9999.0, least(9999.0, ${expr}))::DECIMAL(10,4)`;
  const all = options.greeks === 'all';
  const greek = (expr: string) => (all ? fixed(expr) : 'NULL');
  const greeksPair = all
    ? `,
    CASE WHEN t <= 0 THEN 0.0 ELSE dq * pdf1 / (spot * vsq) END AS gamma,
    CASE WHEN t <= 0 THEN 0.0 ELSE spot * dq * pdf1 * sqt / 100 END AS vega,
    CASE WHEN t <= 0 THEN 0.0 ELSE (-spot * dq * pdf1 * sig / (2 * sqt) - rate * strike * disc * n2 + div * spot * dq * n1) / 365 END AS theta_c,
    CASE WHEN t <= 0 THEN 0.0 ELSE (rate * strike * disc - div * spot * dq) / 365 END AS theta_carry`
    : '';
  return `INSERT INTO ${quoteIdentifier(table)} (underlying, option_symbol, session_date, quote_time, bid, ask, bid_size, ask_size,
  last, volume, volume_time, underlying_price, iv, delta, gamma, theta, vega)
WITH a AS (
  SELECT s.sid, CASE WHEN e.snap = ${EOD} THEN s.vol_c ELSE s.vol_1545_c END AS vol_c,
    CASE WHEN e.snap = ${EOD} THEN s.vol_p ELSE s.vol_1545_p END AS vol_p,
    c.cid, c.call_symbol, c.put_symbol, c.strike, e.underlying, e.session_date, e.q_ts, e.snap, e.spot, e.t, e.sqt, e.fwd,
    e.disc, e.dq, e.rate, e.div, e.atm, e.skew, e.curv, e.tick_lo, e.tick_hi, e.spread_abs, e.spread_rel, e.spread_dte,
    e.size_top, c.ln_k - e.ln_fwd AS lnm, greatest(-4.0, least(4.0, (c.ln_k - e.ln_fwd) / e.atm_sqt)) AS z
  FROM ${T.cs} s JOIN ${T.contracts} c ON c.kid = s.kid JOIN ${T.es} e ON e.eid = c.eid AND e.sid = s.sid AND ${snapFilter}
), l1 AS (
  SELECT *, atm * greatest(0.5, 1 + skew * z + curv * z * z) AS sig FROM a
), l2 AS (
  SELECT *, sig * sqt AS vsq, (0.5 * sig * sig * sqt * sqt - lnm) / (sig * sqt) AS d1 FROM l1
), l3 AS (
  SELECT *, d1 - vsq AS d2, 0.3989422804014327 * exp(-0.5 * d1 * d1) AS pdf1 FROM l2
), l4 AS (
  SELECT *, pdf1 * fwd / strike AS pdf2, 1 / (1 + 0.2316419 * abs(d1)) AS ta, 1 / (1 + 0.2316419 * abs(d2)) AS tb
  FROM l3
), l5 AS (
  SELECT *,
    CASE WHEN d1 >= 0 THEN 1 - pdf1 * ${poly('ta')} ELSE pdf1 * ${poly('ta')} END AS n1,
    CASE WHEN d2 >= 0 THEN 1 - pdf2 * ${poly('tb')} ELSE pdf2 * ${poly('tb')} END AS n2
  FROM l4
), l6 AS (
  SELECT *,
    CASE WHEN t <= 0 THEN greatest(0.0, spot - strike) ELSE greatest(0.0, disc * (fwd * n1 - strike * n2)) END AS call,
    CASE WHEN t <= 0 THEN greatest(0.0, strike - spot) ELSE greatest(0.0, disc * (strike * (1 - n2) - fwd * (1 - n1))) END AS put,
    CASE WHEN t <= 0 THEN CASE WHEN spot > strike THEN 1.0 ELSE 0.0 END ELSE dq * n1 END AS delta_c${greeksPair}
  FROM l5
), s AS (
  SELECT *, CASE WHEN is_call THEN call ELSE put END AS model, hash($seed, 19, cid, is_call, sid, snap) AS h
  FROM l6 CROSS JOIN (VALUES (true), (false)) sides(is_call)
), l7 AS (
  SELECT *, CASE WHEN model < 3 THEN tick_lo ELSE tick_hi END AS tick,
    greatest(0.01, (spread_abs + spread_rel * model) * (1 + 0.25 * abs(z)) * spread_dte * (0.75 + 0.5 * ${u('h', 0)})) AS spread
  FROM s
), l8 AS (
  SELECT *, model + (${u('h', 1)} - 0.5) * 0.3 * spread AS mid FROM l7
), l9 AS (
  SELECT *,
    CASE WHEN model * 100 < 0.1 * tick THEN 0 ELSE greatest(0, floor((mid - spread / 2) * 100 / tick)::BIGINT * tick) END AS bid_c,
    CASE WHEN model * 100 < 0.1 * tick THEN 0 ELSE ceil((mid + spread / 2) * 100 / tick)::BIGINT * tick END AS ask_raw,
    CASE WHEN is_call THEN vol_c ELSE vol_p END AS volume
  FROM l8
), l10 AS (
  SELECT *, CASE WHEN ask_raw = 0 AND bid_c = 0 THEN 0 ELSE greatest(ask_raw, bid_c + tick) END AS ask_c,
    size_top / (1 + z * z / 8) AS size_scale
  FROM l9
)
SELECT underlying, CASE WHEN is_call THEN call_symbol ELSE put_symbol END, session_date, to_timestamp(q_ts),
  bid_c::DECIMAL(12,2) / 100, ask_c::DECIMAL(12,2) / 100,
  CASE WHEN bid_c = 0 THEN 0 ELSE ${SIZE_LADDER}[1 + floor(size_scale * ${u('h', 2)})::INTEGER] END,
  CASE WHEN ask_c = 0 THEN 0 ELSE ${SIZE_LADDER}[1 + floor(size_scale * ${u('h', 3)})::INTEGER] END,
  CASE WHEN volume = 0 THEN NULL
    ELSE greatest(1, bid_c + round((ask_c - bid_c) * ${u('h', 1)})::BIGINT)::DECIMAL(12,2) / 100 END,
  volume, to_timestamp(q_ts), spot::DECIMAL(14,4),
  ${options.greeks === 'none' ? 'NULL' : fixed('sig')},
  ${greek('CASE WHEN is_call THEN delta_c ELSE delta_c - CASE WHEN t <= 0 THEN 1.0 ELSE dq END END')},
  ${greek('gamma')}, ${greek('CASE WHEN is_call THEN theta_c ELSE theta_c + theta_carry END')}, ${greek('vega')}
FROM l10`;
}
