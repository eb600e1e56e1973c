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
  minutes: '_gen_minutes',
  minuteDays: '_gen_minute_days',
  minuteBars: '_gen_minute_bars',
  grid: '_gen_grid',
  snap: '_gen_snap',
  es: '_gen_es',
  rows: '_gen_rows',
  cs: '_gen_cs',
} as const;

/**
 * The in-memory database attached for the minute bars, which another connection loads and expands while
 * this one works on the options (temporary tables are visible to their own connection only).
 */
export const MINUTE_DB = '_gen_minute_db';

/** Column definitions of the tables the JS half appends to (types it can append cheaply). */
export const WORK_TABLES: Record<
  | 'sessions'
  | 'days'
  | 'minutes'
  | 'minuteDays'
  | 'grid'
  | 'udays'
  | 'underlyings'
  | 'expirations'
  | 'contracts',
  string
> = {
  sessions:
    'sid INTEGER, session_date DATE, day INTEGER, midnight_ts DOUBLE, open_ts DOUBLE, next_open_ts DOUBLE, eod_ts DOUBLE, snap_ts DOUBLE, minutes INTEGER',
  days: 'pid INTEGER, sid INTEGER, o DOUBLE, h DOUBLE, l DOUBLE, c DOUBLE, v BIGINT, p_snap DOUBLE',
  minutes: 'mid INTEGER, i INTEGER, o DOUBLE, h DOUBLE, l DOUBLE, c DOUBLE, v DOUBLE',
  minuteDays: 'mid INTEGER, symbol VARCHAR, session_date DATE, open_ts DOUBLE, factor DOUBLE',
  grid: 'pid INTEGER, sid INTEGER, snap INTEGER, q_ts DOUBLE, p DOUBLE',
  udays:
    'uid INTEGER, sid INTEGER, pid INTEGER, symbol VARCHAR, emit BOOLEAN, factor DOUBLE, close DOUBLE, prev_close DOUBLE, prev_var DOUBLE, share_1545 DOUBLE',
  underlyings:
    'uid INTEGER, symbol VARCHAR, rate DOUBLE, div DOUBLE, theta DOUBLE, skew DOUBLE, curv DOUBLE, tick_lo INTEGER, tick_hi INTEGER, spread_abs DOUBLE, spread_rel DOUBLE, volume_base DOUBLE, size_top INTEGER',
  expirations:
    'eid INTEGER, uid INTEGER, stem VARCHAR, exp_day INTEGER, exp_ts DOUBLE, kind_mult DOUBLE, first_sid INTEGER, last_sid INTEGER',
  contracts:
    'kid INTEGER, cid INTEGER, eid INTEGER, strike_k INTEGER, strike DOUBLE, ln_k DOUBLE, first_sid INTEGER, last_sid INTEGER, list_day INTEGER, level_c DOUBLE, level_p DOUBLE, oi_mult INTEGER, open_end BOOLEAN',
};

const T = WORK;

/** A number literal typed DOUBLE (DuckDB reads `0.06` as a DECIMAL, whose products can overflow). */
const num = (value: number) => `${value}::DOUBLE`;

/** Uniform in (0, 1) from 16 bits `k` (0..3) of a 64-bit hash. */
const u = (h: string, k: number) => `((((${h}) >> ${16 * k}) & 65535)::DOUBLE + 0.5) / 65536.0`;

/** Abramowitz–Stegun 26.2.17 tail polynomial in t = 1/(1 + 0.2316419|x|) (|error| < 7.5e-8 on N(x)). */
const poly = (t: string) =>
  `(${t} * (0.319381530 + ${t} * (-0.356563782 + ${t} * (1.781477937 + ${t} * (-1.821255978 + ${t} * 1.330274429)))))`;

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
 * One-minute bars of the equity underlyings (regular session) in the store's columns, from the JS half's
 * minutes (prices in 1/10000 dollars of the source series) and the underlyings that show each session:
 * a table of `MINUTE_DB` (run there) or a temporary one.
 */
export function minuteBarsSql(kind: 'TABLE' | 'TEMP TABLE'): string {
  const price = (x: string) => `(m.${x} * d.factor / 10000.0)::DECIMAL(14,4)`;
  return `CREATE ${kind} ${T.minuteBars} AS
SELECT d.symbol, '1' AS resolution, d.session_date, to_timestamp(d.open_ts + 60 * m.i) AS t, ${price('o')} AS o,
  ${price('h')} AS h, ${price('l')} AS l, ${price('c')} AS c, m.v::BIGINT AS v
FROM ${T.minutes} m JOIN ${T.minuteDays} d USING (mid)`;
}

/** Copies the expanded minute bars (from `MINUTE_DB` when `attached`) into the staging table. */
export function copyMinuteBarsSql(table: string, attached: boolean): string {
  return `INSERT INTO ${quoteIdentifier(table)} (symbol, resolution, session_date, t, o, h, l, c, v)
SELECT symbol, resolution, session_date, t, o, h, l, c, v FROM ${attached ? `${MINUTE_DB}.main` : 'temp'}.${T.minuteBars}`;
}

/**
 * The underlying at each snapshot (snap 1 = EOD at 16:00 ET, snap 0 = 15:45 ET or 12:45 on early
 * closes, snaps from GRID_SNAP on = the intraday grid's minutes) with its at-the-money volatility now:
 * the EWMA variance through the previous session updated with the return so far, blended with the
 * long-run level (model.ts: volatilityNow).
 */
export function snapSql(
  intraday: boolean,
  constants: { decay: number; weight: number; premium: number },
  grid = false,
): string {
  const intradayRows = intraday
    ? `UNION ALL
  SELECT u.uid, u.sid, 0 AS snap, s.snap_ts AS q_ts, d.p_snap * u.factor AS spot, u.prev_close, u.prev_var
  FROM ${T.udays} u JOIN ${T.sessions} s USING (sid) JOIN ${T.days} d USING (pid, sid)`
    : '';
  const gridRows = grid
    ? `UNION ALL
  SELECT u.uid, u.sid, g.snap, g.q_ts, g.p * u.factor AS spot, u.prev_close, u.prev_var
  FROM ${T.udays} u JOIN ${T.grid} g USING (pid, sid)`
    : '';
  const { premium, weight, decay } = constants;
  return `CREATE TEMP TABLE ${T.snap} AS
SELECT r.uid, r.sid, r.snap, r.q_ts, r.spot,
  ${num(premium)} * sqrt(${num(weight)} * (${num(decay)} * r.prev_var + ${num(1 - decay)} * 252 * ln(r.spot / r.prev_close) * ln(r.spot / r.prev_close))
    + ${num(1 - weight)} * g.theta * g.theta) AS sig_now
FROM (
  SELECT u.uid, u.sid, 1 AS snap, s.eod_ts AS q_ts, u.close AS spot, u.prev_close, u.prev_var
  FROM ${T.udays} u JOIN ${T.sessions} s USING (sid)
  ${intradayRows}${gridRows}
) r JOIN ${T.underlyings} g USING (uid)`;
}

const EOD = 1;
/** The first snap number of the intraday grid (snap GRID_SNAP + k is the grid's k-th instant). */
export const GRID_SNAP = 2;

/**
 * Everything that depends only on the expiration and the snapshot (time to expiry, forward, at-the-money
 * volatility, discounting, liquidity and open-interest scales, the row's instants and dates), so the
 * per-contract statements do little more than arithmetic. Volume is a property of the session decided
 * from its EOD state, so every snapshot row also carries the EOD row's inputs (`v_*`), and the previous
 * session's day (`p_*`).
 */
export function expirationSnapshotsSql(kappa: number): string {
  const atm = `sqrt(theta * theta + (sig_now * sig_now - theta * theta) * (1 - exp(-${num(kappa)} * greatest(t, 1e-9))) / (${num(kappa)} * greatest(t, 1e-9)))`;
  return `CREATE TEMP TABLE ${T.es} AS
WITH b AS (
  SELECT x.eid, x.first_sid, s.sid, s.snap, s.q_ts, s.spot, s.sig_now, x.kind_mult, x.exp_day, x.exp_day - se.day AS dte, se.day,
    (x.exp_ts - s.q_ts) / 31536000.0 AS t, g.symbol AS underlying, se.session_date, se.open_ts, se.next_open_ts,
    g.rate, g.div, g.theta, g.skew, g.curv, g.tick_lo, g.tick_hi, g.spread_abs, g.spread_rel, g.size_top, g.volume_base,
    CASE WHEN s.snap = ${EOD} THEN 1.0 WHEN s.snap >= ${GRID_SNAP}
      THEN least(1.0, u.share_1545 * (s.q_ts - se.open_ts) / (se.snap_ts - se.open_ts)) ELSE u.share_1545 END AS vol_share
  FROM ${T.expirations} x JOIN ${T.snap} s ON s.uid = x.uid AND s.sid BETWEEN x.first_sid - 1 AND x.last_sid
    JOIN ${T.sessions} se ON se.sid = s.sid JOIN ${T.underlyings} g ON g.uid = x.uid
    JOIN ${T.udays} u ON u.uid = x.uid AND u.sid = s.sid
), c AS (
  SELECT *, sqrt(greatest(t, 1e-10)) AS sqt, ${atm} AS atm FROM b
), d AS (
  SELECT eid, first_sid, sid, snap, spot, spot::DECIMAL(14,4) AS spot_dec, exp_day, dte, t, sqt, atm, 1 / (atm * sqt) AS inv_atm_sqt,
    underlying, session_date, to_timestamp(q_ts) AS q_time, to_timestamp(open_ts) AS open_time,
    to_timestamp(next_open_ts) AS next_open_time, day, vol_share,
    ln(spot) + (rate - div) * t AS ln_fwd, spot * exp((rate - div) * t) AS fwd, exp(-rate * t) AS disc,
    exp(-div * t) AS dq, rate, div, skew, curv, tick_lo, tick_hi, size_top,
    spread_abs * (1 + 1.5 / sqrt(dte + 1)) AS spread_abs_dte, spread_rel * (1 + 1.5 / sqrt(dte + 1)) AS spread_rel_dte,
    volume_base * kind_mult * (1 + 3 * exp(-dte / 7)) * sqrt(sig_now / theta) AS lam,
    5 * volume_base * kind_mult AS oi_scale
  FROM c
)
SELECT d.*, v.ln_fwd AS v_ln_fwd, v.inv_atm_sqt AS v_inv_atm_sqt, v.lam AS v_lam, p.day AS p_day,
  p.session_date AS p_session_date
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
 * listing, then the contract's level (`base`, larger for strikes near the money when listed) built up
 * linearly over the first three weeks, trimmed by closing trades over the last five days to expiry, with
 * a small wobble that changes once a week (16 bits of that week's hash, `bits` 1 for calls and 2 for
 * puts). It stays unchanged on most days, so the volume of a contract far from the money is often zero.
 */
const openInterest = (base: string, day: string, weekHash: string, bits: number) =>
  `greatest(0, floor(${base} * least(1.0, (${day} - list_day + 1) * ${num(1 / 15)})
    * least(1.0, ${num(0.6)} + ${num(0.08)} * (exp_day - ${day})) * (0.98 + 0.04 * ${u(weekHash, bits)})))::BIGINT`;

/**
 * Per contract pair and session, decided from the session's EOD state: each side's open interest settled
 * from the previous session (and from this one when the contract outlives the range) and its volume —
 * the open-interest change plus trading that did not change it (exponential, heavier near the money and
 * near expiry). A figure for session D is the same number whether computed from D's row or D+1's, so open
 * interest never goes negative and moves by at most the session's volume.
 */
export function contractSessionsSql(): string {
  // OCC symbols: the expiration's stem (root and date), the side, and the strike in eight digits.
  const symbols = `SELECT c.*, x.stem || 'C' || lpad(c.strike_k::VARCHAR, 8, '0') AS call_symbol,
    x.stem || 'P' || lpad(c.strike_k::VARCHAR, 8, '0') AS put_symbol
  FROM ${T.contracts} c JOIN ${T.expirations} x USING (eid)`;
  return `CREATE TEMP TABLE ${T.cs} AS
WITH a AS (
  SELECT r.sid, c.cid, c.eid, c.strike, c.ln_k, c.call_symbol, c.put_symbol, c.open_end AND r.sid = c.last_sid AS tail,
    c.list_day, e.exp_day, e.day, e.p_day,
    c.level_c * e.oi_scale / c.oi_mult AS base_c, c.level_p * e.oi_scale / c.oi_mult AS base_p,
    e.v_lam * exp(-0.5 * pow(greatest(-6.0, least(6.0, (c.ln_k - e.v_ln_fwd) * e.v_inv_atm_sqt)), 2)) AS lam,
    hash($seed, 17, c.cid, e.day) AS hv, hash($seed, 21, c.cid, e.day // 7) AS hw, hash($seed, 21, c.cid, e.p_day // 7) AS hwp
  FROM ${T.rows} r JOIN (${symbols}) c ON c.kid = r.kid JOIN ${T.es} e ON e.eid = c.eid AND e.sid = r.sid AND e.snap = ${EOD}
), b AS (
  SELECT sid, cid, eid, strike, ln_k, call_symbol, put_symbol, tail, hv, lam,
    ${openInterest('base_c', 'p_day', 'hwp', 1)} AS oi_prev_c, ${openInterest('base_c', 'day', 'hw', 1)} AS oi_now_c,
    ${openInterest('base_p', 'p_day', 'hwp', 2)} AS oi_prev_p, ${openInterest('base_p', 'day', 'hw', 2)} AS oi_now_p
  FROM a
)
SELECT sid, cid, eid, strike, ln_k, call_symbol, put_symbol, tail, oi_prev_c, oi_prev_p, CASE WHEN tail THEN oi_now_c END AS oi_tail_c,
  CASE WHEN tail THEN oi_now_p END AS oi_tail_p,
  abs(oi_now_c - oi_prev_c) + floor(-lam * ln(${u('hv', 0)}))::BIGINT AS vol_c,
  abs(oi_now_p - oi_prev_p) + floor(-1.2 * lam * ln(${u('hv', 1)}))::BIGINT AS vol_p
FROM b`;
}

/**
 * Open interest by settled session, published at 09:30 ET of the next session: each quoted session D
 * carries the figure settled from D−1 (0 for a contract listed on D); a contract still alive at the end
 * of the range also gets the row settled from its last session. Contracts adjusted for a split show
 * their open interest in post-split units from the ex-date (×ratio).
 */
export function openInterestSql(table: string): string {
  const rows = (date: string, time: string, call: string, put: string, where: string) =>
    `SELECT e.underlying, CASE WHEN k.is_call THEN s.call_symbol ELSE s.put_symbol END, e.${date}, e.${time},
  CASE WHEN k.is_call THEN s.${call} ELSE s.${put} END
FROM ${T.cs} s JOIN ${T.es} e ON e.eid = s.eid AND e.sid = s.sid AND e.snap = ${EOD}
  CROSS JOIN (VALUES (true), (false)) k(is_call)${where}`;
  return `INSERT INTO ${quoteIdentifier(table)} (underlying, option_symbol, settled_session, published_at, open_interest)
${rows('p_session_date', 'open_time', 'oi_prev_c', 'oi_prev_p', '')}
UNION ALL
${rows('session_date', 'next_open_time', 'oi_tail_c', 'oi_tail_p', '\nWHERE s.tail')}`;
}

/** `greatest(x, floor)` for a column `x` (a CASE costs DuckDB less). */
const atLeast = (x: string, floor: string) => `CASE WHEN ${x} > ${floor} THEN ${x} ELSE ${floor} END`;

/** `greatest(low, least(high, x))` for a column `x`. */
const clamp = (x: string, low: string, high: string) =>
  `CASE WHEN ${x} > ${high} THEN ${high} WHEN ${x} < ${low} THEN ${low} ELSE ${x} END`;

/** Displayed sizes are drawn from these round lots (as quoted sizes mostly are). */
export const SIZES = [
  1, 2, 3, 5, 8, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 250, 300, 400, 500, 750, 1000, 1500, 2000,
  2500, 5000,
];
const SIZE_LADDER = `[${SIZES.join(', ')}]`;

/** Which vendor columns to fill. */
export type GreeksMode = 'all' | 'iv' | 'none';

/** The standard normal CDF at `x` given its density there (Abramowitz–Stegun 26.2.17). */
const normalCdf = (x: string, density: string) =>
  `(0.5 + sign(${x}) * (0.5 - ${density} * ${poly(`(1 / (1 + 0.2316419 * abs(${x})))`)}))`;

/**
 * The option snapshots. Black–Scholes with a continuous dividend yield is evaluated once per strike (the
 * put follows by parity), on the snapshot's underlying price and the smile and term-structure volatility;
 * then per side: a noisy mid inside a spread that widens away from the money and near expiry,
 * tick-rounded quotes (never crossed, bid ≥ 0, 0/0 when worthless), sizes, last (null without a trade
 * that day), volume and the vendor greeks (theta per calendar day, vega per vol point). Each pair draws
 * one hash per side (the put's is the hash of the call's), four 16-bit uniforms each.
 */
export function quotesSql(
  table: string,
  options: { snaps: readonly number[]; intradayMaxDte: number | null; greeks: GreeksMode; grid?: boolean },
): string {
  const snapIn = `e.snap IN (${options.snaps.join(', ')})`;
  const gridIn = `e.snap >= ${GRID_SNAP}`;
  const snapFilter = `${!options.grid ? snapIn : options.snaps.length === 0 ? gridIn : `(${snapIn} OR ${gridIn})`}${
    options.intradayMaxDte === null ? '' : ` AND (e.snap = ${EOD} OR e.dte <= ${options.intradayMaxDte})`
  }`;
  const all = options.greeks === 'all';
  const fixed = (expr: string) => `greatest(-9999.0, least(9999.0, ${expr}))::DECIMAL(10,4)`;
  const greek = (expr: string) => (all ? fixed(expr) : 'NULL');
  const greekInputs = all ? ', spot, dq, t, rate, div, disc, strike, pdf1, vsq, sqt, n1, n2' : '';
  const greeksPair = all
    ? `,
    CASE WHEN t <= 0 THEN CASE WHEN spot > strike THEN 1.0 ELSE 0.0 END ELSE dq * n1 END AS delta_c,
    CASE WHEN t <= 0 THEN 1.0 ELSE dq END AS delta_carry,
    CASE WHEN t <= 0 THEN 0.0 ELSE dq * pdf1 / (spot * vsq) END AS gamma,
    CASE WHEN t <= 0 THEN 0.0 ELSE spot * dq * pdf1 * sqt / 100 END AS vega,
    CASE WHEN t <= 0 THEN 0.0 ELSE (-spot * dq * pdf1 * sig / (2 * sqt) - rate * strike * disc * n2 + div * spot * dq * n1) / 365 END AS theta_c,
    CASE WHEN t <= 0 THEN 0.0 ELSE (rate * strike * disc - div * spot * dq) / 365 END AS theta_carry`
    : '';
  const greekColumns = all ? ', delta_c, delta_carry, gamma, vega, theta_c, theta_carry' : '';
  // Cents to dollars as a DECIMAL by integer arithmetic (a DOUBLE → DECIMAL cast costs more).
  const dollars = (cents: string) => `${cents}::DECIMAL(12,0) * 0.01::DECIMAL(2,2)`;
  const size = (k: number, cents: string) =>
    `CASE WHEN ${cents} > 0 THEN ${SIZE_LADDER}[1 + floor(size_scale * ${uniform(k)})::INTEGER] ELSE 0 END`;
  const uniform = (k: number) =>
    `(((hs >> ${16 * k}) & 65535)::DOUBLE * ${num(1 / 65536)} + ${num(0.5 / 65536)})`;
  return `INSERT INTO ${quoteIdentifier(table)} (underlying, option_symbol, session_date, quote_time, bid, ask, bid_size, ask_size,
  last, volume, volume_time, underlying_price, iv, delta, gamma, theta, vega)
WITH a AS (
  SELECT e.underlying, e.session_date, e.q_time, e.spot_dec, s.call_symbol, s.put_symbol, s.strike,
    floor(s.vol_c * e.vol_share)::BIGINT AS vol_c, floor(s.vol_p * e.vol_share)::BIGINT AS vol_p,
    e.spot, e.fwd, e.disc, e.dq, e.t, e.rate, e.div, e.sqt, e.atm, e.skew, e.curv, e.tick_lo, e.tick_hi, e.size_top,
    e.spread_abs_dte, e.spread_rel_dte, s.ln_k - e.ln_fwd AS lnm, (s.ln_k - e.ln_fwd) * e.inv_atm_sqt AS z_raw,
    hash($seed, 19, s.cid, s.sid, e.snap) AS h
  FROM ${T.cs} s JOIN ${T.es} e ON e.eid = s.eid AND e.sid = s.sid AND ${snapFilter}
), b AS (
  SELECT *, ${clamp('z_raw', '-4.0', '4.0')} AS z FROM a
), b2 AS (
  SELECT *, 1 + z * (skew + curv * z) AS smile FROM b
), c AS (
  SELECT *, atm * ${atLeast('smile', '0.5')} AS sig FROM b2
), d AS (
  SELECT *, sig * sqt AS vsq, 0.5 * sig * sqt - lnm / (sig * sqt) AS d1 FROM c
), f AS (
  SELECT *, 0.3989422804014327 * exp(-0.5 * d1 * d1) AS pdf1 FROM d
), g AS (
  SELECT *, ${normalCdf('d1', 'pdf1')} AS n1, ${normalCdf('d1 - vsq', 'pdf1 * exp(-lnm)')} AS n2 FROM f
), k AS (
  SELECT *, disc * (fwd * n1 - strike * n2) AS call_raw FROM g
), k2 AS (
  SELECT *, call_raw + disc * strike - spot * dq AS put_raw FROM k
), pair AS (
  SELECT underlying, session_date, q_time, spot_dec, call_symbol, put_symbol, vol_c, vol_p, sig, tick_lo, tick_hi, h,
    ${options.greeks === 'none' ? 'NULL' : 'sig::DECIMAL(10,4)'} AS iv, hash(h) AS h2, ${atLeast('call_raw', '0.0')} AS call, ${atLeast('put_raw', '0.0')} AS put,
    (1 + 0.25 * abs(z)) AS widen, size_top / (1 + z * z / 8) AS size_scale, spread_abs_dte, spread_rel_dte${greekInputs}${greeksPair}
  FROM k2
), side AS (
  SELECT underlying, session_date, q_time, spot_dec, iv, tick_lo, tick_hi, widen, size_scale, spread_abs_dte, spread_rel_dte,
    is_call, CASE WHEN is_call THEN call_symbol ELSE put_symbol END AS symbol,
    CASE WHEN is_call THEN vol_c ELSE vol_p END AS volume, CASE WHEN is_call THEN call ELSE put END AS model,
    CASE WHEN is_call THEN h ELSE h2 END AS hs${greekColumns}
  FROM pair CROSS JOIN (VALUES (true), (false)) sides(is_call)
), l1 AS (
  -- 0.75 + 0.5 u with u = (k + 0.5) / 65536, exactly.
  SELECT *, CASE WHEN model < 3 THEN tick_lo ELSE tick_hi END AS tick, ${uniform(1)} AS u1,
    (spread_abs_dte + spread_rel_dte * model) * widen * (((hs & 65535)::DOUBLE + 98304.5) * ${num(0.5 / 65536)}) AS spread_raw
  FROM side
), l2 AS (
  SELECT *, model * 100 / tick AS m, ${atLeast('spread_raw', '0.01')} * 100 / tick AS sp FROM l1
), l3 AS (
  SELECT *, m + sp * (0.3 * u1 - 0.65) AS bid_at, ceil(m + sp * (0.3 * u1 + 0.35))::BIGINT AS ask_raw FROM l2
), l4 AS (
  SELECT *, CASE WHEN bid_at < 0 THEN 0 ELSE floor(bid_at)::BIGINT END AS bid_raw FROM l3
), l5 AS (
  SELECT *, CASE WHEN m >= 0.1 THEN bid_raw * tick ELSE 0 END AS bid_c,
    CASE WHEN m >= 0.1 THEN CASE WHEN ask_raw > bid_raw THEN ask_raw ELSE bid_raw + 1 END * tick ELSE 0 END AS ask_c
  FROM l4
), l6 AS (
  SELECT *, bid_c + round((ask_c - bid_c) * u1)::BIGINT AS last_c FROM l5
)
SELECT underlying, symbol, session_date, q_time, ${dollars('bid_c')}, ${dollars('ask_c')}, ${size(2, 'bid_c')},
  ${size(3, 'ask_c')},
  CASE WHEN volume = 0 THEN NULL WHEN last_c > 1 THEN ${dollars('last_c')} ELSE 0.01::DECIMAL(12,2) END,
  volume, q_time, spot_dec, iv,
  ${greek('CASE WHEN is_call THEN delta_c ELSE delta_c - delta_carry END')},
  ${greek('gamma')}, ${greek('CASE WHEN is_call THEN theta_c ELSE theta_c + theta_carry END')}, ${greek('vega')}
FROM l6`;
}
