/**
 * `csv`: any other option-chain CSV, described by a mapping (JSON, `--mapping <file>`, inline, or a preset
 * name such as `optionsdx`; the shape is in `./csv-mapping-schema.ts`). Each canonical field names a column
 * (`"bid": "Bid"`), a column with a factor (`"strike": {"column": "K", "scale": 0.001}`), one part of a
 * composite column (`{"column": "C_SIZE", "part": 0, "separator": "x"}` reads 12 from `"12 x 30"`) or a
 * constant (`{"value": "SPY"}`). Header names are matched cleaned: BOM, surrounding spaces and one pair of
 * brackets dropped (`" [C_BID]"` is `C_BID`). The contract is an OCC symbol column or key columns
 * (root/underlying, expiration, side with a value map, strike); without a root or underlying, `--symbol`
 * gives it. A wide row holding a call and a put gives each side's columns under `sides` and yields one
 * quote per side. Nothing in a mapping is SQL: column names become positions, formats and values are
 * bound as parameters.
 *
 * Timing conventions, stated by the mapping:
 * - `quoteTime`: a wall time (`"16:00"`, in `timeZone` on the session date), `"close"` (the session's
 *   close: 16:00 ET, 13:00 on early-close days), `{"beforeClose": 14}` (minutes before that close) or
 *   `{"column", "format"}` (a strptime format; without `%z` the time is wall time in `timeZone`; `"unix"`
 *   for epoch seconds). Default `"16:00"`.
 * - `sessionDate`: a date column (`dateFormat`); without one, the ET date of the quote time.
 * - `volumeTime`: `"quote"` (volume as of the quote time, the default) or `"close"` (a full-session
 *   figure, known at the session's close).
 * - `openInterest`: a column, or `{"column", "settled": "previous" | "same", "publishedFromOpen"}`:
 *   `previous` (default) = the figure on the row dated D was settled from the session before D and
 *   published 09:30 ET of D; `same` = settled from D, published 09:30 ET of the next session;
 *   `publishedFromOpen` moves that publication by minutes (−180: 06:30 ET).
 * Prices (`bid`, `ask`, `last`, `underlyingPrice`, `strike`) are divided by `priceScale` (a file in
 * 1/10000 dollars has 10000) unless the field gives its own `scale` (a factor). `lastZeroIsNoTrade` stores
 * a `last` of 0 on a row without volume as NULL. IV and Greeks beyond the store's DECIMAL(10,6)
 * (|x| ≥ 10000) are stored as NULL. A Saturday expiration becomes the session before it.
 * - `multiplier`: each row also states its contract to the commit (`CONTRACT_HINTS`):
 *   listed by the row's session, nonstandard when the multiplier is not 100 (a vendor's definitions file,
 *   with `"quotes": false`, states only that).
 */
import { IngestError, UsageError } from '../../errors.js';
import { MARKET_ZONE, underlyingOfRoot } from '../../market-time/index.js';
import { OCC_SYMBOL_SQL_REGEX } from '../../occ/index.js';
import { CONTRACT_HINTS } from '../../store/derived-contracts.js';
import { quoteIdentifier as q, type SqlSession, type SqlValue } from '../../store/sql.js';
import { insertOpenInterest, SESSIONS_TABLE } from '../calendar-table.js';
import {
  type CsvCheck,
  type CsvField,
  type CsvHeader,
  decimalSql,
  greekSql,
  integerSql,
  occKeyChecks,
  occPartsSql,
  rawColumn,
  readCsvHeader,
  readCsvInto,
  remapColumn,
  writeOccSymbols,
} from '../csv-source.js';
import { GREEKS } from '../greek-units.js';
import { type ColumnSpec, loadOptionMapping, type OptionMapping } from './csv-mapping-schema.js';
import {
  type IngestFormat,
  type Reject,
  type StageOptions,
  type StageResult,
  stagingTable,
} from './types.js';

export {
  loadOptionMapping,
  type OptionMapping,
  OptionMappingSchema,
  parseOptionMapping,
} from './csv-mapping-schema.js';

/** The options of the `csv` format: `symbol` names the underlying when the mapping gives none. */
export type MappingStageOptions = StageOptions & { readonly symbol?: string };

/** Scratch columns added to the file's quotes table while it is staged. */
const SCRATCH = {
  _root: 'VARCHAR',
  _expiration: 'DATE',
  _side: 'VARCHAR',
  _strike: 'DECIMAL(12,3)',
  _oi: 'BIGINT',
  _oi_settled: 'DATE',
  _oi_published: 'TIMESTAMPTZ',
  _keep: 'BOOLEAN',
  _multiplier: 'DOUBLE',
};

/** A header name as a mapping names it: BOM, surrounding spaces and one pair of brackets dropped. */
export function cleanColumnName(name: string): string {
  const bare = name.replace(/^\uFEFF/, '').trim();
  const bracketed = /^\[(.*)\]$/.exec(bare);
  return (bracketed === null ? bare : bracketed[1]!).trim();
}

/**
 * How the mapping's values are read from one file: its header, the SQL parameters bound so far, and the
 * typed fields (`CsvField`) added for the careful read.
 */
class FieldReader {
  readonly params: SqlValue[] = [];
  readonly fields: CsvField[] = [];
  private readonly index = new Map<string, number>();
  private dateFormat: string | undefined;
  private zone: string | undefined;

  constructor(
    private readonly file: string,
    readonly header: CsvHeader,
    readonly mapping: OptionMapping,
  ) {
    header.names.forEach((name, i) => {
      const clean = cleanColumnName(name);
      if (this.index.has(clean)) {
        throw new IngestError(file, header.line, `duplicate column "${clean}" in header`);
      }
      this.index.set(clean, i);
    });
  }

  /** Binds a value as the next parameter; returns its placeholder. */
  bind = (value: SqlValue): string => {
    this.params.push(value);
    return `$${this.params.length}`;
  };

  /** Whether the file has the column a spec reads (a constant always reads). */
  present(spec: ColumnSpec): boolean {
    if (typeof spec === 'object' && 'value' in spec) return true;
    const names = typeof spec === 'string' ? [spec] : 'mid' in spec ? spec.mid : [spec.column];
    return names.every((name) => this.index.has(cleanColumnName(name)));
  }

  /** The text of a spec, as SQL: its column's trimmed text (or the part of it), or the constant. */
  raw(spec: ColumnSpec): string {
    if (typeof spec === 'object' && 'value' in spec) return this.bind(String(spec.value));
    if (typeof spec === 'object' && 'mid' in spec) return this.raw(spec.mid[0]);
    const name = cleanColumnName(typeof spec === 'string' ? spec : spec.column);
    const position = this.index.get(name);
    if (position === undefined) {
      throw new IngestError(this.file, this.header.line || undefined, `no column "${name}" in the file`);
    }
    const text = `nullif(trim(${rawColumn(position)}), '')`;
    if (typeof spec === 'string' || spec.part === undefined) return text;
    return `nullif(trim(split_part(${text}, ${this.bind(spec.separator ?? 'x')}, ${spec.part + 1})), '')`;
  }

  /** Whether a field of this name was added. */
  has = (name: string): boolean => this.fields.some((f) => f.name === name);

  /** Adds the typed field `name` read from `spec` through `sqlOf` (nothing when the spec is absent). */
  add(
    name: string,
    spec: ColumnSpec | undefined,
    sqlOf: (raw: string) => string,
    extra: Partial<CsvField> = {},
  ): void {
    if (spec === undefined || !this.wanted(spec)) return;
    const raw = this.raw(spec);
    const label =
      typeof spec === 'string'
        ? spec
        : 'column' in spec
          ? spec.column
          : 'mid' in spec
            ? spec.mid[0]
            : String(spec.value);
    this.fields.push({ name, sql: sqlOf(raw), raw, label: cleanColumnName(label), ...extra });
  }

  /** Whether a spec is read: a column the mapping lists as optional and the file lacks is left out. */
  private wanted(spec: ColumnSpec): boolean {
    if (this.present(spec)) return true;
    const names =
      typeof spec === 'string' ? [spec] : 'mid' in spec ? spec.mid : 'column' in spec ? [spec.column] : [];
    const optional = new Set(this.mapping.optionalColumns.map(cleanColumnName));
    return !names.every((name) => optional.has(cleanColumnName(name)));
  }

  /** The factor a value is multiplied by: the spec's own `scale`, else `1 / priceScale` for prices. */
  private factor(spec: ColumnSpec, price: boolean): string | undefined {
    const own = typeof spec === 'object' && 'column' in spec ? spec.scale : undefined;
    const scale = this.mapping.priceScale;
    const factor = own ?? (price && scale !== 1 ? 1 / scale : undefined);
    return factor === undefined ? undefined : this.bind(factor);
  }

  date(name: string, spec: ColumnSpec | undefined): void {
    this.add(name, spec, (r) => `CAST(try_strptime(${r}, ${this.dateFormatParam()}) AS DATE)`, {
      expect: `a date in the format ${this.mapping.dateFormat}`,
      required: true,
    });
  }

  price(name: string, spec: ColumnSpec | undefined, type = 'DECIMAL(12,2)', required = false): void {
    if (spec === undefined) return;
    if (typeof spec === 'object' && 'mid' in spec) {
      if (!this.wanted(spec)) return;
      const quote = (column: string) =>
        decimalSql(this.raw(column), 'DECIMAL(14,4)', this.factor(column, true));
      const bid = quote(spec.mid[0]);
      const ask = quote(spec.mid[1]);
      const sql = `CASE WHEN ${bid} > 0 AND ${ask} > 0 THEN CAST((${bid} + ${ask}) / 2 AS ${type}) END`;
      this.fields.push({
        name,
        sql,
        raw: this.raw(spec.mid[0]),
        label: cleanColumnName(spec.mid[0]),
        expect: 'a number',
        parsed: bid,
      });
      return;
    }
    this.add(name, spec, (r) => decimalSql(r, type, this.factor(spec, true)), {
      expect: 'a number',
      required,
    });
  }

  whole(name: string, spec: ColumnSpec | undefined, type = 'BIGINT'): void {
    if (spec === undefined) return;
    const factor = this.factor(spec, false);
    const sqlOf = (r: string) =>
      factor === undefined ? integerSql(r, type) : integerSql(`(TRY_CAST(${r} AS DOUBLE) * ${factor})`, type);
    this.add(name, spec, sqlOf, { expect: 'a whole number' });
  }

  greek(name: string, spec: ColumnSpec | undefined): void {
    if (spec === undefined) return;
    const factor = this.factor(spec, false);
    this.add(name, spec, (r) => `TRY_CAST(${r} AS DOUBLE)${factor === undefined ? '' : ` * ${factor}`}`, {
      expect: 'a number',
    });
  }

  /** Upper-cased text: an index's `^` (Cboe's `^SPX`) and an OSI symbol's padding spaces dropped. */
  text(name: string, spec: ColumnSpec | undefined): void {
    this.add(name, spec, (r) => `upper(replace(ltrim(${r}, '^'), ' ', ''))`, { required: true });
  }

  /** The mapping's time zone, bound on first use: DuckDB refuses a parameter a statement does not use. */
  timeZone(): string {
    this.zone ??= this.bind(this.mapping.timeZone);
    return this.zone;
  }

  private dateFormatParam(): string {
    this.dateFormat ??= this.bind(this.mapping.dateFormat);
    return this.dateFormat;
  }
}

/** The contract's key fields: an OCC symbol, or root (or underlying), expiration, side and strike. */
function contractFields(reader: FieldReader, symbol: string | undefined): void {
  const m = reader.mapping;
  if (m.optionSymbol !== undefined) {
    reader.text('symbol', m.optionSymbol);
    return;
  }
  const root = m.root ?? m.underlying ?? (symbol === undefined ? undefined : { value: symbol });
  if (root === undefined) {
    throw new UsageError('the mapping names no root or underlying: give --symbol (e.g. --symbol SPY)');
  }
  reader.text('root', root);
  reader.date('expiration', m.expiration);
  reader.price('strike', m.strike, 'DECIMAL(12,3)', true);
  const side = m.side;
  if (side === undefined) return; // a wide row: each side is a quote of its own
  if (typeof side === 'object' && 'values' in side) {
    const cases = Object.entries(side.values).map(
      ([text, value]) => `WHEN ${reader.bind(text)} THEN '${value === 'call' ? 'call' : 'put'}'`,
    );
    reader.add('side', side.column, (r) => `CASE ${r} ${cases.join(' ')} END`, {
      expect: `one of ${Object.keys(side.values).join(', ')}`,
      required: true,
    });
  } else {
    reader.add(
      'side',
      side,
      (r) =>
        `CASE lower(${r}) WHEN 'c' THEN 'call' WHEN 'call' THEN 'call' WHEN 'p' THEN 'put' WHEN 'put' THEN 'put' END`,
      { expect: 'call or put', required: true },
    );
  }
}

type Sides = NonNullable<OptionMapping['sides']>;
type SideName = keyof Sides;
const SIDE_NAMES: readonly SideName[] = ['call', 'put'];

/** The spec of the open interest of a field set (a column, or its settlement rule's column). */
function openInterestColumn(oi: OptionMapping['openInterest']): ColumnSpec | undefined {
  if (oi === undefined) return undefined;
  return typeof oi === 'object' && ('settled' in oi || 'settledOn' in oi) ? oi.column : oi;
}

/**
 * The quote's value fields, from the mapping's top level (`prefix` '') or one side of a wide row
 * (`prefix` 'call_'/'put_', values of `values`).
 */
function valueFields(reader: FieldReader, values: Partial<Sides[SideName]>, prefix: string): void {
  reader.price(`${prefix}bid`, values.bid);
  reader.price(`${prefix}ask`, values.ask);
  reader.price(`${prefix}last`, values.last);
  reader.whole(`${prefix}bid_size`, values.bidSize, 'INTEGER');
  reader.whole(`${prefix}ask_size`, values.askSize, 'INTEGER');
  reader.whole(`${prefix}volume`, values.volume);
  for (const name of ['iv', 'delta', 'gamma', 'theta', 'vega'] as const)
    reader.greek(`${prefix}${name}`, values[name]);
  reader.whole(`${prefix}oi`, openInterestColumn(values.openInterest));
}

/**
 * SQL of each per-quote output (over `r`): a value of the top level, or on a wide row the call's and the
 * put's as a two-element `unnest` (the row yields the call, then the put). A side without the field
 * falls back to the top level's.
 */
function perQuote(
  reader: FieldReader,
  sides: boolean,
): (name: string, wrap?: (v: string) => string) => string {
  const one = (name: string): string => (reader.has(name) ? `r.${q(name)}` : 'NULL');
  return (name, wrap = (v) => v) => {
    if (!sides) return reader.has(name) ? wrap(one(name)) : 'NULL';
    const each = SIDE_NAMES.map((side) => (reader.has(`${side}_${name}`) ? `${side}_${name}` : name));
    if (each.every((n) => !reader.has(n))) return 'NULL';
    return `unnest([${each.map((n) => (reader.has(n) ? wrap(one(n)) : 'NULL')).join(', ')}])`;
  };
}

/**
 * SQL reading an instant with a strptime `format`: wall time in the mapping's zone unless the format has
 * `%z`; `"unix"` for epoch seconds.
 */
function instantSql(reader: FieldReader, format: string): (raw: string) => string {
  if (format === 'unix') return (r) => `to_timestamp(TRY_CAST(${r} AS DOUBLE))`;
  if (/%[zZ]/.test(format)) return (r) => `CAST(try_strptime(${r}, ${reader.bind(format)}) AS TIMESTAMPTZ)`;
  return (r) => `timezone(${reader.timeZone()}, try_strptime(${r}, ${reader.bind(format)}))`;
}

/** The mapping's row filter and stamped open interest: fields read besides the quote's own. */
function filterAndStampFields(reader: FieldReader): void {
  const where = reader.mapping.where;
  if (where !== undefined) {
    const values = where.equals.map((value) => reader.bind(value)).join(', ');
    reader.add('keep', where.column, (r) => `coalesce(${r} IN (${values}), false)`);
  }
  const oi = reader.mapping.openInterest;
  if (typeof oi === 'object' && 'settledOn' in oi) {
    const settled = oi.settledOn.format;
    reader.add(
      'oi_settled',
      oi.settledOn.column,
      (r) => `CAST(try_strptime(${r}, ${reader.bind(settled)}) AS DATE)`,
      {
        expect: `a time in the format ${settled}`,
      },
    );
    reader.add('oi_published', oi.publishedAt.column, instantSql(reader, oi.publishedAt.format), {
      expect: `a time in the format ${oi.publishedAt.format}`,
    });
  }
}

/** The quote time and session SQL of the mapping's timing rule (`quote_time` NULL: stamped after the read). */
function timing(reader: FieldReader): { session: string; quote: string } {
  const m = reader.mapping;
  const quoteTime = m.quoteTime;
  if (typeof quoteTime === 'object' && 'column' in quoteTime) {
    reader.add('quote_time', quoteTime.column, instantSql(reader, quoteTime.format), {
      expect: `a time in the format ${quoteTime.format}`,
      required: true,
    });
  }
  reader.date('session_date', m.sessionDate);
  const session = reader.has('session_date')
    ? 'r.session_date'
    : `CAST(timezone(${reader.bind(MARKET_ZONE)}, r.quote_time) AS DATE)`;
  const quote =
    typeof quoteTime === 'object'
      ? 'column' in quoteTime
        ? 'r.quote_time'
        : 'NULL'
      : quoteTime === 'close'
        ? 'NULL'
        : `timezone(${reader.timeZone()}, ${session} + CAST(${reader.bind(quoteTime)} AS TIME))`;
  return { session, quote };
}

/** Stamps quote and volume times that depend on the session's close, once the rows are in. */
async function stampCloseTimes(sql: SqlSession, quotes: string, mapping: OptionMapping): Promise<void> {
  const fromClose = (target: string, minutes: number): string =>
    `UPDATE ${q(quotes)} t SET ${target} = to_timestamp(epoch(s.close_at) - ${minutes * 60}) FROM ${q(SESSIONS_TABLE)} s WHERE s.session_date = t.session_date`;
  const quoteTime = mapping.quoteTime;
  const stamped = quoteTime === 'close' || (typeof quoteTime === 'object' && 'beforeClose' in quoteTime);
  if (stamped) {
    const minutes = typeof quoteTime === 'object' && 'beforeClose' in quoteTime ? quoteTime.beforeClose : 0;
    await sql.run(fromClose('quote_time', minutes));
  }
  if (mapping.volumeTime === 'close') await sql.run(fromClose('volume_time', 0));
  else if (stamped) await sql.run(`UPDATE ${q(quotes)} SET volume_time = quote_time`);
}

/**
 * States each staged row's contract to the commit (`CONTRACT_HINTS`): listed by the row's
 * session, nonstandard when its multiplier is not 100. The rows stating nothing valid are refused here, as
 * the shared validation never sees a definitions file's rows (they are not quotes): a problem found while
 * reading, a symbol that is not an OCC symbol, a multiplier not above 0.
 */
async function stateContracts(sql: SqlSession, file: string, quotes: string): Promise<Reject[]> {
  const hints = CONTRACT_HINTS;
  const occ = occPartsSql('option_symbol');
  const reason = `CASE WHEN _reject IS NOT NULL THEN _reject
    WHEN option_symbol IS NULL THEN 'missing value: option_symbol'
    WHEN NOT regexp_full_match(option_symbol, $1) OR ${occ.expiration} IS NULL OR coalesce(${occ.strike} = 0, true)
      THEN 'invalid OCC symbol: ' || option_symbol
    WHEN _multiplier <= 0 THEN 'multiplier ' || CAST(_multiplier AS VARCHAR) || ' is not above 0' END`;
  await sql.run(hints.create);
  await sql.run(
    `INSERT INTO ${hints.table} (underlying, option_symbol, first_traded, nonstandard)
     SELECT underlying, option_symbol, session_date, _multiplier <> 100 FROM ${q(quotes)} WHERE (${reason}) IS NULL`,
    [OCC_SYMBOL_SQL_REGEX],
  );
  const refused = await sql.all<{ line: number; reason: string }>(
    `SELECT _line AS line, ${reason} AS reason FROM ${q(quotes)} WHERE (${reason}) IS NOT NULL ORDER BY _line`,
    [OCC_SYMBOL_SQL_REGEX],
  );
  return refused.map((row) => ({ file, line: Number(row.line), reason: row.reason }));
}

async function stage(sql: SqlSession, file: string, options: MappingStageOptions): Promise<StageResult> {
  const mapping = await loadOptionMapping(options.mapping);
  const header: CsvHeader = mapping.header
    ? await readCsvHeader(file, mapping.delimiter)
    : { names: mapping.columns ?? [], line: 0 };
  const reader = new FieldReader(file, header, mapping);
  const wide = mapping.sides !== undefined;
  contractFields(reader, options.symbol?.trim().toUpperCase());
  if (mapping.underlying !== undefined) reader.text('underlying', mapping.underlying);
  const { session, quote } = timing(reader);
  valueFields(reader, mapping, '');
  reader.price('underlying_price', mapping.underlyingPrice, 'DECIMAL(14,4)');
  reader.greek('multiplier', mapping.multiplier);
  for (const side of SIDE_NAMES)
    if (mapping.sides !== undefined) valueFields(reader, mapping.sides[side], `${side}_`);
  filterAndStampFields(reader);

  const has = reader.has;
  const checks: CsvCheck[] = has('expiration')
    ? occKeyChecks(reader.bind, reader.raw(mapping.expiration!), reader.raw(mapping.strike!))
    : [];
  const value = perQuote(reader, wide);
  const column = (name: string): string => (has(name) ? `r.${q(name)}` : 'NULL');
  const lastOf = (side: string) => {
    const last = has(`${side}last`) ? `r.${q(`${side}last`)}` : column('last');
    const volume = has(`${side}volume`) ? `r.${q(`${side}volume`)}` : column('volume');
    return mapping.lastZeroIsNoTrade
      ? `CASE WHEN ${last} = 0 AND coalesce(${volume}, 0) = 0 THEN NULL ELSE ${last} END`
      : last;
  };
  const last = wide ? `unnest([${lastOf('call_')}, ${lastOf('put_')}])` : has('last') ? lastOf('') : 'NULL';
  const underlying = has('underlying')
    ? 'r.underlying'
    : has('root')
      ? 'r.root'
      : `CASE WHEN length(r.symbol) > 15 THEN left(r.symbol, length(r.symbol) - 15) END`;
  const greek = (name: string) => value(name, greekSql);

  const quotes = stagingTable(options, 'option_quotes');
  const scratch = Object.entries(SCRATCH);
  for (const [name, type] of scratch) await sql.run(`ALTER TABLE ${q(quotes)} ADD COLUMN ${q(name)} ${type}`);
  try {
    const read = await readCsvInto(
      sql,
      {
        file,
        columns: header.names.length,
        headerLine: header.line,
        delimiter: mapping.delimiter,
        ...(options.scan === undefined ? {} : { scan: options.scan }),
      },
      {
        target: quotes,
        fields: reader.fields,
        checks,
        params: reader.params,
        ...(wide ? { rowsPerRecord: 2 } : {}),
        outputs: {
          underlying,
          option_symbol: has('symbol') ? 'r.symbol' : 'NULL',
          session_date: session,
          quote_time: quote,
          bid: value('bid'),
          ask: value('ask'),
          bid_size: value('bid_size'),
          ask_size: value('ask_size'),
          last,
          volume: value('volume'),
          volume_time: mapping.volumeTime === 'quote' ? quote : 'NULL',
          underlying_price: column('underlying_price'),
          iv: greek('iv'),
          delta: greek('delta'),
          gamma: greek('gamma'),
          theta: greek('theta'),
          vega: greek('vega'),
          _root: has('root') ? 'r.root' : 'NULL',
          _expiration: column('expiration'),
          _side: wide ? `unnest(['call', 'put'])` : column('side'),
          _strike: column('strike'),
          _oi: value('oi'),
          _oi_settled: column('oi_settled'),
          _oi_published: column('oi_published'),
          _keep: has('keep') ? 'r.keep' : 'true',
          _multiplier: value('multiplier'),
        },
      },
    );
    // Rows the mapping's filter leaves out (other statistics) go before anything reads them.
    if (has('keep')) await sql.run(`DELETE FROM ${q(quotes)} WHERE NOT _keep`);
    await stampCloseTimes(sql, quotes, mapping);
    if (!has('symbol')) await writeOccSymbols(sql, quotes);
    await remapColumn(sql, quotes, 'underlying', underlyingOfRoot);
    const refused = mapping.multiplier === undefined ? [] : await stateContracts(sql, file, quotes);
    const oi = mapping.openInterest ?? mapping.sides?.call.openInterest ?? mapping.sides?.put.openInterest;
    if (typeof oi === 'object' && 'settledOn' in oi) {
      await sql.run(
        `INSERT INTO ${q(stagingTable(options, 'open_interest'))} (underlying, option_symbol, settled_session, published_at, open_interest, _line, _reject)
         SELECT underlying, option_symbol, _oi_settled, _oi_published, _oi, _line, _reject FROM ${q(quotes)} WHERE _oi IS NOT NULL`,
      );
    } else if (oi !== undefined) {
      const rule =
        typeof oi === 'object' && 'settled' in oi
          ? oi
          : { settled: 'previous' as const, publishedFromOpen: 0 };
      await insertOpenInterest(
        sql,
        stagingTable(options, 'open_interest'),
        quotes,
        '_oi',
        rule.settled,
        rule.publishedFromOpen * 60,
      );
    }
    // An open-interest report's rows gave their figures; they are not quotes.
    if (!mapping.quotes) await sql.run(`DELETE FROM ${q(quotes)}`);
    // A mapping states each column's factor: the units are the mapping's, not detected.
    const greeks = GREEKS.some((g) => has(g) || has(`call_${g}`) || has(`put_${g}`));
    return {
      rows: read.records + read.malformed.length,
      rejects: [...read.malformed, ...refused],
      ...(greeks ? { greeksUnits: 'as mapped' } : {}),
    };
  } finally {
    for (const [name] of scratch) await sql.run(`ALTER TABLE ${q(quotes)} DROP COLUMN IF EXISTS ${q(name)}`);
  }
}

/** Option-chain CSV files described by a mapping. */
export const csvMappingFormat: IngestFormat = {
  name: 'csv',
  readsCsv: true,
  description: 'Any option-chain CSV, described by a JSON mapping or a preset (--mapping optionsdx)',
  stage,
};
