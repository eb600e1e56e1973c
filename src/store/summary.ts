/** A description of a store's content: what `pitchain info` prints and backtest reports cite. */
import type { ProvenanceEntry } from './manifest.js';
import { TABLES, type TableName } from './schema.js';
import type { StoreReader } from './store.js';

export type TableSummary = { table: TableName; rows: number; files: number; bytes: number };

export type StoreSummary = {
  dataVersion: string;
  committedAt: string;
  tables: TableSummary[];
  underlyings: string[];
  stockSymbols: string[];
  sessions: { first: string | null; last: string | null; count: number };
  optionRows: number;
  bytesPerOptionRow: number | null;
  provenance: ProvenanceEntry[];
};

/**
 * The first and last session the reader's option quotes and stock bars hold. The manifest records each
 * file's session range, so this costs no query unless a file from an older store lacks one.
 */
export async function heldSessions(
  reader: StoreReader,
): Promise<{ first: string | null; last: string | null }> {
  const files = [...reader.manifest.tables.option_quotes, ...reader.manifest.tables.stock_bars];
  if (files.some((file) => file.sessions === undefined)) {
    const { first, last } = (await summarizeStore(reader)).sessions;
    return { first, last };
  }
  let first: string | null = null;
  let last: string | null = null;
  for (const { sessions } of files) {
    if (first === null || sessions!.first < first) first = sessions!.first;
    if (last === null || sessions!.last > last) last = sessions!.last;
  }
  return { first, last };
}

/** Summarises the version a reader is pinned to. */
export async function summarizeStore(reader: StoreReader): Promise<StoreSummary> {
  const manifest = reader.manifest;
  const tables = (Object.keys(TABLES) as TableName[]).map((table) => {
    const files = manifest.tables[table];
    return {
      table,
      rows: files.reduce((n, f) => n + f.rows, 0),
      files: files.length,
      bytes: files.reduce((n, f) => n + f.bytes, 0),
    };
  });
  const underlyings = await reader.sql.all<{ underlying: string }>(
    'SELECT DISTINCT underlying FROM contracts ORDER BY 1',
  );
  const symbols = await reader.sql.all<{ symbol: string }>(
    'SELECT DISTINCT symbol FROM stock_bars ORDER BY 1',
  );
  const [sessions] = await reader.sql.all<{ first: string | null; last: string | null; count: number }>(
    `SELECT min(session_date) AS first, max(session_date) AS last, count(DISTINCT session_date) AS count
     FROM (SELECT session_date FROM option_quotes UNION ALL SELECT session_date FROM stock_bars)`,
  );
  const optionRows = tables.find((t) => t.table === 'option_quotes')!.rows;
  const totalBytes = tables.reduce((n, t) => n + t.bytes, 0);
  return {
    dataVersion: manifest.dataVersion,
    committedAt: manifest.committedAt,
    tables,
    underlyings: underlyings.map((u) => u.underlying),
    stockSymbols: symbols.map((s) => s.symbol),
    sessions: sessions ?? { first: null, last: null, count: 0 },
    optionRows,
    bytesPerOptionRow: optionRows === 0 ? null : totalBytes / optionRows,
    provenance: manifest.provenance,
  };
}
