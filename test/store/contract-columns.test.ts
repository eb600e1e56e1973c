/**
 * Contract column files (`contract-columns.ts`): written at commit beside every contracts file, they give
 * an underlying's contract table with no statement, the same table DuckDB's read of the Parquet file makes;
 * a file that is not whole or not its Parquet file's is passed over for DuckDB, `verify` checks their
 * content, and `verify --repair` writes those missing or damaged.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ContractTable, contractTable } from '../../src/query/options/contract-table.js';
import { StoreCache } from '../../src/store/cache.js';
import {
  contractColumnsPath,
  contractColumnsState,
  readContractColumns,
} from '../../src/store/contract-columns.js';
import { writeContractColumns } from '../../src/store/contract-columns-write.js';
import { verifyFiles } from '../../src/store/integrity.js';
import { type FileEntry, readManifest } from '../../src/store/manifest.js';
import { repairDerivedFiles } from '../../src/store/session-columns-repair.js';
import { sessionColumnsTemp } from '../../src/store/session-columns-write.js';
import { SqlSession } from '../../src/store/sql.js';
import { StoreReader } from '../../src/store/store.js';
import { copySampleStore } from '../helpers/paths.js';
import { commitGenerated, simulatedStock } from '../query/options/generated-store.js';

/** A copy of the sample (SPY, SPX with its SPXW root, AAPL) with a contract column file per contracts file. */
let sample: string;
/** A store a commit wrote. */
let committed: string;

beforeAll(async () => {
  sample = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-contract-columns-'));
  await copySampleStore(sample);
  const sql = await SqlSession.open();
  try {
    for (const entry of (await readManifest(sample))!.tables.contracts) {
      await writeContractColumns(sql, path.join(sample, entry.path), entry.sha256, sessionColumnsTemp);
    }
  } finally {
    sql.close();
  }
  committed = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-contract-columns-commit-'));
  await commitGenerated(
    committed,
    simulatedStock(
      { from: '2021-03-01', to: '2021-03-31', seed: 5 },
      { weeklyDays: 14, monthlyMonths: 2, quarterlyMonths: 0, leapsYears: 0 },
    ),
    'generated',
  );
}, 120_000);

afterAll(async () => {
  await fs.rm(sample, { recursive: true, force: true });
  await fs.rm(committed, { recursive: true, force: true });
});

/** The contracts file of `underlying` in the store at `dir`. */
async function contractsEntry(dir: string, underlying: string): Promise<FileEntry> {
  const entry = (await readManifest(dir))!.tables.contracts.find(
    (file) => file.partition['underlying'] === underlying,
  );
  if (entry === undefined) throw new Error(`no contracts file of ${underlying}`);
  return entry;
}

/** `underlying`'s contract table as a fresh cache of `reader` makes it, and the statements it took. */
async function tableOf(
  reader: StoreReader,
  underlying: string,
): Promise<{ table: ContractTable; statements: number }> {
  const spy = vi.spyOn(reader.sql, 'typedColumns');
  try {
    const table = await contractTable(reader.sql, new StoreCache(() => reader.dataVersion), underlying);
    return { table, statements: spy.mock.calls.length };
  } finally {
    spy.mockRestore();
  }
}

/** Every column of a contract table, contract by contract, as plain values. */
function contentsOf(table: ContractTable) {
  return Array.from({ length: table.count }, (_, i) => [
    table.symbolAt(i),
    table.roots[table.root[i]!],
    table.expirationDay[i],
    table.expirationTime[i],
    table.strike[i],
    table.firstTradedDay[i],
    table.flags[i],
    table.hashes[i],
  ]);
}

describe('contract column files', () => {
  it('are written by a commit beside each contracts file, whole and its own', async () => {
    const entries = (await readManifest(committed))!.tables.contracts;
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) {
      const file = path.join(committed, contractColumnsPath(entry.path));
      expect(await contractColumnsState(file, entry.sha256, entry.rows), entry.path).toBe('intact');
      // Bound to its Parquet file: another content hash or row count is not this file's.
      expect(readContractColumns(file, '0'.repeat(64), entry.rows)).toBeUndefined();
      expect(readContractColumns(file, entry.sha256, entry.rows + 1)).toBeUndefined();
    }
  });

  it("make the table DuckDB's read of the Parquet file makes, with no statement", async () => {
    const withFiles = await StoreReader.open(sample);
    const throughDuckdb = await StoreReader.open(sample, { sessionColumns: false });
    try {
      for (const underlying of ['SPY', 'SPX', 'AAPL']) {
        const filed = await tableOf(withFiles, underlying);
        const read = await tableOf(throughDuckdb, underlying);
        expect([filed.statements, read.statements], underlying).toEqual([0, 1]);
        expect(filed.table.count, underlying).toBeGreaterThan(1_000);
        expect(contentsOf(filed.table), underlying).toEqual(contentsOf(read.table));
        expect(filed.table.roots, underlying).toEqual(read.table.roots);
        // The hash index numbers each contract alike.
        for (let i = 0; i < filed.table.count; i += 97) {
          expect(filed.table.keys?.get(filed.table.hashes[i]!)).toBe(i);
        }
      }
      // SPX lists two roots, each contract under its own.
      expect((await tableOf(withFiles, 'SPX')).table.roots).toEqual(expect.arrayContaining(['SPX', 'SPXW']));
    } finally {
      withFiles.close();
      throughDuckdb.close();
    }
  });

  it('are passed over for DuckDB when not whole or not their Parquet file’s', async () => {
    const expected = await (async () => {
      const reader = await StoreReader.open(sample, { sessionColumns: false });
      try {
        return contentsOf((await tableOf(reader, 'AAPL')).table);
      } finally {
        reader.close();
      }
    })();
    const file = path.join(sample, contractColumnsPath((await contractsEntry(sample, 'AAPL')).path));
    const written = await fs.readFile(file);
    const spy = path.join(sample, contractColumnsPath((await contractsEntry(sample, 'SPY')).path));
    const damages: [string, () => Promise<void>][] = [
      ['cut short', () => fs.writeFile(file, written.subarray(0, written.length - 100))],
      ['grown', () => fs.writeFile(file, Buffer.concat([written, Buffer.alloc(8)]))],
      [
        'its trailer’s length changed',
        async () => {
          const changed = Buffer.from(written);
          changed[changed.length - 12] = changed[changed.length - 12]! ^ 0x01;
          await fs.writeFile(file, changed);
        },
      ],
      ["another file's", () => fs.copyFile(spy, file)],
      ['missing', () => fs.rm(file)],
    ];
    try {
      for (const [damage, make] of damages) {
        await make();
        const reader = await StoreReader.open(sample);
        try {
          const { table, statements } = await tableOf(reader, 'AAPL');
          expect(statements, damage).toBe(1);
          expect(contentsOf(table), damage).toEqual(expected);
        } finally {
          reader.close();
        }
      }
    } finally {
      await fs.writeFile(file, written);
    }
  });

  it('never answer for a contracts file missing or whose footer is damaged: the read fails naming it', async () => {
    const entry = await contractsEntry(sample, 'AAPL');
    const parquet = path.join(sample, entry.path);
    const original = await fs.readFile(parquet);
    // Its footer's last bytes before the closing magic changed: the same size, a footer no reader can walk.
    const footerless = Buffer.from(original);
    for (let i = footerless.length - 40; i < footerless.length - 8; i++) footerless[i] = 0xff;
    try {
      for (const [damage, make] of [
        ['missing', () => fs.rm(parquet)],
        ['footer damaged', () => fs.writeFile(parquet, footerless)],
      ] as const) {
        await make();
        const reader = await StoreReader.open(sample);
        try {
          await expect(tableOf(reader, 'AAPL'), damage).rejects.toThrow(entry.path);
        } finally {
          reader.close();
        }
      }
    } finally {
      await fs.writeFile(parquet, original);
    }
  });

  it('are checked by verify, and written again by a repair, byte for byte', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-contract-columns-repair-'));
    try {
      await fs.cp(committed, dir, { recursive: true });
      const [entry] = (await readManifest(dir))!.tables.contracts;
      const file = path.join(dir, contractColumnsPath(entry!.path));
      const written = await fs.readFile(file);
      // A byte of its data changed: its trailer still holds, so a reader would trust it; verify does not.
      const changed = Buffer.from(written);
      changed[8] = changed[8]! ^ 0xff;
      await fs.writeFile(file, changed);
      let report = await verifyFiles(dir, (await readManifest(dir))!);
      expect(report.damaged).toEqual([
        expect.objectContaining({ path: contractColumnsPath(entry!.path), problem: 'damaged' }),
      ]);
      expect(await repairDerivedFiles(dir)).toEqual({ sessionColumns: 0, contractColumns: 1 });
      expect((await fs.readFile(file)).equals(written)).toBe(true);
      await fs.rm(file);
      report = await verifyFiles(dir, (await readManifest(dir))!);
      expect([report.damaged, report.withoutContractColumns]).toEqual([[], [entry!.path]]);
      expect(await repairDerivedFiles(dir)).toEqual({ sessionColumns: 0, contractColumns: 1 });
      expect((await fs.readFile(file)).equals(written)).toBe(true);
      report = await verifyFiles(dir, (await readManifest(dir))!);
      expect([report.damaged, report.withoutContractColumns]).toEqual([[], []]);
      expect(await repairDerivedFiles(dir)).toEqual({ sessionColumns: 0, contractColumns: 0 });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
