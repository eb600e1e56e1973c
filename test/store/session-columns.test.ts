/**
 * Session column files (`session-columns.ts`): written at commit beside every quote and open interest
 * file, they give a session's rows with no statement, answering every dated chain as DuckDB's read of the
 * Parquet files does; a file that is not whole or not its Parquet file's is passed over for DuckDB, and
 * a missing Parquet file is reported as it always was.
 */
import { closeSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { etWallToSeconds, sessionsBetween } from '../../src/market-time/index.js';
import { currentAsOf } from '../../src/pit/as-of.js';
import { contractTable } from '../../src/query/options/contract-table.js';
import { announceSessionLoop, readAheadRows } from '../../src/query/options/read-ahead.js';
import { assemble, scopeRows } from '../../src/query/options/scope-answer.js';
import { sessionBlockRows } from '../../src/query/options/session-block.js';
import { rowSource } from '../../src/query/options/snapshot-sql.js';
import { StoreCache } from '../../src/store/cache.js';
import { sessionColumnsState } from '../../src/store/integrity.js';
import { readManifest } from '../../src/store/manifest.js';
import { SessionColumnsFile, SYMBOL_KEY, sessionColumnsPath } from '../../src/store/session-columns.js';
import { repairDerivedFiles } from '../../src/store/session-columns-repair.js';
import { writeSessionColumns } from '../../src/store/session-columns-write.js';
import { quoteLiteral, SqlSession } from '../../src/store/sql.js';
import { StoreReader } from '../../src/store/store.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { commitGenerated, simulatedStock } from '../query/options/generated-store.js';

const FROM = '2021-03-01';
const TO = '2021-04-30';
let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-session-columns-'));
  await commitGenerated(
    dir,
    simulatedStock(
      { from: FROM, to: TO, seed: 11 },
      { weeklyDays: 14, monthlyMonths: 3, quarterlyMonths: 0, leapsYears: 0 },
    ),
    'generated',
  );
}, 120_000);
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** The option quote and open interest files of the store, absolute. */
async function sessionTableFiles() {
  const manifest = (await readManifest(dir))!;
  return [...manifest.tables.option_quotes, ...manifest.tables.open_interest].map((entry) => ({
    ...entry,
    abs: path.join(dir, entry.path),
  }));
}

/** Counts the statements `reader` reads columns with while `work` runs. */
async function statementsDuring(reader: StoreReader, work: () => Promise<unknown>): Promise<number> {
  const spy = vi.spyOn(reader.sql, 'typedColumns');
  try {
    await work();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('session column files', () => {
  it('are written at commit beside every quote and open interest file, bound to its content', async () => {
    const files = await sessionTableFiles();
    expect(files.length).toBeGreaterThan(1);
    for (const file of files) {
      const columns = SessionColumnsFile.open(sessionColumnsPath(file.abs), file.sha256, file.rows);
      expect(columns, file.path).toBeDefined();
      expect(await SessionColumnsFile.intact(sessionColumnsPath(file.abs))).toBe(true);
      // Bound to the file it was made from: another content hash or row count is not it.
      expect(
        SessionColumnsFile.open(sessionColumnsPath(file.abs), '0'.repeat(64), file.rows),
      ).toBeUndefined();
      expect(
        SessionColumnsFile.open(sessionColumnsPath(file.abs), file.sha256, file.rows + 1),
      ).toBeUndefined();
      // The key sessions section: each key's bit set in exactly the sessions it has rows in.
      const fd = columns!.openForReading();
      try {
        const section = columns!.keySessions(fd);
        expect(Array.from(section.keys)).toEqual(Array.from(section.keys).sort((a, b) => a - b));
        const held = new Set<number>();
        for (const [s, day] of columns!.days().entries()) {
          const keys = new Float64Array(columns!.rowsOf(day));
          columns!.readInto(day, 'key', 0, keys.length, keys, 0, fd);
          const inSession = new Set(keys);
          for (const [k, key] of section.keys.entries()) {
            const bit = (section.bits[k * section.words + (s >>> 5)]! >>> (s & 31)) & 1;
            expect(bit, `${file.path} day ${day} key ${key}`).toBe(inSession.has(key) ? 1 : 0);
          }
          for (const key of inSession) held.add(key);
        }
        expect(section.keys.length).toBe(held.size);
      } finally {
        closeSync(fd);
      }
    }
  });

  it.skipIf(process.platform !== 'linux')(
    'keep a descriptor open between reads, and close it with their store',
    async () => {
      // The descriptors of this store's session column files, as the process holds them.
      const held = async () => {
        const links = await Promise.all(
          (await fs.readdir('/proc/self/fd')).map((fd) => fs.readlink(`/proc/self/fd/${fd}`).catch(() => '')),
        );
        return links.filter((link) => link.startsWith(dir) && link.endsWith('.sessions')).length;
      };
      const before = await held();
      const reader = await StoreReader.open(dir);
      try {
        const cache = new StoreCache(() => reader.dataVersion);
        for (const session of sessionsBetween(FROM, TO).slice(1, 6)) {
          await sessionBlockRows(reader.sql, cache, { kind: 'dated', session }, { underlying: 'XYZ' });
        }
        // The quote and open interest files read, one descriptor each however many reads were made.
        const open = (await held()) - before;
        expect(open).toBeGreaterThan(0);
        expect(open).toBeLessThanOrEqual((await sessionTableFiles()).length);
      } finally {
        reader.close();
      }
      expect(await held()).toBe(before);
    },
  );

  it('answer dated chains at sessions in random order with no statement, as DuckDB and the query do', async () => {
    const withFiles = await StoreReader.open(dir);
    const withoutFiles = await StoreReader.open(dir, { sessionColumns: false });
    try {
      const random = seededRandom(5);
      const sessions = sessionsBetween(FROM, TO)
        .slice(1)
        .map((session) => ({ session, order: random() }))
        .sort((a, b) => a.order - b.order)
        .map(({ session }) => session);
      const filesCache = new StoreCache(() => withFiles.dataVersion);
      const duckdbCache = new StoreCache(() => withoutFiles.dataVersion);
      // The contract table is read once, through DuckDB, before anything else.
      await sessionBlockRows(
        withFiles.sql,
        filesCache,
        { kind: 'dated', session: sessions[0]! },
        {
          underlying: 'XYZ',
        },
      );
      const oneCache = new StoreCache(() => withFiles.dataVersion);
      await contractTable(withFiles.sql, oneCache, 'XYZ');
      let compared = 0;
      for (const session of sessions) {
        const dated = { kind: 'dated', session } as const;
        const scope = { underlying: 'XYZ' };
        const expected = assemble(dated, rowSource(await scopeRows(withoutFiles.sql, dated, scope))).records;
        expect(expected.length, session).toBeGreaterThan(0);
        const viaDuckdb = await sessionBlockRows(withoutFiles.sql, duckdbCache, dated, scope);
        expect(assemble(dated, viaDuckdb).records, session).toEqual(expected);
        let viaFiles: Awaited<ReturnType<typeof sessionBlockRows>> | undefined;
        const statements = await statementsDuring(withFiles, async () => {
          viaFiles = await sessionBlockRows(withFiles.sql, filesCache, dated, scope);
        });
        expect(statements, session).toBe(0);
        expect(assemble(dated, viaFiles!).records, session).toEqual(expected);
        // One expiration alone (the front month and the last listed): that date's rows only, read from
        // the files too (a cache of its own, which holds the contract table and no session).
        // (A record's expiration is its instant, the close in New York: the same date in UTC.)
        const dates = [
          ...new Set(
            expected.map((record) => new Date(Number(record.expiration) * 1000).toISOString().slice(0, 10)),
          ),
        ].sort();
        for (const expiration of [dates[0]!, dates.at(-1)!]) {
          const one = { underlying: 'XYZ', expiration };
          const oneExpected = assemble(
            dated,
            rowSource(await scopeRows(withoutFiles.sql, dated, one)),
          ).records;
          expect(oneExpected.length).toBeGreaterThan(0);
          let oneViaFiles: Awaited<ReturnType<typeof sessionBlockRows>> | undefined;
          const oneStatements = await statementsDuring(withFiles, async () => {
            oneViaFiles = await sessionBlockRows(withFiles.sql, oneCache, dated, one);
          });
          expect(oneStatements, `${session} ${expiration}`).toBe(0);
          expect(assemble(dated, oneViaFiles!).records, `${session} ${expiration}`).toEqual(oneExpected);
          compared++;
        }
      }
      expect(compared).toBe(sessions.length * 2);
    } finally {
      withFiles.close();
      withoutFiles.close();
    }
  }, 120_000);

  it('key rows by a hash that tells apart the symbols DuckDB’s own hash confuses', async () => {
    // Real four-letter roots with daily expirations have such pairs by the thousand: an underlying whose
    // keys collided was read through DuckDB on every request.
    const pairs = [
      ['ETFB150130C00073000', 'ETFB150630C00078000'],
      ['AAPL160105C00020000', 'AAPL160605C00025000'],
      ['SPXW150110C00026000', 'SPXW150610C00029000'],
    ];
    const sql = await SqlSession.open();
    try {
      for (const [a, b] of pairs) {
        const rows = await sql.all<{ duckdb: boolean; ours: boolean }>(
          `SELECT hash(x.option_symbol) = hash(y.option_symbol) AS duckdb,
                  ${SYMBOL_KEY('x')} = ${SYMBOL_KEY('y')} AS ours
           FROM (SELECT '${a}' AS option_symbol) x, (SELECT '${b}' AS option_symbol) y`,
        );
        expect(rows[0], `${a} ${b}`).toEqual({ duckdb: true, ours: false });
      }
    } finally {
      sql.close();
    }
  });

  it('of an earlier format are passed over as missing, and written again by a repair', async () => {
    const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-session-format-'));
    try {
      await fs.cp(dir, copy, { recursive: true });
      const manifest = (await readManifest(copy))!;
      const entry = manifest.tables.option_quotes[0]!;
      const file = sessionColumnsPath(path.join(copy, entry.path));
      await rewriteTrailer(file, (header) => {
        header.format = 'pitchain-session-columns/1';
      });
      expect(SessionColumnsFile.open(file, entry.sha256, entry.rows)).toBeUndefined();
      expect(await sessionColumnsState(copy, entry)).toBe('missing');
      expect((await repairDerivedFiles(copy)).sessionColumns).toBe(1);
      expect(await sessionColumnsState(copy, entry)).toBe('intact');
    } finally {
      await fs.rm(copy, { recursive: true, force: true });
    }
  });

  it('are passed over for DuckDB when cut short, not whole or not the file’s, and answer alike', async () => {
    const [quotes] = (await readManifest(dir))!.tables.option_quotes;
    const sessionsFile = sessionColumnsPath(path.join(dir, quotes!.path));
    const original = await fs.readFile(sessionsFile);
    const session = sessionsBetween(FROM, TO)[5]!;
    const dated = { kind: 'dated', session } as const;
    const scope = { underlying: 'XYZ' };
    const answer = async () => {
      const reader = await StoreReader.open(dir);
      try {
        const cache = new StoreCache(() => reader.dataVersion);
        const statements = await statementsDuring(reader, async () => {
          await sessionBlockRows(reader.sql, cache, dated, scope);
        });
        const records = assemble(dated, await sessionBlockRows(reader.sql, cache, dated, scope)).records;
        return { statements, records };
      } finally {
        reader.close();
      }
    };
    try {
      const whole = await answer();
      const damaged = [
        original.subarray(0, original.length - 100), // cut short
        Buffer.concat([original, Buffer.alloc(8)]), // grown
        Buffer.concat([Buffer.alloc(16), original.subarray(16)]), // its start zeroed: the size still fits
        Buffer.from('not a session column file'),
      ];
      for (const [i, bytes] of damaged.entries()) {
        await fs.writeFile(sessionsFile, bytes);
        const again = await answer();
        expect(again.records, `damage ${i}`).toEqual(whole.records);
        // A file whose trailer does not hold is read through DuckDB; a zeroed start is found by verify.
        if (i !== 2) expect(again.statements, `damage ${i}`).toBeGreaterThan(whole.statements);
        else expect(await SessionColumnsFile.intact(sessionsFile)).toBe(false);
      }
      await fs.rm(sessionsFile);
      expect((await answer()).records).toEqual(whole.records);
    } finally {
      await fs.writeFile(sessionsFile, original);
    }
  }, 60_000);

  it('never answer for a Parquet file that is missing: the chain fails naming it, as before', async () => {
    const [quotes] = (await readManifest(dir))!.tables.option_quotes;
    const parquet = path.join(dir, quotes!.path);
    const moved = `${parquet}.away`;
    const reader = await StoreReader.open(dir);
    await fs.rename(parquet, moved);
    try {
      const session = sessionsBetween(FROM, TO)[3]!;
      const cache = new StoreCache(() => reader.dataVersion);
      await expect(
        sessionBlockRows(reader.sql, cache, { kind: 'dated', session }, { underlying: 'XYZ' }),
      ).rejects.toThrow(path.basename(parquet).slice(0, 12));
    } finally {
      await fs.rename(moved, parquet);
      reader.close();
    }
  });

  it('keep every value as the very double DuckDB reads: signs of zero, NULLs, fractions and wide numbers', async () => {
    const sql = await SqlSession.open();
    const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-session-values-'));
    try {
      const parquet = path.join(scratch, 'quotes.parquet');
      // Values no 32-bit digits hold alongside values they do, in the same session and apart.
      await sql.run(`
        COPY (
          SELECT 'XYZ' AS underlying, 'XYZ210319C' || lpad(CAST(i AS VARCHAR), 8, '0') AS option_symbol,
            DATE '2021-03-01' + CAST(i // 4 AS INTEGER) AS session_date,
            TIMESTAMPTZ '2021-03-01 20:00:00+00' + INTERVAL (i * 1.5) SECOND AS quote_time,
            CASE i % 4 WHEN 0 THEN -0.0 WHEN 1 THEN NULL WHEN 2 THEN 0.1 + 0.2 ELSE 1.25 END AS bid,
            CASE WHEN i < 4 THEN 1e12 + i ELSE i * 0.01 END AS ask,
            i AS bid_size, NULL AS ask_size, 3.14159265358979 AS "last", 5000000000 AS volume,
            NULL::TIMESTAMPTZ AS volume_time, 412.37 AS underlying_price,
            CASE WHEN i % 2 = 0 THEN 'NaN'::DOUBLE ELSE 0.123456 END AS iv,
            -0.5 AS delta, 1e-9 AS gamma, -123456.789 AS theta, 0.0 AS vega
          FROM range(12) t(i) ORDER BY session_date, option_symbol
        ) TO '${parquet}' (FORMAT parquet)`);
      await writeSessionColumns(sql, 'option_quotes', parquet, 'f'.repeat(64), true);
      const file = SessionColumnsFile.open(sessionColumnsPath(parquet), 'f'.repeat(64), 12)!;
      expect(file).toBeDefined();
      const names = file.columns.filter((name) => name !== 'key');
      const { columns: expected } = await sql.typedColumns(
        `SELECT ${names.map((name) => (name.endsWith('_time') ? `CAST(epoch_ms(${name}) / 1000 AS DOUBLE)` : `CAST("${name}" AS DOUBLE)`)).join(', ')}
         FROM read_parquet('${parquet}')`,
      );
      const fd = file.openForReading();
      try {
        for (const [c, name] of names.entries()) {
          const read = new Float64Array(12);
          for (let day = 0; day < 3; day++) {
            const sessionDay = Date.parse('2021-03-01') / 86_400_000 + day;
            expect(file.rowsOf(sessionDay)).toBe(4);
            file.readInto(sessionDay, name, 0, 4, read, day * 4, fd);
          }
          const want = expected[c] as Float64Array;
          for (let i = 0; i < 12; i++)
            expect(Object.is(read[i], want[i]), `${name} row ${i}: ${read[i]} vs ${want[i]}`).toBe(true);
          // Some rows of each session picked (an instant's latest rows): the same doubles, in the same order.
          for (const rows of [[1, 3], [0, 2, 3], [2]]) {
            const picked = new Float64Array(3 * rows.length + 1);
            for (let day = 0; day < 3; day++) {
              const sessionDay = Date.parse('2021-03-01') / 86_400_000 + day;
              file.readPicked(sessionDay, name, Int32Array.from(rows), picked, 1 + day * rows.length, fd);
            }
            const wanted = [0, 1, 2].flatMap((day) => rows.map((row) => want[day * 4 + row]!));
            for (const [k, value] of wanted.entries())
              expect(Object.is(picked[1 + k], value), `${name} picked ${rows} at ${k}`).toBe(true);
            expect(picked[0]).toBe(0);
          }
        }
      } finally {
        (await import('node:fs')).closeSync(fd);
      }
    } finally {
      sql.close();
      await fs.rm(scratch, { recursive: true, force: true });
    }
  });
});

/** Rewrites the trailer of the session column file `file` as `change` makes it (the data left alone). */
async function rewriteTrailer(
  file: string,
  change: (header: Record<string, unknown>) => void,
): Promise<void> {
  const bytes = await fs.readFile(file);
  const length = bytes.readUInt32LE(bytes.length - 12);
  const start = bytes.length - 12 - length;
  const header = JSON.parse(bytes.subarray(start, start + length).toString('utf8'));
  change(header);
  const text = Buffer.from(JSON.stringify(header), 'utf8');
  const size = Buffer.alloc(4);
  size.writeUInt32LE(text.length);
  await fs.writeFile(file, Buffer.concat([bytes.subarray(0, start), text, size, bytes.subarray(-8)]));
}

describe('loop blocks read from session column files', () => {
  /** A contract quoted once, early, then never again: a loop's blocks carry its one snapshot. */
  const ONCE = 'XYZ210416C00900000';
  let loopDir: string;
  beforeAll(async () => {
    loopDir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-session-loop-'));
    await commitGenerated(
      loopDir,
      simulatedStock(
        { from: FROM, to: TO, seed: 3 },
        { weeklyDays: 14, monthlyMonths: 2, quarterlyMonths: 0, leapsYears: 0 },
      ),
      'generated',
    );
    const tx = await WriteTransaction.begin(loopDir);
    const files = quoteLiteral(path.join(loopDir, 'tables', 'option_quotes', '**', '*.parquet'));
    await tx.sql.run(
      `INSERT INTO option_quotes BY NAME
       SELECT * EXCLUDE (year) REPLACE ('${ONCE}' AS option_symbol)
       FROM read_parquet(${files}, hive_partitioning = true)
       WHERE session_date = DATE '2021-03-02' AND option_symbol LIKE 'XYZ210416C%' LIMIT 1`,
    );
    await tx.commit([
      { source: 'once', sha256: 'once', format: 'generator', rows: { option_quotes: 1 }, rejected: 0 },
    ]);
  }, 120_000);
  afterAll(async () => {
    await fs.rm(loopDir, { recursive: true, force: true });
  });

  // Read through DuckDB too: the blocks must answer alike either way. (A contract with no open interest
  // at all was once given the row before its own: another contract's, published after the as-of.)
  it.each<[read: 'files' | 'duckdb', label: string]>([
    ['files', 'from the files'],
    ['duckdb', 'through DuckDB'],
  ])(
    'answer every instant of a loop as the query does, carrying a contract quoted once long before (%s, %s)',
    async (read) => {
      const reader = await StoreReader.open(loopDir, { sessionColumns: read === 'files' });
      const sections = vi.spyOn(SessionColumnsFile.prototype, 'keySessions');
      try {
        const sessions = sessionsBetween('2021-03-15', '2021-04-15');
        const cache = new StoreCache(() => reader.dataVersion, { loopWindowRows: Number.POSITIVE_INFINITY });
        announceSessionLoop(cache, sessions[0]!, sessions.at(-1)!);
        let fromBlock = 0;
        let carriedSeen = 0;
        for (const session of sessions) {
          for (const time of ['10:00', '16:30']) {
            const asOf = currentAsOf('live', etWallToSeconds(session, time));
            for (const scope of [{ underlying: 'XYZ' }, { underlying: 'XYZ', expiration: '2021-04-16' }]) {
              const ahead = await readAheadRows(reader.sql, cache, asOf, scope);
              if (ahead === undefined) continue;
              fromBlock++;
              const expected = assemble(asOf, rowSource(await scopeRows(reader.sql, asOf, scope))).records;
              const records = assemble(asOf, ahead).records;
              expect(records, `${session} ${time} ${JSON.stringify(scope)}`).toEqual(expected);
              if (records.some((record) => record.optionSymbol === ONCE)) carriedSeen++;
            }
          }
        }
        expect(fromBlock).toBeGreaterThan(sessions.length * 3);
        expect(carriedSeen).toBeGreaterThan(sessions.length);
        // The look back for the contract went straight to its session by the files' sections.
        if (read === 'files') expect(sections).toHaveBeenCalled();
        else expect(sections).not.toHaveBeenCalled();
      } finally {
        sections.mockRestore();
        reader.close();
      }
    },
    120_000,
  );
});
