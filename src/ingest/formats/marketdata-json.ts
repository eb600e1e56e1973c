/**
 * Saved response bodies of the market-data service: an option chain (`/v1/options/chain/{underlying}/`)
 * or option quotes (`/v1/options/quotes/{optionSymbol}/`), one JSON body per file, columnar
 * (`{"s":"ok","optionSymbol":[…],"updated":[…],"bid":[…],…}`).
 *
 * Timing conventions: a row's quote time q is its `updated` (unix seconds, or an ISO timestamp with an
 * offset when saved with `dateformat=timestamp`); volume is as of q (v = q). Its session D is the ET
 * date of q — or, when that date is not a session (a weekend or holiday snapshot), the last session
 * before it, whose data such a snapshot shows. `openInterest` was settled from the session before D and
 * published at 09:30 ET of D.
 *
 * A row's `_line` is its 1-based position in the arrays. A body whose arrays differ in length is refused
 * ("arrays of unequal length"); with `skipInvalid` the arrays whose length differs from `optionSymbol`'s
 * are ignored instead (reported as a file-level reject) and the rows are staged from the others. The
 * underlying is `underlying` (or the symbol's root) through `underlyingOfRoot`; `side` and `strike`, when
 * present, must agree with the OCC symbol. `firstTraded` (the opening of the contract's first session, as
 * the service knows it) is a listing hint: the store keeps the earlier of its ET date and the first session
 * it saw (a mirror of a late range still answers the service's listing date). `mid`, `dte`, `expiration`,
 * `inTheMoney`, `intrinsicValue` and `extrinsicValue` are derived by the query layer and not kept. IV and
 * Greeks that the store's DECIMAL(10,6) cannot hold (|x| ≥ 10000) are stored as NULL.
 */
import { promises as fs } from 'node:fs';
import { IngestError } from '../../errors.js';
import { isSession, previousSession, toEtDate, underlyingOfRoot } from '../../market-time/index.js';
import { tryParseOccSymbol } from '../../occ/index.js';
import { CONTRACT_HINTS } from '../../store/derived-contracts.js';
import { quoteIdentifier as q, type SqlSession } from '../../store/sql.js';
import { insertOpenInterest } from '../calendar-table.js';
import {
  type IngestFormat,
  type Reject,
  type StageOptions,
  type StageResult,
  stagingTable,
} from './types.js';

type Body = Record<string, unknown>;

const PRICES = { bid: 'bid', ask: 'ask', last: 'last', underlyingPrice: 'underlying_price' } as const;
const COUNTS = { bidSize: 'bid_size', askSize: 'ask_size', volume: 'volume' } as const;
const GREEKS = { iv: 'iv', delta: 'delta', gamma: 'gamma', theta: 'theta', vega: 'vega' } as const;

async function readBody(file: string): Promise<Body> {
  let parsed: unknown;
  try {
    parsed = JSON.parse((await fs.readFile(file, 'utf8')).replace(/^\uFEFF/, ''));
  } catch (cause) {
    if (cause instanceof SyntaxError)
      throw new IngestError(file, undefined, `not JSON: ${cause.message}`, { cause });
    throw cause;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new IngestError(file, undefined, 'not a response body (expected a JSON object)');
  }
  return parsed as Body;
}

/** The instant of an `updated` value: unix seconds, or an ISO-8601 timestamp with an offset. */
function instantOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /T\d{2}:\d{2}.*([+-]\d{2}:?\d{2}|Z)$/.test(value)) {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms / 1000;
  }
  return undefined;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? `"${value}"` : JSON.stringify(value);
}

async function stage(sql: SqlSession, file: string, options: StageOptions): Promise<StageResult> {
  const body = await readBody(file);
  if (body['s'] === 'no_data') return { rows: 0, rejects: [] };
  if (body['s'] === 'error') {
    throw new IngestError(file, undefined, `error body: ${String(body['errmsg'] ?? '(no errmsg)')}`);
  }
  if (body['s'] !== 'ok') throw new IngestError(file, undefined, `status ${describe(body['s'])} is not "ok"`);
  const symbols = body['optionSymbol'];
  if (!Array.isArray(symbols)) {
    throw new IngestError(file, undefined, 'no optionSymbol array (not an option chain or quotes body)');
  }
  const rows = symbols.length;
  const rejects: Reject[] = [];
  const mismatched = Object.entries(body).filter(([, v]) => Array.isArray(v) && v.length !== rows);
  if (mismatched.length > 0) {
    const lengths = mismatched.map(([key, v]) => `${key} has ${(v as unknown[]).length}`).join(', ');
    const reason = `arrays of unequal length: optionSymbol has ${rows} items, ${lengths}`;
    if (!options.skipInvalid) throw new IngestError(file, undefined, reason);
    rejects.push({
      file,
      line: undefined,
      reason: `${reason}; ignored ${mismatched.map(([k]) => k).join(', ')}`,
    });
  }
  const ignored = new Set(mismatched.map(([key]) => key));
  const array = (key: string): readonly unknown[] | undefined => {
    const value = body[key];
    return Array.isArray(value) && !ignored.has(key) ? value : undefined;
  };

  const out: Record<string, unknown[]> = {};
  const column = (name: string): unknown[] => {
    out[name] ??= new Array(rows).fill(null);
    return out[name]!;
  };
  for (let i = 0; i < rows; i++) {
    const problem = stageRow(i, array, column);
    column('_line')[i] = i + 1;
    if (problem !== undefined) column('_reject')[i] = problem;
  }
  const quotes = stagingTable(options, 'option_quotes');
  const hints = CONTRACT_HINTS;
  await sql.run(
    `ALTER TABLE ${q(quotes)} ADD COLUMN _oi BIGINT; ALTER TABLE ${q(quotes)} ADD COLUMN _listed DATE`,
  );
  try {
    await appendByName(sql, quotes, out);
    await insertOpenInterest(sql, stagingTable(options, 'open_interest'), quotes, '_oi', 'previous');
    if (out['_listed'] !== undefined) {
      await sql.run(
        `${hints.create}; INSERT INTO ${hints.table} (underlying, option_symbol, first_traded)
         SELECT underlying, option_symbol, _listed FROM ${q(quotes)} WHERE _listed IS NOT NULL AND _reject IS NULL`,
      );
    }
  } finally {
    await sql.run(
      `ALTER TABLE ${q(quotes)} DROP COLUMN IF EXISTS _oi; ALTER TABLE ${q(quotes)} DROP COLUMN IF EXISTS _listed`,
    );
  }
  return { rows, rejects };
}

/** Fills row `i` of the output columns; returns the row's first problem, if any. */
function stageRow(
  i: number,
  array: (key: string) => readonly unknown[] | undefined,
  column: (name: string) => unknown[],
): string | undefined {
  let problem: string | undefined;
  const note = (text: string): void => {
    problem ??= text;
  };
  const symbol = array('optionSymbol')?.[i];
  if (typeof symbol !== 'string') {
    note(
      symbol === null || symbol === undefined
        ? 'missing value: optionSymbol'
        : `wrong type: optionSymbol ${describe(symbol)} is not a string`,
    );
  } else column('option_symbol')[i] = symbol;
  const parts = typeof symbol === 'string' ? tryParseOccSymbol(symbol) : undefined;
  if (typeof symbol === 'string' && parts === undefined) note(`invalid OCC symbol: ${symbol}`);

  const underlying = array('underlying')?.[i] ?? parts?.root;
  if (typeof underlying === 'string') column('underlying')[i] = underlyingOfRoot(underlying);
  else if (underlying !== undefined && underlying !== null)
    note(`wrong type: underlying ${describe(underlying)} is not a string`);

  const updated = array('updated')?.[i];
  const instant = instantOf(updated);
  if (updated === undefined || updated === null) note('missing value: updated');
  else if (instant === undefined)
    note(`wrong type: updated ${describe(updated)} is not a unix time or timestamp`);
  else {
    try {
      const date = toEtDate(instant);
      column('session_date')[i] = isSession(date) ? date : previousSession(date);
      column('quote_time')[i] = instant;
      column('volume_time')[i] = instant;
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      note(`updated ${describe(updated)} is outside the calendar`);
    }
  }

  const listed = array('firstTraded')?.[i];
  if (listed !== undefined && listed !== null) {
    const opening = instantOf(listed);
    if (opening === undefined)
      note(`wrong type: firstTraded ${describe(listed)} is not a unix time or timestamp`);
    else {
      try {
        column('_listed')[i] = toEtDate(opening);
      } catch (error) {
        if (!(error instanceof RangeError)) throw error;
        note(`firstTraded ${describe(listed)} is outside the calendar`);
      }
    }
  }

  const side = array('side')?.[i];
  if (parts !== undefined && side !== undefined && side !== null && side !== parts.side) {
    note(`side ${describe(side)} disagrees with OCC symbol ${symbol}`);
  }
  const strike = array('strike')?.[i];
  if (parts !== undefined && typeof strike === 'number' && Math.abs(strike - parts.strike) > 1e-9) {
    note(`strike ${strike} disagrees with OCC symbol ${symbol}`);
  }

  const number = (
    key: string,
    name: string,
    check: (v: number) => boolean,
    expect: string,
    keep = true,
  ): void => {
    const value = array(key)?.[i];
    if (value === undefined || value === null) return;
    if (typeof value !== 'number' || !check(value))
      note(`wrong type: ${key} ${describe(value)} is not ${expect}`);
    else if (keep) column(name)[i] = value;
  };
  for (const [key, name] of Object.entries(PRICES)) number(key, name, Number.isFinite, 'a number');
  for (const [key, name] of Object.entries(COUNTS)) number(key, name, Number.isSafeInteger, 'a whole number');
  number('openInterest', '_oi', Number.isSafeInteger, 'a whole number');
  for (const [key, name] of Object.entries(GREEKS)) {
    const value = array(key)?.[i];
    number(
      key,
      name,
      (v) => !Number.isNaN(v),
      'a number',
      typeof value === 'number' && Math.abs(value) < 10_000,
    );
  }
  return problem;
}

/** Appends columns given by name, in the table's own column order (absent columns are NULL). */
async function appendByName(
  sql: SqlSession,
  table: string,
  columns: Record<string, unknown[]>,
): Promise<void> {
  const names = await sql.all<{ name: string }>(
    `SELECT column_name AS name FROM duckdb_columns() WHERE table_name = $1 AND NOT internal ORDER BY column_index`,
    [table],
  );
  const length = columns['_line']?.length ?? 0;
  if (length === 0) return;
  await sql.append(
    table,
    names.map((n) => columns[n.name]),
  );
}

/** Saved option chain / option quotes response bodies of the service. */
export const marketDataJsonFormat: IngestFormat = {
  name: 'marketdata-json',
  description: 'Saved /v1/options/chain or /v1/options/quotes response bodies (q = updated)',
  stage,
};
