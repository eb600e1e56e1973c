/**
 * Sessions in symbol order (`SessionColumnsHeader.symbolOrder`): the writer vouches for the order of every
 * file it writes, a repair checks it, and a reader finds one date's rows (or a few contracts') by halves
 * (`session-file-rows.ts`). The rows found so must be the very rows a look at every row finds.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { intradayOptions } from '../../src/ingest/generator/index.js';
import { sessionsBetween } from '../../src/market-time/index.js';
import { type ContractTable, contractTable } from '../../src/query/options/contract-table.js';
import { dayNumberOfIso, isoDateOfDay } from '../../src/query/options/days.js';
import { KeyIndex } from '../../src/query/options/key-index.js';
import { contractRanges } from '../../src/query/options/listed-groups.js';
import {
  latestByKey,
  latestRows,
  type PartRuns,
  partRuns,
  type SymbolOrder,
  symbolOrder,
} from '../../src/query/options/session-file-rows.js';
import { StoreCache } from '../../src/store/cache.js';
import { readManifest } from '../../src/store/manifest.js';
import { SessionColumnsFile, sessionColumnsPath } from '../../src/store/session-columns.js';
import { repairDerivedFiles } from '../../src/store/session-columns-repair.js';
import { rowsInSymbolOrder } from '../../src/store/session-columns-write.js';
import { SqlSession } from '../../src/store/sql.js';
import { StoreReader } from '../../src/store/store.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { commitGenerated } from '../query/options/generated-store.js';

// An index's chain snapshotted every five minutes (two roots, a 0DTE date every session): sessions of
// tens of thousands of rows, what a search by halves is for.
const FROM = '2023-01-03';
const TO = '2023-01-06';
const UNDERLYING = 'SPX';
let dir: string;
let reader: StoreReader;
let table: ContractTable;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-symbol-order-'));
  await commitGenerated(dir, { ...intradayOptions(), to: TO, snapshots: ['5m', 'eod'] }, 'generated');
  reader = await StoreReader.open(dir);
  table = await contractTable(reader.sql, new StoreCache(() => reader.dataVersion), UNDERLYING);
}, 120_000);
afterAll(async () => {
  reader?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

/** The session column files of the store's quote and open interest files. */
async function sessionFiles(store: string) {
  const manifest = (await readManifest(store))!;
  return [...manifest.tables.option_quotes, ...manifest.tables.open_interest].map((entry) => ({
    abs: path.join(store, entry.path),
    open: () =>
      SessionColumnsFile.open(sessionColumnsPath(path.join(store, entry.path)), entry.sha256, entry.rows),
  }));
}

/** Rewrites a session column file's trailer without `symbolOrder`, as a writer before it wrote it. */
async function withoutOrderRecorded(file: string): Promise<void> {
  const bytes = await fs.readFile(file);
  const length = bytes.readUInt32LE(bytes.length - 12);
  const start = bytes.length - 12 - length;
  const header = JSON.parse(bytes.subarray(start, start + length).toString('utf8'));
  delete header.symbolOrder;
  const text = Buffer.from(JSON.stringify(header), 'utf8');
  const size = Buffer.alloc(4);
  size.writeUInt32LE(text.length);
  await fs.writeFile(file, Buffer.concat([bytes.subarray(0, start), text, size, bytes.subarray(-8)]));
}

/** Every column of the rows a read gives, as plain arrays. */
function readAll(runs: PartRuns, columns: readonly string[]): number[][] {
  const targets = columns.map((column) => [column, new Float64Array(runs.rows)] as const);
  runs.read(targets, 0);
  return targets.map(([, values]) => Array.from(values));
}

/** The symbol order of one date's contracts, and the test of a key's being one of them. */
function dateOrder(expiration: string): { order: SymbolOrder; kept: (key: number) => boolean } {
  const ranges = contractRanges(table, expiration);
  const hashes = ranges.flatMap(([low, high]) => Array.from(table.hashes.subarray(low, high)));
  return {
    order: symbolOrder((key) => table.keys!.get(key), ranges),
    kept: KeyIndex.membership(Float64Array.from(hashes))!,
  };
}

describe('sessions in symbol order', () => {
  it('are vouched for by the writer, and checked by a repair', async () => {
    for (const file of await sessionFiles(dir)) expect(file.open()?.inSymbolOrder, file.abs).toBe(true);
    // A repair writes a lost file again, its Parquet file's order checked.
    const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-symbol-order-repair-'));
    try {
      await fs.cp(dir, copy, { recursive: true });
      const [first, second] = await sessionFiles(copy);
      await fs.rm(sessionColumnsPath(first!.abs));
      expect(first!.open()).toBeUndefined();
      // A file written before the order was recorded: whole, read whole, and written again by a repair.
      await withoutOrderRecorded(sessionColumnsPath(second!.abs));
      expect(second!.open()?.symbolOrderRecorded).toBe(false);
      expect(second!.open()?.inSymbolOrder).toBe(false);
      expect(await repairDerivedFiles(copy)).toEqual({ sessionColumns: 2, contractColumns: 0 });
      for (const file of [first!, second!]) {
        expect(file.open()?.inSymbolOrder, file.abs).toBe(true);
        expect(file.open()?.symbolOrderRecorded, file.abs).toBe(true);
      }
      expect(await repairDerivedFiles(copy)).toEqual({ sessionColumns: 0, contractColumns: 0 });
    } finally {
      await fs.rm(copy, { recursive: true, force: true });
    }
    // The check: rows out of symbol order within a session are found; across sessions they may be.
    const sql = await SqlSession.open();
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-symbol-order-check-'));
    try {
      const write = async (name: string, order: string) => {
        const file = path.join(scratch, name);
        await sql.run(`
          COPY (SELECT DATE '2021-03-01' + CAST(i // 3 AS INTEGER) AS session_date,
                       'XYZ210319C' || lpad(CAST(i % 3 AS VARCHAR), 8, '0') AS option_symbol
                FROM range(9) t(i) ORDER BY ${order}) TO '${file}' (FORMAT parquet)`);
        return file;
      };
      const sorted = await write('sorted.parquet', 'session_date, option_symbol');
      const reversed = await write('reversed.parquet', 'session_date, option_symbol DESC');
      const sessionsReversed = await write('sessions.parquet', 'session_date DESC, option_symbol');
      expect(await rowsInSymbolOrder(sql, 'option_quotes', sorted)).toBe(true);
      expect(await rowsInSymbolOrder(sql, 'option_quotes', reversed)).toBe(false);
      expect(await rowsInSymbolOrder(sql, 'option_quotes', sessionsReversed)).toBe(true);
    } finally {
      sql.close();
      await fs.rm(scratch, { recursive: true, force: true });
    }
  });

  it("give one date's rows found by halves: the rows a look at every row gives", () => {
    const sessions = sessionsBetween(FROM, TO);
    // Each read of a key outside a page read whole is a step of a search by halves.
    const probes = vi.spyOn(SessionColumnsFile.prototype, 'keyAt');
    let found = 0;
    for (const session of sessions) {
      const day = dayNumberOfIso(session);
      // Every date listed then: the nearest, the furthest, those between.
      const dates = [...new Set(Array.from(table.expirationDay).filter((expires) => expires >= day))]
        .sort((a, b) => a - b)
        .map(isoDateOfDay);
      for (const kind of ['option_quotes', 'open_interest'] as const) {
        const parts = reader.sql.sessionColumns(
          kind,
          { underlying: UNDERLYING },
          { first: session, last: session },
        )!;
        expect(parts.length, session).toBe(1);
        if (kind === 'option_quotes') expect(parts[0]!.rows, session).toBeGreaterThan(4_096);
        for (const expiration of dates) {
          const { order, kept } = dateOrder(expiration);
          const columns =
            kind === 'option_quotes' ? ['key', 'day', 'quote_time', 'bid'] : ['key', 'open_interest'];
          const everyRow = partRuns(parts, kept);
          const byHalves = partRuns(parts, kept, order);
          expect(byHalves.rows, `${session} ${expiration}`).toBe(everyRow.rows);
          expect(readAll(byHalves, columns), `${session} ${expiration}`).toEqual(readAll(everyRow, columns));
          found += everyRow.rows;
          // A row's key without a number (not the table's), the first probed or any: every row is looked
          // at, and the same rows are found.
          const part = parts[0]!;
          const probed = part.file.keyAt(part.day, part.rows >>> 1, fdOf(part));
          for (const numberOf of [
            (key: number) => (key === probed ? undefined : order.numberOf(key)),
            () => undefined,
          ]) {
            expect(readAll(partRuns(parts, kept, { ...order, numberOf }), columns)).toEqual(
              readAll(everyRow, columns),
            );
          }
          if (kind === 'option_quotes') {
            const cutoff = Number.POSITIVE_INFINITY;
            expect(readAll(latestRows(parts, kept, cutoff, order), columns)).toEqual(
              readAll(latestRows(parts, kept, cutoff), columns),
            );
          }
        }
      }
    }
    expect(found).toBeGreaterThan(1_000);
    expect(probes.mock.calls.length).toBeGreaterThan(sessions.length);
    probes.mockRestore();
  });

  it('read each key sessions section once for look backs over the same files', () => {
    const parts = reader.sql.sessionColumns(
      'option_quotes',
      { underlying: UNDERLYING },
      { first: FROM, last: TO },
    )!;
    const wanted = new Set([
      table.hashes[0]!,
      table.hashes[table.count >>> 1]!,
      table.hashes[table.count - 1]!,
    ]);
    const sections = vi.spyOn(SessionColumnsFile.prototype, 'keySessions');
    try {
      const first = latestByKey(parts, wanted, ['quote_time', 'bid']);
      const read = sections.mock.calls.length;
      expect(latestByKey(parts, wanted, ['quote_time', 'bid'])).toEqual(first);
      expect(sections.mock.calls.length).toBe(read);
    } finally {
      sections.mockRestore();
    }
  });

  it("find a few contracts' latest rows by halves, as a look at every row does", () => {
    const parts = reader.sql.sessionColumns(
      'option_quotes',
      { underlying: UNDERLYING },
      { first: FROM, last: TO },
    )!;
    const random = seededRandom(5);
    const probes = vi.spyOn(SessionColumnsFile.prototype, 'keyAt');
    // A few contracts of one date, some of which are never quoted late in the period.
    for (const expiration of [...new Set(Array.from(table.expirationDay))].map(isoDateOfDay)) {
      const ranges = contractRanges(table, expiration);
      const numbers = ranges.flatMap(([low, high]) =>
        Array.from({ length: high - low }, (_, i) => low + i).filter(() => random() < 0.2),
      );
      if (numbers.length === 0) continue;
      const wanted = new Set(numbers.map((number) => table.hashes[number]!));
      const order = symbolOrder(
        (key) => table.keys!.get(key),
        numbers.map((number) => [number, number + 1] as const),
      );
      for (const last of [parts.length, Math.floor(parts.length / 2)]) {
        const some = parts.slice(0, last);
        const byHalves = latestByKey(some, wanted, ['quote_time', 'bid'], order);
        const everyRow = latestByKey(some, wanted, ['quote_time', 'bid']);
        const byKey = (found: typeof everyRow) =>
          new Map(
            Array.from(found.keys, (key, i) => [
              key,
              [found.days[i], found.values[0]![i], found.values[1]![i]],
            ]),
          );
        expect(byKey(byHalves), expiration).toEqual(byKey(everyRow));
      }
    }
    expect(probes.mock.calls.length).toBeGreaterThan(0);
    probes.mockRestore();
  });
});

/** A descriptor of a part's file, open for the test's run. */
const descriptors = new Map<string, number>();
function fdOf(part: { readonly file: SessionColumnsFile }): number {
  let fd = descriptors.get(part.file.path);
  if (fd === undefined) {
    fd = part.file.openForReading();
    descriptors.set(part.file.path, fd);
  }
  return fd;
}
afterAll(async () => {
  const { closeSync } = await import('node:fs');
  for (const fd of descriptors.values()) closeSync(fd);
});
