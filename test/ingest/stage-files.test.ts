import { createHash } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { createSessionsTable } from '../../src/ingest/calendar-table.js';
import { formatNamed, ingestFormats } from '../../src/ingest/formats/index.js';
import { commitStaged, hashFile, stageFiles } from '../../src/ingest/ingest.js';
import {
  etWallToSeconds,
  indexOptionCloseSeconds,
  sessionCloseSeconds,
  sessionOpenSeconds,
} from '../../src/market-time/index.js';
import { SqlSession } from '../../src/store/sql.js';
import { StoreReader } from '../../src/store/store.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { sharedPath, withData } from '../helpers/shared-data.js';

const SPXW_FILE = 'data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv';
const SPXW = sharedPath(SPXW_FILE);
const spxw = withData([SPXW_FILE]);
const L3 = sharedPath('data/options/hod_L3_A_2016-01-05.csv');
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/ingest/${name}`, import.meta.url));

async function withSql<T>(run: (sql: SqlSession) => Promise<T>): Promise<T> {
  const sql = await SqlSession.open();
  try {
    return await run(sql);
  } finally {
    sql.close();
  }
}

describe('stageFiles', () => {
  spxw.it('stages small input on one DuckDB thread, for the commit that follows too', async () => {
    await withSql(async (sql) => {
      await sql.run('SET threads = 2');
      await stageFiles(sql, [SPXW], 'hod');
      expect(await sql.value("SELECT current_setting('threads')")).toBe(1);
    });
  });

  spxw.it(
    'stages several files into the same staging tables, with provenance per file and progress',
    async () => {
      await withSql(async (sql) => {
        const progress: [number, number | undefined][] = [];
        const result = await stageFiles(sql, [SPXW, L3], 'hod', {
          onProgress: (done, total) => progress.push([done, total]),
        });
        const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
        expect(result.rows).toEqual({
          option_quotes: 14646,
          open_interest: 14854,
          contracts: 0,
          stock_bars: 0,
          splits: 0,
        });
        expect(result.rejects).toEqual([]);
        // Two files' quotes may repeat a key, and L3 open interest repeats one per contract and session.
        expect(result.uniqueKeys).toEqual([]);
        expect(
          result.files.map((f) => ({
            ...f,
            sessions: [f.sessions[0], f.sessions.at(-1), f.sessions.length],
          })),
        ).toEqual([
          {
            source: SPXW,
            sha256: sha(SPXW),
            bytes: readFileSync(SPXW).length,
            format: 'hod',
            rows: { option_quotes: 14438, open_interest: 14438 },
            sourceRows: 14438,
            rejected: 0,
            sessions: ['2018-01-02', '2018-02-28', 40],
            underlyings: ['SPX'],
            quality: {
              rows: 14438,
              sessions: 40,
              contracts: 750,
              zero: 15,
              oneSided: 1887,
              crossed: 0,
              stale: 305,
              missingOpenInterest: 0,
              greeksUnits: 'theta=365,vega=100 (detected)',
            },
          },
          {
            source: L3,
            sha256: sha(L3),
            bytes: readFileSync(L3).length,
            format: 'hod',
            rows: { option_quotes: 208, open_interest: 416 },
            sourceRows: 208,
            rejected: 0,
            sessions: ['2016-01-05', '2016-01-05', 1],
            underlyings: ['A'],
            quality: {
              rows: 208,
              sessions: 1,
              contracts: 208,
              zero: 0,
              oneSided: 20,
              crossed: 0,
              stale: 0,
              missingOpenInterest: 0,
              greeksUnits: 'store (detected)',
            },
          },
        ]);
        expect(await sql.value('SELECT count(*) FROM option_quotes')).toBe(14646);
        expect(progress.at(-1)).toEqual([14646, 14646]);
        expect(progress.map(([done]) => done)).toEqual([14438, 14646]);
        // the file tables are gone: only the canonical staging tables and the calendar remain
        const tables = await sql.all<{ name: string }>(
          'SELECT table_name AS name FROM duckdb_tables() ORDER BY 1',
        );
        expect(tables.map((t) => t.name)).toEqual([
          'contracts',
          'open_interest',
          'option_quotes',
          'sessions',
          'splits',
          'stock_bars',
        ]);
      });
    },
  );

  spxw.it('lets the later of two files in one ingest win a key both hold, wherever its line', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-later-file-'));
    try {
      // The first 100 rows of the SPXW file, and a correction of them in reverse order (a key's line in
      // one file is then above its line in the other for half the keys) with other last prices and OI.
      const [header, ...rows] = readFileSync(SPXW, 'utf8').split('\r\n').slice(0, 101);
      const corrected = rows.reverse().map((row) => {
        const fields = row.split(',');
        fields[9] = '1.23';
        fields[13] = '77';
        return fields.join(',');
      });
      const original = path.join(dir, 'original.csv');
      const correction = path.join(dir, 'correction.csv');
      await fs.writeFile(original, [header, ...rows.reverse(), ''].join('\r\n'));
      await fs.writeFile(correction, [header, ...corrected, ''].join('\r\n'));
      const ingest = async (files: string[]) => {
        const store = path.join(dir, files.map((f) => path.basename(f, '.csv')).join('-'));
        const tx = await WriteTransaction.begin(store, { create: true });
        // Deep in-the-money rows only: nothing to detect the Greek units by, so they are stated.
        await commitStaged(tx, await stageFiles(tx.sql, files, 'hod', { greeksUnits: 'per-year' }));
        const reader = await StoreReader.open(store);
        try {
          return await reader.sql.all(
            `SELECT count(*) AS quotes, count(DISTINCT q.last) AS prices, min(q.last) AS last,
                    count(DISTINCT o.open_interest) AS figures, min(o.open_interest) AS oi
             FROM option_quotes q JOIN open_interest o USING (option_symbol)`,
          );
        } finally {
          reader.close();
        }
      };
      expect(await ingest([original, correction])).toEqual([
        { quotes: 100, prices: 1, last: 1.23, figures: 1, oi: 77 },
      ]);
      const kept = await ingest([correction, original]);
      expect(kept[0]).toMatchObject({ quotes: 100 });
      expect(kept[0]!['last']).not.toBe(1.23);
      expect(kept[0]!['oi']).not.toBe(77);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('with skipInvalid, keeps going past a file the format refuses and reports it', async () => {
    await withSql(async (sql) => {
      const result = await stageFiles(
        sql,
        [fixture('md_error.json'), fixture('md_quotes_bad.json')],
        'marketdata-json',
        {
          skipInvalid: true,
        },
      );
      expect(result.rejects.map((r) => [r.file === fixture('md_error.json'), r.line, r.reason])).toEqual([
        [true, undefined, 'error body: Invalid token.'],
        [false, 2, 'wrong type: bid "abc" is not a number'],
        [false, 3, 'side "call" disagrees with OCC symbol AAPL240419P00170000'],
        [false, 4, 'invalid OCC symbol: AAPL2404'],
      ]);
      expect(result.rows.option_quotes).toBe(1);
    });
  });

  it('refuses a file it cannot read before staging anything', async () => {
    await withSql(async (sql) => {
      await expect(stageFiles(sql, [L3, fixture('no-such-file.csv')], 'hod')).rejects.toThrow(
        /^cannot read .*no-such-file\.csv: ENOENT/,
      );
      expect(await sql.value('SELECT count(*) FROM duckdb_tables()')).toBe(0);
    });
  });

  it('refuses an unknown format by name', async () => {
    await withSql(async (sql) => {
      await expect(stageFiles(sql, [L3], 'nope')).rejects.toThrow(UsageError);
      await expect(stageFiles(sql, [L3], 'nope')).rejects.toThrow(
        /unknown format "nope" \(one of: hod, cboe-eod/,
      );
    });
  });

  it('lists the option formats in the registry with a name and a description', () => {
    const names = ingestFormats().map((f) => f.name);
    expect(names.slice(0, 4)).toEqual(['hod', 'cboe-eod', 'marketdata-json', 'csv']);
    for (const format of ingestFormats()) {
      expect(formatNamed(format.name)).toBe(format);
      expect(format.description.length).toBeGreaterThan(10);
    }
    expect(formatNamed('nope')).toBeUndefined();
  });

  it('hashes a file and counts its lines, with or without a final newline', async () => {
    expect(await hashFile(fixture('hod_l2_saturday.csv'))).toEqual({
      sha256: createHash('sha256')
        .update(readFileSync(fixture('hod_l2_saturday.csv')))
        .digest('hex'),
      bytes: readFileSync(fixture('hod_l2_saturday.csv')).length,
      lines: 5,
      blank: [],
    });
    expect((await hashFile(L3)).lines).toBe(209); // no newline after the last row
  });
});

describe('createSessionsTable', () => {
  it('holds every session with its neighbours and instants, from market-time', async () => {
    await withSql(async (sql) => {
      await createSessionsTable(sql);
      await createSessionsTable(sql); // idempotent
      const days = ['2018-01-12', '2018-01-16', '2018-11-23', '2024-03-11'];
      const rows = await sql.all(
        `SELECT session_date, previous_session, next_session, open_at, close_at, index_close_at, eod_at, early_close
         FROM sessions WHERE session_date IN (${days.map((d) => `DATE '${d}'`).join(', ')}) ORDER BY session_date`,
      );
      expect(rows).toEqual(
        [
          ['2018-01-12', '2018-01-11', '2018-01-16', false],
          ['2018-01-16', '2018-01-12', '2018-01-17', false],
          ['2018-11-23', '2018-11-21', '2018-11-26', true],
          ['2024-03-11', '2024-03-08', '2024-03-12', false],
        ].map(([d, previous, next, early]) => ({
          session_date: d,
          previous_session: previous,
          next_session: next,
          open_at: sessionOpenSeconds(d as string),
          close_at: sessionCloseSeconds(d as string),
          index_close_at: indexOptionCloseSeconds(d as string),
          eod_at: etWallToSeconds(d as string, '16:00'),
          early_close: early,
        })),
      );
      expect(
        await sql.all(
          "SELECT count(*) AS n FROM sessions WHERE session_date IN (DATE '2018-01-15', DATE '2018-01-13')",
        ),
      ).toEqual([{ n: 0 }]);
    });
  });
});
