/**
 * `/v1/options/chain/{underlying}/`: the option chain with every filter of api-reference §3.1. Expiration
 * filters pick expiration groups (`root:date`) first, from the store's contract classification; strike,
 * side, price and liquidity filters then run on the rows, and `strikeLimit` last.
 */
import { z } from 'zod';
import { type Clock, dte, isIndexRoot } from '../../market-time/index.js';
import { asOfSession } from '../../pit/as-of.js';
import { SYMBOL_NOT_FOUND } from '../no-data.js';
import { dataAsOf } from '../options/columns.js';
import { underlyingKnown } from '../options/contract-table.js';
import { listedGroups } from '../options/listed-groups.js';
import { noDataAround } from '../options/no-data-around.js';
import type { OptionRecord } from '../options/records.js';
import { closedSession, scopeOfSymbol } from '../options/scope.js';
import {
  assemble,
  type ExpirationGroup,
  type GroupsColumns,
  type ScopeAnswer,
  scopeAnswer,
} from '../options/scope-answer.js';
import { rowSource } from '../options/snapshot-sql.js';
import {
  badCombination,
  booleanParam,
  choiceParam,
  clockedParser,
  dayParam,
  EPSILON,
  expirationParam,
  expressionParam,
  inInterval,
  integerParam,
  matchesExpression,
  type NumberExpression,
  numberParam,
} from '../params.js';
import type { Endpoint, EndpointContext, EndpointResult } from '../types.js';
import type { OptionAnswer } from './option-answer.js';

function chainSchema(clock: Clock) {
  const price = numberParam().optional();
  return z.object({
    expiration: expirationParam(clock).optional(),
    dte: numberParam({ min: 0 }).optional(),
    from: dayParam(clock).optional(),
    to: dayParam(clock).optional(),
    month: integerParam({ min: 1, max: 12 }).optional(),
    year: integerParam({ min: 1000, max: 9999 }).optional(),
    weekly: booleanParam.optional(),
    monthly: booleanParam.optional(),
    quarterly: booleanParam.optional(),
    nonstandard: booleanParam.optional(),
    am: booleanParam.optional(),
    pm: booleanParam.optional(),
    strike: expressionParam('400, 400,405, >400, >=400, <400, <=410 or 400-410').optional(),
    delta: expressionParam('.50, .60,.30, >.50, <=.25 or .30-.60', { absolute: true }).optional(),
    strikeLimit: integerParam({ min: 1 }).optional(),
    range: choiceParam(['itm', 'otm', 'all'] as const).optional(),
    side: choiceParam(['call', 'put'] as const).optional(),
    minBid: price,
    maxBid: price,
    minAsk: price,
    maxAsk: price,
    maxBidAskSpread: price,
    maxBidAskSpreadPct: price,
    minOpenInterest: price,
    minVolume: price,
  });
}

type ChainParams = z.output<ReturnType<typeof chainSchema>>;

const parseChain = clockedParser(chainSchema);

const TYPE_KEYS = ['weekly', 'monthly', 'quarterly'] as const;
/** Filters that choose expirations themselves, so that the front-month default no longer applies. */
const EXPIRATION_CHOOSERS = ['from', 'to', 'month', 'year', ...TYPE_KEYS] as const;

function checkCombinations(params: ChainParams, symbol: string): void {
  if (params.dte !== undefined && (params.from !== undefined || params.to !== undefined)) {
    throw badCombination('dte cannot be combined with from or to.');
  }
  const types = TYPE_KEYS.map((key) => params[key]).filter((value) => value !== undefined);
  if (types.includes(true) && types.includes(false)) {
    throw badCombination('weekly, monthly and quarterly must be all true or all false when combined.');
  }
  if ((params.am !== undefined || params.pm !== undefined) && !isIndexRoot(symbol)) {
    throw badCombination(`am and pm apply to index options only; ${symbol} is not an index.`);
  }
}

/**
 * The expiration groups the request asks for: standard only unless `nonstandard=true`; `am`/`pm`,
 * `weekly`/`monthly`/`quarterly` (include-only when true, exclude when false); `expiration`, `from`/`to`,
 * `month`/`year` as windows; then `expiration` (a date or `all`) wins over `dte` (the one expiration
 * closest to N days, the earlier on a tie); with none of these, the front monthly.
 */
function selectGroups(
  groups: readonly ExpirationGroup[],
  params: ChainParams,
  session: string,
): ExpirationGroup[] {
  let kept = groups.filter((group) => params.nonstandard === true || !group.nonstandard);
  if (params.am === true || params.pm === true) {
    kept = kept.filter((group) => (group.settlement === 'AM' ? params.am === true : params.pm === true));
  } else {
    kept = kept.filter((group) => (group.settlement === 'AM' ? params.am !== false : params.pm !== false));
  }
  const wanted = TYPE_KEYS.filter((key) => params[key] === true);
  const unwanted = TYPE_KEYS.filter((key) => params[key] === false);
  if (wanted.length > 0) kept = kept.filter((group) => wanted.some((key) => group[key]));
  if (unwanted.length > 0) kept = kept.filter((group) => !unwanted.some((key) => group[key]));
  const { expiration, from, to, month, year } = params;
  kept = kept.filter(
    (group) =>
      (expiration === undefined || expiration === 'all' || group.expiration === expiration) &&
      (from === undefined || group.expiration >= from) &&
      (to === undefined || group.expiration <= to) &&
      (month === undefined || Number(group.expiration.slice(5, 7)) === month) &&
      (year === undefined || Number(group.expiration.slice(0, 4)) === year),
  );
  if (expiration !== undefined) return kept;
  if (params.dte !== undefined) {
    const target = params.dte;
    const dates = [...new Set(kept.map((group) => group.expiration))].sort();
    let best: string | undefined;
    for (const date of dates) {
      const distance = Math.abs(dte(session, date) - target);
      if (best === undefined || distance < Math.abs(dte(session, best) - target)) best = date;
    }
    return kept.filter((group) => group.expiration === best);
  }
  if (EXPIRATION_CHOOSERS.some((key) => params[key] !== undefined)) return kept;
  const front = kept
    .filter((group) => group.monthly)
    .map((group) => group.expiration)
    .sort()[0];
  return kept.filter((group) => group.monthly && group.expiration === front);
}

/** Contracts whose absolute delta is closest to each exact term (per expiration and side), or in an interval. */
function filterByDelta(records: readonly OptionRecord[], expression: NumberExpression): OptionRecord[] {
  const keep = new Set<OptionRecord>();
  for (const record of records) {
    const delta = Math.abs(record.delta!);
    if (expression.some((term) => term.kind === 'interval' && inInterval(term, delta))) keep.add(record);
  }
  const targets = expression.flatMap((term) => (term.kind === 'exact' ? [term.value] : []));
  if (targets.length > 0) {
    for (const members of bySeries(records).values()) {
      for (const target of targets) {
        const distance = (record: OptionRecord) => Math.abs(Math.abs(record.delta!) - target);
        const best = Math.min(...members.map(distance));
        for (const record of members) if (distance(record) <= best + EPSILON) keep.add(record);
      }
    }
  }
  return records.filter((record) => keep.has(record));
}

/**
 * Per expiration and side, the N strikes nearest below the underlying price and the N nearest at or above
 * it (the service's LIVE behaviour: N on each side of the money); a series without a price is kept whole.
 */
function limitStrikes(records: readonly OptionRecord[], limit: number): OptionRecord[] {
  const keep = new Set<OptionRecord>();
  for (const members of bySeries(records).values()) {
    const spot = members.find((record) => record.underlyingPrice !== null)?.underlyingPrice ?? null;
    const strikes = [...new Set(members.map((record) => record.strike))].sort((a, b) => a - b);
    const kept =
      spot === null
        ? new Set(strikes)
        : new Set([
            ...strikes.filter((strike) => strike < spot).slice(-limit),
            ...strikes.filter((strike) => strike >= spot).slice(0, limit),
          ]);
    for (const record of members) if (kept.has(record.strike)) keep.add(record);
  }
  return records.filter((record) => keep.has(record));
}

function bySeries(records: readonly OptionRecord[]): Map<string, OptionRecord[]> {
  const series = new Map<string, OptionRecord[]>();
  for (const record of records) {
    const key = `${record.group}|${record.side}`;
    const members = series.get(key);
    if (members === undefined) series.set(key, [record]);
    else members.push(record);
  }
  return series;
}

const atLeast = (value: number | null, bound: number | undefined) =>
  bound === undefined || (value !== null && value >= bound - EPSILON);
const atMost = (value: number | null, bound: number | undefined) =>
  bound === undefined || (value !== null && value <= bound + EPSILON);

function spreadOf(record: OptionRecord): number | null {
  return record.bid === null || record.ask === null ? null : record.ask - record.bid;
}

const PRICE_BOUNDS = [
  'minBid',
  'maxBid',
  'minAsk',
  'maxAsk',
  'maxBidAskSpread',
  'maxBidAskSpreadPct',
  'minOpenInterest',
  'minVolume',
] as const;

/** Whether any row filter of {@link filterRecords} applies: without one, the groups' rows are kept whole. */
function filtersRows(params: ChainParams): boolean {
  return (
    params.strike !== undefined ||
    params.delta !== undefined ||
    params.side !== undefined ||
    params.range === 'itm' ||
    params.range === 'otm' ||
    PRICE_BOUNDS.some((key) => params[key] !== undefined) ||
    params.strikeLimit !== undefined
  );
}

/** The row filters: strike (which wins over delta), side, range, prices and liquidity, then strikeLimit. */
function filterRecords(records: readonly OptionRecord[], params: ChainParams): readonly OptionRecord[] {
  let kept: readonly OptionRecord[] = records;
  if (params.strike !== undefined) {
    const strike = params.strike;
    kept = kept.filter((record) => matchesExpression(strike, record.strike));
  } else if (params.delta !== undefined && kept.every((record) => record.delta !== null)) {
    kept = filterByDelta(kept, params.delta);
  }
  if (params.side !== undefined) kept = kept.filter((record) => record.side === params.side);
  if (params.range === 'itm') kept = kept.filter((record) => record.inTheMoney === true);
  if (params.range === 'otm') kept = kept.filter((record) => record.inTheMoney === false);
  const bounded = PRICE_BOUNDS.some((key) => params[key] !== undefined);
  if (bounded) {
    kept = kept.filter(
      (record) =>
        atLeast(record.bid, params.minBid) &&
        atMost(record.bid, params.maxBid) &&
        atLeast(record.ask, params.minAsk) &&
        atMost(record.ask, params.maxAsk) &&
        atMost(spreadOf(record), params.maxBidAskSpread) &&
        (params.maxBidAskSpreadPct === undefined ||
          (record.underlyingPrice !== null &&
            atMost(spreadOf(record), (params.maxBidAskSpreadPct / 100) * record.underlyingPrice))) &&
        atLeast(record.openInterest, params.minOpenInterest) &&
        atLeast(record.volume, params.minVolume),
    );
  }
  if (params.strikeLimit !== undefined) kept = limitStrikes(kept, params.strikeLimit);
  return kept;
}

async function answerChain(ctx: EndpointContext): Promise<EndpointResult<OptionAnswer>> {
  const closed = closedSession(ctx.asOf);
  if (closed !== undefined) return closed;
  const { scope, symbol, underlying, root } = scopeOfSymbol(ctx.path['underlying']);
  const params = parseChain(ctx.query, ctx.nowSeconds);
  checkCombinations(params, symbol);
  const session = asOfSession(ctx.asOf);
  // One expiration asked by its date: no other group can answer, so only its contracts are read.
  const read =
    params.expiration === undefined || params.expiration === 'all'
      ? scope
      : { ...scope, expiration: params.expiration };
  const answer =
    (params.expiration === undefined ? await pickedDateAnswer(ctx, scope, params, session) : undefined) ??
    (await scopeAnswer(ctx.sql, ctx.cache, ctx.asOf, read, ctx.greeks));
  if (answer.groups.length === 0 && !(await underlyingKnown(ctx.sql, ctx.cache, underlying, root))) {
    return SYMBOL_NOT_FOUND;
  }
  const selected = new Set(selectGroups(answer.groups, params, session));
  // Without row filters, the groups' rows are the answer: printed from their columns when they come so.
  const columnar = filtersRows(params)
    ? undefined
    : answer.columnsOf(selected, ctx.cache.currentColumnsRows ?? CURRENT_COLUMNS_ROWS);
  if (columnar !== undefined && columnar.rows > 0) {
    return new ColumnarChainResult(columnar, answer, selected, billingOf(ctx.asOf));
  }
  const rows = answer.recordsOf(selected);
  const records = filterRecords(rows, params);
  if (records.length === 0) return noDataAround(ctx.sql, ctx.cache, scope, session);
  return {
    kind: 'ok',
    fields: answer.fieldsOf(records),
    rowKey: 'optionSymbol',
    billing: billingOf(ctx.asOf),
    dataAsOfSeconds: dataAsOf(records),
    optionRecords: records,
    ...(ctx.greeks === 'computed' ? { greeksComputed: true as const } : {}),
  };
}

/**
 * Rows from which a current answer is made from its block's columns rather than from records: columns cost
 * by the column (some forty arrays made and gathered), records by the row. Made from a block outside the
 * benches, a whole SPY chain (6,264 rows) took 11-13 ms as columns against 25-27 as records, one date (366
 * rows) 0.5-0.7 against 0.6-0.8, and an intraday 0DTE minute (130 rows) 0.28-0.34 against 0.29-0.31; a
 * whole minute loop through `store.at(T)` (about 150 rows a minute) was some 20 % slower with columns, in
 * twelve runs of each, alternating. Once the columns were cut from shared buffers (`ColumnBuffer`), the
 * loop was even: 0.35 against 0.36 ms a minute over March 2023's sessions, 0.43 against 0.46 over
 * February's (five runs of each, alternating), so small answers stay records.
 */
const CURRENT_COLUMNS_ROWS = 1_000;

/** How the service bills a chain: dated (historical) answers by the thousand rows, current ones per row. */
function billingOf(asOf: EndpointContext['asOf']): OptionAnswer['billing'] {
  return asOf.kind === 'dated' ? 'per-1000-rows' : 'per-row';
}

/**
 * A chain's answer without row filters, its fields made from the rows' columns (`ScopeAnswer.columnsOf`).
 * Its records are made when first read: the service's face prints the fields and never reads them (a
 * dense chain's records were most of its CPU, collecting included); the backtest face judges a current
 * answer by its known-at columns, and a dated one by its records. A class, not an object literal with a
 * getter, so that every such answer shares one hidden class (see `AssembledAnswer`).
 */
class ColumnarChainResult implements OptionAnswer {
  readonly kind = 'ok' as const;
  readonly rowKey = 'optionSymbol';
  readonly fields: OptionAnswer['fields'];
  readonly dataAsOfSeconds: number | null;
  readonly knownAtColumns: OptionAnswer['knownAtColumns'];
  private records: readonly OptionRecord[] | undefined;

  constructor(
    columnar: GroupsColumns,
    private readonly answer: ScopeAnswer,
    private readonly groups: ReadonlySet<ExpirationGroup>,
    readonly billing: OptionAnswer['billing'],
  ) {
    this.fields = columnar.fields;
    this.dataAsOfSeconds = columnar.dataAsOf;
    this.knownAtColumns = columnar.known;
  }

  get heldBytes(): number | undefined {
    return this.records === undefined ? this.answer.heldBytes : undefined;
  }

  get optionRecords(): readonly OptionRecord[] {
    // Made once: the records of some of the groups are sorted together at each `recordsOf`.
    this.records ??= this.answer.recordsOf(this.groups);
    return this.records;
  }
}

/**
 * The answer of the one expiration date a request without `expiration` picks (`dte`, the front month, a
 * window holding one date), when the contracts listed at the as-of show that it picks one: read for that
 * date only. A dense chain's session is thousands of rows and a date's a few hundred; a current answer's
 * search for contracts not quoted lately then covers that date's contracts, not every deep LEAPS.
 *
 * The listed groups hold every group the chain has rows for (`listedGroups`), and the choice among groups
 * is a filter of each group, then the date nearest `dte` (the earlier on a tie) or the earliest monthly: a
 * nearest or earliest element of a set stays so in any subset that holds it. So when the date's own answer
 * has a group the request keeps, the chain's answer picks that date too, and the same groups, read whole.
 * When it has none (the date's contracts listed but not quoted yet), undefined: the whole chain decides.
 * When the listed groups pick no date, the answer's groups, a subset of them, pick none either: an empty
 * answer, read from nothing.
 */
async function pickedDateAnswer(
  ctx: EndpointContext,
  scope: ReturnType<typeof scopeOfSymbol>['scope'],
  params: ChainParams,
  session: string,
): Promise<ScopeAnswer | undefined> {
  const listed = await listedGroups(ctx.sql, ctx.cache, ctx.asOf, scope);
  const dates = new Set(selectGroups(listed, params, session).map((group) => group.expiration));
  // No listed group picked: no group of the chain's answer would be either, so nothing is read (a root
  // without monthlies asked its front month read its whole chain, 0.5 s of CPU on a dense store, to say so).
  if (dates.size === 0) return assemble(ctx.asOf, rowSource([]), ctx.greeks, ctx.cache);
  if (dates.size !== 1) return undefined;
  const expiration = [...dates][0]!;
  const answer = await scopeAnswer(ctx.sql, ctx.cache, ctx.asOf, { ...scope, expiration }, ctx.greeks);
  return selectGroups(answer.groups, params, session).length > 0 ? answer : undefined;
}

/** `GET /v1/options/chain/{underlying}/`: the chain at the request's as-of, filtered as the service does. */
export const chain = {
  service: '/v1/options/chain/',
  pattern: '/v1/options/chain/:underlying/',
  family: 'options',
  cacheable: true,
  dated: true,
  schema: chainSchema,
  run: answerChain,
} satisfies Endpoint;
