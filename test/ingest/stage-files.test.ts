import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { createSessionsTable } from '../../src/ingest/calendar-table.js';
import { formatNamed, ingestFormats } from '../../src/ingest/formats/index.js';
import { hashFile, stageFiles } from '../../src/ingest/ingest.js';
import {
  etWallToSeconds,
  indexOptionCloseSeconds,
  sessionCloseSeconds,
  sessionOpenSeconds,
} from '../../src/market-time/index.js';
import { SqlSession } from '../../src/store/sql.js';
import { sharedData } from '../helpers/paths.js';

const SPXW = sharedData('options/hod_SPXW_2018-01-02_to_2018-02-28.csv');
const L3 = sharedData('options/hod_L3_A_2016-01-05.csv');
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
  it('stages small input on one DuckDB thread, for the commit that follows too', async () => {
    await withSql(async (sql) => {
      await sql.run('SET threads = 2');
      await stageFiles(sql, [SPXW], 'hod');
      expect(await sql.value("SELECT current_setting('threads')")).toBe(1);
    });
  });

  it('stages several files into the same staging tables, with provenance per file and progress', async () => {
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
        result.files.map((f) => ({ ...f, sessions: [f.sessions[0], f.sessions.at(-1), f.sessions.length] })),
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
      await expect(stageFiles(sql, [SPXW, fixture('no-such-file.csv')], 'hod')).rejects.toThrow(
        /^cannot read .*no-such-file\.csv: ENOENT/,
      );
      expect(await sql.value('SELECT count(*) FROM duckdb_tables()')).toBe(0);
    });
  });

  it('refuses an unknown format by name', async () => {
    await withSql(async (sql) => {
      await expect(stageFiles(sql, [SPXW], 'nope')).rejects.toThrow(UsageError);
      await expect(stageFiles(sql, [SPXW], 'nope')).rejects.toThrow(
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
