/**
 * `pitchain verify --repair`: writes the session column files (`session-columns.ts`) that intact quote
 * and open interest files lack or have damaged: a store written before they existed, or one whose derived
 * files were lost. Holds the writer lock, so it never runs beside an ingest or its garbage collection.
 */
import path from 'node:path';
import { StoreError } from '../errors.js';
import { deepCheck, sessionColumnsState } from './integrity.js';
import { acquireWriterLock } from './lock.js';
import { type FileEntry, readManifest } from './manifest.js';
import {
  SESSION_COLUMN_READS,
  SessionColumnsFile,
  type SessionColumnsTable,
  sessionColumnsPath,
} from './session-columns.js';
import { rowsInSymbolOrder, writeSessionColumns } from './session-columns-write.js';
import { SqlSession } from './sql.js';

/**
 * Writes the missing or damaged session column files of the store in `dir`, and those written before
 * they recorded whether their sessions are in symbol order (`SessionColumnsHeader.symbolOrder`), which
 * readers then read whole; returns how many.
 */
export async function repairSessionColumns(
  dir: string,
  onFile?: (done: number, total: number) => void,
): Promise<number> {
  const lock = await acquireWriterLock(dir);
  let sql: SqlSession | undefined;
  try {
    const manifest = await readManifest(dir);
    if (manifest === undefined) throw new StoreError(`${dir} is not a pitchain store (no manifest.json)`);
    const tables = Object.keys(SESSION_COLUMN_READS) as SessionColumnsTable[];
    const all = tables.flatMap((table) => manifest.tables[table].map((entry) => ({ table, entry })));
    let written = 0;
    for (const [i, { table, entry }] of all.entries()) {
      // A damaged Parquet file is left to `verify`'s report: a derived copy of it would be damaged too.
      const state = await sessionColumnsState(dir, entry);
      if (
        (state !== 'intact' || !orderRecorded(dir, entry)) &&
        (await deepCheck(dir, table, entry)) === undefined
      ) {
        sql ??= await SqlSession.open({ memoryLimit: '1GB' });
        // A file of any earlier writer: its rows' order within a session is checked, not taken on trust.
        const abs = path.join(dir, entry.path);
        await writeSessionColumns(sql, table, abs, entry.sha256, await rowsInSymbolOrder(sql, table, abs));
        written++;
      }
      onFile?.(i + 1, all.length);
    }
    return written;
  } finally {
    sql?.close();
    await lock.release();
  }
}

/** Whether the session column file of `entry` records whether its sessions are in symbol order. */
function orderRecorded(dir: string, entry: FileEntry): boolean {
  const file = SessionColumnsFile.open(
    path.join(dir, sessionColumnsPath(entry.path)),
    entry.sha256,
    entry.rows,
  );
  return file?.symbolOrderRecorded === true;
}
