/**
 * `pitchain verify --repair`: writes the derived files that intact Parquet files lack or have damaged —
 * session column files (`session-columns.ts`) of quote and open interest files, contract column files
 * (`contract-columns.ts`) of contracts files: a store written before they existed, or one whose derived
 * files were lost. Holds the writer lock, so it never runs beside an ingest or its garbage collection.
 */
import path from 'node:path';
import { StoreError } from '../errors.js';
import { contractColumnsPath, contractColumnsState } from './contract-columns.js';
import { writeContractColumns } from './contract-columns-write.js';
import { deepCheck, sessionColumnsState } from './integrity.js';
import { acquireWriterLock } from './lock.js';
import { type FileEntry, readManifest } from './manifest.js';
import {
  SESSION_COLUMN_READS,
  SessionColumnsFile,
  type SessionColumnsTable,
  sessionColumnsPath,
} from './session-columns.js';
import { rowsInSymbolOrder, sessionColumnsTemp, writeSessionColumns } from './session-columns-write.js';
import { SqlSession } from './sql.js';

/** How many derived files a repair wrote, of each kind. */
export type RepairCounts = { readonly sessionColumns: number; readonly contractColumns: number };

/**
 * Writes the missing or damaged session column files of the store in `dir` (one of an earlier format
 * counts as missing), those written before they recorded whether their sessions are in symbol order
 * (`SessionColumnsHeader.symbolOrder`), which readers then read whole, and the missing or damaged
 * contract column files; returns how many of each.
 */
export async function repairDerivedFiles(
  dir: string,
  onFile?: (done: number, total: number) => void,
): Promise<RepairCounts> {
  const lock = await acquireWriterLock(dir);
  let sql: SqlSession | undefined;
  try {
    const manifest = await readManifest(dir);
    if (manifest === undefined) throw new StoreError(`${dir} is not a pitchain store (no manifest.json)`);
    const tables = Object.keys(SESSION_COLUMN_READS) as SessionColumnsTable[];
    const all = tables.flatMap((table) => manifest.tables[table].map((entry) => ({ table, entry })));
    const contracts = manifest.tables.contracts;
    const total = all.length + contracts.length;
    let written = 0;
    let contractsWritten = 0;
    for (const [i, entry] of contracts.entries()) {
      const target = path.join(dir, contractColumnsPath(entry.path));
      if (
        (await contractColumnsState(target, entry.sha256, entry.rows)) !== 'intact' &&
        (await deepCheck(dir, 'contracts', entry)) === undefined
      ) {
        sql ??= await SqlSession.open({ memoryLimit: '1GB' });
        if (
          (await writeContractColumns(sql, path.join(dir, entry.path), entry.sha256, sessionColumnsTemp)) !==
          undefined
        )
          contractsWritten++;
      }
      onFile?.(i + 1, total);
    }
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
      onFile?.(contracts.length + i + 1, total);
    }
    return { sessionColumns: written, contractColumns: contractsWritten };
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
