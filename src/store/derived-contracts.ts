/**
 * The contracts a commit adds: every staged symbol the store does not list yet, its terms read from the
 * OCC symbol and classified by market time (expiration instant, settlement, monthly/weekly/quarterly),
 * its listing date the earliest it was seen or stated, and whether it is adjusted (nonstandard).
 */
import {
  classifyExpiration,
  expirationSeconds,
  MARKET_ZONE,
  settlementOf,
  underlyingOfRoot,
} from '../market-time/index.js';
import { readParquetSql } from './parquet.js';
import { TABLE_PARTITIONS } from './schema.js';
import type { SqlSession } from './sql.js';

const OCC_PARTS = '^([A-Z0-9]{1,6})(\\d{2})(\\d{2})(\\d{2})([CP])(\\d{8})$';

/**
 * A staging table of what a source states about a contract besides its rows, which a format fills (after
 * running `create`) and `deriveContracts` folds in: a listing date (`first_traded`: a service body's
 * `firstTraded`, a vendor definition's date), kept when earlier than any session seen; and the vendor's
 * word on its deliverable (`nonstandard`: a multiplier other than 100), which stays with the stored
 * contract until a source says otherwise.
 */
export const CONTRACT_HINTS = {
  table: 'contract_hints',
  create:
    'CREATE TABLE IF NOT EXISTS contract_hints (underlying VARCHAR, option_symbol VARCHAR, first_traded DATE, nonstandard BOOLEAN)',
} as const;

/**
 * Adds to the staging `contracts` table a row for every staged symbol it lacks, classified by market time;
 * keeps the earliest first_traded of the staged rows, the hints and the store's own contracts
 * (`storedFiles`: the contract files the commit can read).
 */
export async function deriveContracts(sql: SqlSession, storedFiles: readonly string[]): Promise<void> {
  const hints = CONTRACT_HINTS;
  await sql.run(
    `${hints.create}; CREATE TEMP TABLE hinted AS SELECT underlying, option_symbol,
       min(first_traded) AS first_traded, bool_or(nonstandard) AS nonstandard FROM ${hints.table} GROUP BY ALL`,
  );
  // Rows collapse to one per contract before anything else: the time-zone conversion and the anti-join
  // then run per contract, not per row (the first publication gives the first session, as the conversion
  // never goes back in time).
  await sql.run(
    `
    CREATE TEMP TABLE seen AS
    WITH quoted AS (
      SELECT underlying, option_symbol, min(session_date) AS first_seen FROM option_quotes GROUP BY ALL
    ), published AS (
      SELECT underlying, option_symbol, min(published_at) AS first_published FROM open_interest GROUP BY ALL
    )
    SELECT underlying, option_symbol, min(first_seen) AS first_seen FROM (
      SELECT underlying, option_symbol, first_seen FROM quoted
      UNION ALL
      -- A contract known only from open interest was listed by the session that published it.
      SELECT underlying, option_symbol, CAST(timezone($1, first_published) AS DATE) FROM published
      WHERE option_symbol NOT IN (SELECT option_symbol FROM quoted)
      -- A stated listing date: the contract was listed by then, quoted or not.
      UNION ALL SELECT underlying, option_symbol, first_traded FROM hinted WHERE first_traded IS NOT NULL
    ) GROUP BY ALL`,
    [MARKET_ZONE],
  );
  await sql.run(
    `
    CREATE TEMP TABLE parsed AS
    SELECT underlying, option_symbol, first_seen,
           left(m, length(m) - 15) AS root,
           make_date(2000 + substr(m, length(m) - 14, 2)::INTEGER,
                     substr(m, length(m) - 12, 2)::INTEGER,
                     substr(m, length(m) - 10, 2)::INTEGER) AS expiration,
           CASE substr(m, length(m) - 8, 1) WHEN 'C' THEN 'call' ELSE 'put' END AS side,
           right(m, 8)::DECIMAL(12,0) / 1000 AS strike
    FROM (
      -- Parts are read by position once the symbol matches; a symbol that does not becomes '' and
      -- fails the INTEGER cast, as it would from an empty regexp_extract group.
      SELECT s.underlying, s.option_symbol, s.first_seen,
             CASE WHEN s.option_symbol IS NULL OR regexp_full_match(s.option_symbol, $1) THEN s.option_symbol ELSE '' END AS m
      FROM seen s
      WHERE s.option_symbol NOT IN (SELECT option_symbol FROM contracts)
    )`,
    [OCC_PARTS],
  );
  const pairs = await sql.all<{ root: string; expiration: string }>(
    'SELECT DISTINCT root, expiration FROM parsed ORDER BY ALL',
  );
  await sql.run(
    'CREATE TEMP TABLE expiry (root VARCHAR, expiration DATE, expiration_time TIMESTAMPTZ, settlement VARCHAR, monthly BOOLEAN, weekly BOOLEAN, quarterly BOOLEAN, root_underlying VARCHAR)',
  );
  const cols: unknown[][] = [[], [], [], [], [], [], [], []];
  for (const { root, expiration } of pairs) {
    const settlement = settlementOf(root, expiration);
    const kind = classifyExpiration(expiration, root);
    const values = [
      root,
      expiration,
      expirationSeconds(expiration, settlement),
      settlement === 'am-index' ? 'AM' : 'PM',
      kind.monthly,
      kind.weekly,
      kind.quarterly,
      underlyingOfRoot(root),
    ];
    for (let i = 0; i < values.length; i++) cols[i]!.push(values[i]);
  }
  await sql.append('expiry', cols);
  const stored =
    storedFiles.length === 0
      ? 'SELECT NULL::VARCHAR AS option_symbol, NULL::DATE AS first_traded, NULL::BOOLEAN AS nonstandard LIMIT 0'
      : `SELECT option_symbol, min(first_traded) AS first_traded, bool_or(nonstandard) AS nonstandard
         FROM ${readParquetSql(storedFiles, TABLE_PARTITIONS.contracts)}
         WHERE option_symbol IN (SELECT option_symbol FROM parsed) GROUP BY ALL`;
  await sql.run(`
    INSERT INTO contracts BY NAME
    SELECT p.underlying, p.option_symbol, p.root, p.expiration, e.expiration_time, p.side, p.strike,
           e.settlement, e.monthly, e.weekly, e.quarterly,
           -- Adjusted (nonstandard) when the source files the contract under another underlying than its
           -- root's own (AAPL1 under AAPL after a split), never from the root's shape (T001 is a root);
           -- or when a source said so (a hint now, else the stored contract).
           p.underlying <> e.root_underlying OR coalesce(h.nonstandard, s.nonstandard, false) AS nonstandard,
           least(p.first_seen, coalesce(s.first_traded, p.first_seen)) AS first_traded,
           NULL AS _line
    FROM parsed p JOIN expiry e USING (root, expiration)
    LEFT JOIN (SELECT option_symbol, bool_or(nonstandard) AS nonstandard FROM hinted GROUP BY ALL) h USING (option_symbol)
    LEFT JOIN (${stored}) s USING (option_symbol)`);
}
