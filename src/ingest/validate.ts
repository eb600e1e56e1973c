/**
 * The shared validation pass over one file's staging tables. Formats record what they find while parsing
 * (malformed rows, wrong types, disagreeing columns) in `_reject`; this pass adds the rules every option
 * row must satisfy whatever its source, and returns at most one reject per source line: the first broken
 * rule in this order —
 *   a format's own `_reject`; a missing required value; an invalid OCC symbol (shape or date); a session
 *   date that is not a session; a missing instant; a quote dated after the ingest; an expiration before
 *   the session; a quote crossed by more than a cent (bid > ask + 0.01, while 0/0 is "no market" and valid;
 *   a quote crossed by a cent at most is kept, and counted by the data-quality summary); a negative price,
 *   strike, underlying price, size, volume or open interest; a second row for the same contract and quote
 *   time.
 */
import { closureReason, MARKET_ZONE } from '../market-time/index.js';
import { OCC_SYMBOL_SQL_REGEX } from '../occ/index.js';
import { TABLES, type TableName } from '../store/schema.js';
import { quoteIdentifier as q, quoteLiteral, type SqlSession } from '../store/sql.js';
import { createSessionsTable, SESSIONS_TABLE } from './calendar-table.js';
import { occPartsSql, tempTableName } from './csv-source.js';
import type { Reject } from './formats/types.js';

/**
 * A rule: rows of the table for which `when` holds are refused with the SQL text `reason`. A rule that
 * needs a joined row (`s`, `v`) is `joined`; the others read the row alone.
 */
type Rule = { readonly when: string; readonly reason: string; readonly joined?: true };

const missing = (column: string): Rule => ({
  when: `t.${q(column)} IS NULL`,
  reason: `'missing value: ${column}'`,
});

/** Needs `v`, the row of the symbols table (`createSymbolsTable`) joined on the symbol. */
const invalidSymbol: Rule = {
  when: 'NOT v.valid',
  reason: `'invalid OCC symbol: ' || t.option_symbol`,
  joined: true,
};
/** Needs `s`, the sessions row joined on the column. */
const notASession = (column: string): Rule => ({
  when: `s.session_date IS NULL`,
  reason: `'not a session: ' || strftime(t.${q(column)}, '%Y-%m-%d')`,
  joined: true,
});
const negative = (column: string): Rule => ({
  when: `t.${q(column)} < 0`,
  reason: `'negative value: ${column} ' || CAST(t.${q(column)} AS VARCHAR)`,
});

/**
 * How far a bid may stand above its ask and still be kept: one cent, the smallest tick an option trades in.
 * A quote locked or crossed by a tick happens between exchanges for an instant and is flagged (`crossed` in
 * the data-quality summary); a wider one is a broken record.
 */
export const CROSSED_TOLERANCE = '0.01';

/** What validation compares with: the instant of the ingest (a quote cannot be dated after it). */
export type ValidationContext = { readonly now?: Date };

/** A quote dated after the ingest: its session starts after the ingest's ET date, or its instant is later. */
function fromTheFuture(now: Date): Rule {
  const instant = `TIMESTAMPTZ ${quoteLiteral(now.toISOString())}`;
  return {
    when: `t.quote_time > ${instant} OR t.session_date > CAST(timezone(${quoteLiteral(MARKET_ZONE)}, ${instant}) AS DATE)`,
    reason: `'quote dated after the ingest: session ' || strftime(t.session_date, '%Y-%m-%d') || ' is later than ${now.toISOString()}'`,
  };
}

function quoteRules(context: ValidationContext): readonly Rule[] {
  return [
    missing('option_symbol'),
    missing('underlying'),
    missing('session_date'),
    invalidSymbol,
    notASession('session_date'),
    missing('quote_time'),
    fromTheFuture(context.now ?? new Date()),
    ...QUOTE_VALUE_RULES,
  ];
}

const QUOTE_VALUE_RULES: readonly Rule[] = [
  {
    when: 'v.expiration < t.session_date',
    reason: `'expired contract: expiration ' || strftime(v.expiration, '%Y-%m-%d') || ' precedes session ' || strftime(t.session_date, '%Y-%m-%d')`,
    joined: true,
  },
  {
    when: `t.bid > t.ask + ${CROSSED_TOLERANCE}`,
    reason: `'crossed quote: bid ' || CAST(t.bid AS VARCHAR) || ' > ask ' || CAST(t.ask AS VARCHAR)`,
  },
  ...['bid', 'ask', 'last', 'underlying_price', 'bid_size', 'ask_size', 'volume'].map(negative),
];

const OPEN_INTEREST_RULES: readonly Rule[] = [
  missing('option_symbol'),
  missing('underlying'),
  missing('open_interest'),
  invalidSymbol,
  missing('settled_session'),
  missing('published_at'),
  notASession('settled_session'),
  negative('open_interest'),
];

const DUPLICATE_QUOTE_KEY = ['option_symbol', 'session_date', 'quote_time'];

/** Those of `names` that exist and hold rows: an empty table has nothing to validate, and leaving it out spares every query a part. */
async function tablesWithRows(sql: SqlSession, names: readonly string[]): Promise<Set<string>> {
  const rows = await sql.all<{ name: string }>('SELECT DISTINCT table_name AS name FROM duckdb_tables()');
  const existing = new Set(rows.map((r) => r.name));
  const present = names.filter((name) => existing.has(name));
  if (present.length === 0) return new Set();
  const counts = await sql.rowCounts(present);
  return new Set(present.filter((_, i) => counts[i]! > 0));
}

/**
 * A temp table of the distinct symbols of `tables` (`option_symbol`, `valid`, `expiration`): the OCC
 * checks run once per contract instead of once per row.
 */
async function createSymbolsTable(sql: SqlSession, name: string, tables: readonly string[]): Promise<void> {
  const occ = occPartsSql('option_symbol');
  const symbols = tables.map((t) => `SELECT option_symbol FROM ${q(t)}`).join(' UNION ');
  await sql.run(
    `CREATE TEMP TABLE ${q(name)} AS
     SELECT option_symbol, regexp_full_match(option_symbol, $1) AND ${occ.expiration} IS NOT NULL AND ${occ.strike} <> 0 AS valid,
            CASE WHEN regexp_full_match(option_symbol, $1) THEN ${occ.expiration} END AS expiration
     FROM (${symbols}) WHERE option_symbol IS NOT NULL`,
    [OCC_SYMBOL_SQL_REGEX],
  );
}

/**
 * One scan of a table: the first rule each row breaks (its own `_reject` first), joined to the sessions
 * row of `sessionColumn` for the session rule and to the symbols table for the OCC rules.
 */
function ruleSelect(table: string, rules: readonly Rule[], sessionColumn?: string, symbols?: string): string {
  const cases = rules.map((rule) => `WHEN ${rule.when} THEN ${rule.reason}`).join(' ');
  let join = '';
  if (sessionColumn !== undefined) {
    join += ` LEFT JOIN ${q(SESSIONS_TABLE)} s ON s.session_date = t.${q(sessionColumn)}`;
  }
  if (symbols !== undefined) join += ` LEFT JOIN ${q(symbols)} v ON v.option_symbol = t.option_symbol`;
  return `SELECT line, reason FROM (
            SELECT t._line AS line, CASE WHEN t._reject IS NOT NULL THEN t._reject ${cases} END AS reason
            FROM ${q(table)} t ${join}
          ) WHERE reason IS NOT NULL`;
}

/** One staging table to validate: its canonical name and the name of the table holding the file's rows. */
type Target = readonly [TableName, string];

/**
 * Whether any rule would refuse any row, answered set-wise without joining rows to the sessions and
 * symbols: the row-alone rules in one scan per table, the joined ones per distinct session date and per
 * contract (a contract expired before the last session it is quoted on), the duplicate rule by counting
 * distinct key hashes. Usually nothing is refused and the per-row pass (`ruleSelect`) never runs. One
 * query, its tests as rows of a union: scalar subqueries cost more to plan, which is most of the time
 * on a small file. `duplicates` tells whether two quotes share a key.
 */
async function anyRefused(
  sql: SqlSession,
  targets: readonly Target[],
  context: ValidationContext,
): Promise<{ refused: boolean; duplicates: boolean }> {
  const tests: string[] = [];
  const symbolSources: string[] = [];
  // A row of the union: whether the test finds something, and whether it looks for a refusal (0) or a
  // duplicate (1).
  const test = (kind: 0 | 1, found: string, from: string) =>
    `SELECT ${kind} AS kind, ${found} AS x FROM ${from}`;
  // A join, not a filter, on the distinct dates: DuckDB would push a filter down to every row.
  const sessionDates = (name: string, column: string) =>
    test(
      0,
      'count(*) > 0',
      `(SELECT DISTINCT ${q(column)} AS d FROM ${q(name)}) x
       LEFT JOIN ${q(SESSIONS_TABLE)} s ON s.session_date = x.d WHERE s.session_date IS NULL`,
    );
  for (const [table, name] of targets) {
    const rules =
      table === 'option_quotes' ? quoteRules(context) : table === 'open_interest' ? OPEN_INTEREST_RULES : [];
    const alone = rules.filter((rule) => !rule.joined).map((rule) => rule.when);
    const where = ['t._reject IS NOT NULL', ...alone].join(' OR ');
    tests.push(test(0, 'count(*) > 0', `(SELECT 1 FROM ${q(name)} t WHERE ${where} LIMIT 1)`));
    if (table === 'option_quotes') {
      // Equal keys hash alike, so as many distinct key hashes as rows rules out a duplicate; counting
      // hashes costs less than grouping by the keys themselves, and usually no key repeats.
      const key = DUPLICATE_QUOTE_KEY.map(q).join(', ');
      tests.push(test(1, `count(*) <> count(DISTINCT hash(${key}))`, q(name)));
      tests.push(sessionDates(name, 'session_date'));
      symbolSources.push(`SELECT option_symbol, session_date AS last_session FROM ${q(name)}`);
    } else if (table === 'open_interest') {
      tests.push(sessionDates(name, 'settled_session'));
      // Named: when no quote table comes first, the union takes its column names from this branch.
      symbolSources.push(`SELECT option_symbol, CAST(NULL AS DATE) AS last_session FROM ${q(name)}`);
    }
  }
  if (symbolSources.length > 0) {
    // One group per contract over all sources, and the symbol's parts taken once.
    const occ = occPartsSql('option_symbol');
    const refused = `CASE WHEN regexp_full_match(option_symbol, $1)
      THEN expiration IS NULL OR coalesce(strike = 0, false) OR coalesce(expiration < last_session, false)
      ELSE true END`;
    tests.push(
      test(
        0,
        `coalesce(bool_or(${refused}), false)`,
        `(SELECT option_symbol, last_session, ${occ.expiration} AS expiration, ${occ.strike} AS strike FROM (
           SELECT option_symbol, max(last_session) AS last_session FROM (${symbolSources.join(' UNION ALL ')})
           WHERE option_symbol IS NOT NULL GROUP BY ALL))`,
      ),
    );
  }
  if (tests.length === 0) return { refused: false, duplicates: false };
  const [row] = await sql.all<{ refused: boolean; duplicates: boolean }>(
    `SELECT coalesce(bool_or(x) FILTER (WHERE kind = 0), false) AS refused,
            coalesce(bool_or(x) FILTER (WHERE kind = 1), false) AS duplicates
     FROM (${tests.join('\n     UNION ALL ')})`,
    symbolSources.length > 0 ? [OCC_SYMBOL_SQL_REGEX] : [],
  );
  return { refused: row!.refused || row!.duplicates, duplicates: row!.duplicates };
}

/** The staging tables to validate (`tables` as for `validateStaging`): those holding rows. */
async function validationTargets(
  sql: SqlSession,
  tables: Partial<Record<TableName, string>>,
): Promise<Target[]> {
  await createSessionsTable(sql);
  const names = (Object.keys(TABLES) as TableName[]).map((table) => [table, tables[table] ?? table] as const);
  const present = await tablesWithRows(
    sql,
    names.map(([, name]) => name),
  );
  return names.filter(([, name]) => present.has(name));
}

/**
 * Whether `validateStaging` would refuse any row of these tables, without finding which: the cheap,
 * set-wise half of validation, for a format that can stage the file again with line numbers if so.
 */
export async function anyRowRefused(
  sql: SqlSession,
  tables: Partial<Record<TableName, string>> = {},
  context: ValidationContext = {},
): Promise<boolean> {
  return (await anyRefused(sql, await validationTargets(sql, tables), context)).refused;
}

/**
 * Validates the staging tables of one file (`tables` maps canonical names to the tables holding this
 * file's rows; default the canonical names) and returns the rejects, one per line, in line order. The
 * tables are not changed. Creates the `sessions` table if needed.
 */
export async function validateStaging(
  sql: SqlSession,
  file: string,
  tables: Partial<Record<TableName, string>> = {},
  context: ValidationContext = {},
): Promise<Reject[]> {
  const targets = await validationTargets(sql, tables);
  const { refused, duplicates } = await anyRefused(sql, targets, context);
  if (!refused) return [];
  const symbolTables = targets
    .filter(([table]) => table === 'option_quotes' || table === 'open_interest')
    .map(([, name]) => name);
  const symbols = tempTableName('symbols');
  if (symbolTables.length > 0) await createSymbolsTable(sql, symbols, symbolTables);
  const selects: string[] = [];
  for (const [table, name] of targets) {
    if (table === 'option_quotes') {
      selects.push(ruleSelect(name, quoteRules(context), 'session_date', symbols));
      const key = DUPLICATE_QUOTE_KEY.map(q).join(', ');
      if (duplicates)
        selects.push(
          `SELECT t._line AS line, 'duplicate row: same contract and quote time as line ' || CAST(d.first AS VARCHAR) AS reason
         FROM ${q(name)} t JOIN (
           SELECT ${key}, min(_line) AS first FROM ${q(name)} GROUP BY ${key} HAVING count(*) > 1
         ) d USING (${key})
         WHERE t._line > d.first`,
        );
    } else if (table === 'open_interest') {
      selects.push(ruleSelect(name, OPEN_INTEREST_RULES, 'settled_session', symbols));
    } else {
      selects.push(ruleSelect(name, []));
    }
  }
  if (selects.length === 0) return [];
  let rows: { line: number | null; reason: string }[];
  try {
    // One reason per line: the quote table's (listed first) wins over open interest's and the duplicate rule.
    rows = await sql.all<{ line: number | null; reason: string }>(
      `SELECT line, arg_min(reason, source) AS reason FROM (
         ${selects.map((select, i) => `SELECT line, reason, ${i} AS source FROM (${select})`).join('\nUNION ALL\n')}
       ) GROUP BY line ORDER BY line NULLS FIRST`,
    );
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${q(symbols)}`);
  }
  return rows.map((row) => ({
    file,
    line: row.line === null ? undefined : Number(row.line),
    reason: withClosureReason(row.reason),
  }));
}

/** `not a session: 2018-01-15` → `not a session: 2018-01-15 (Martin Luther King Jr. Day)`. */
function withClosureReason(reason: string): string {
  const match = /^not a session: (\d{4}-\d{2}-\d{2})$/.exec(reason);
  if (match === null) return reason;
  try {
    const why = closureReason(match[1]!);
    return why === undefined ? reason : `${reason} (${why})`;
  } catch {
    return `${reason} (outside the calendar)`;
  }
}
