/**
 * A missing or damaged file is contained: queries that need it fail naming it, every other query answers,
 * an ingest that rewrites its partition repairs it, and `pitchain verify` lists it.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { type FileEntry, readManifest } from '../../src/store/manifest.js';
import { sessionColumnsPath } from '../../src/store/session-columns.js';
import { StoreReader } from '../../src/store/store.js';
import { type CommitResult, WriteTransaction } from '../../src/store/writer.js';
import { pitchain } from './fixtures/children.js';
import { stageSyntheticQuotes } from './fixtures/synthetic.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true });
});

async function ingest(dir: string, batch: number, underlying: string): Promise<CommitResult> {
  const tx = await WriteTransaction.begin(dir, { create: true });
  await stageSyntheticQuotes(tx.sql, { batch, sessions: 3, strikes: 10, underlying });
  const source = `${underlying}-${batch}`;
  return tx.commit([{ source, sha256: source, format: 'synthetic', rows: {}, rejected: 0 }]);
}

/** A store of SPY and QQQ quotes (30 rows each, one file per table and underlying). */
async function twoUnderlyings(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-integrity-'));
  dirs.push(dir);
  await ingest(dir, 0, 'SPY');
  await ingest(dir, 0, 'QQQ');
  return dir;
}

async function fileOf(
  dir: string,
  table: 'option_quotes' | 'contracts',
  underlying: string,
): Promise<FileEntry> {
  const entry = (await readManifest(dir))!.tables[table].find(
    (f) => f.partition['underlying'] === underlying,
  );
  return entry!;
}

/** Flips bytes of the first page: same size, footer intact, pages unreadable. */
async function damagePages(file: string): Promise<void> {
  const bytes = await fs.readFile(file);
  for (let i = 4; i < 64; i++) bytes[i] = bytes[i]! ^ 0xff;
  await fs.writeFile(file, bytes);
}

/** Flips bytes just before the footer's length: same size, footer unreadable. */
async function damageFooter(file: string): Promise<void> {
  const bytes = await fs.readFile(file);
  for (let i = bytes.length - 200; i < bytes.length - 8; i++) bytes[i] = bytes[i]! ^ 0xff;
  await fs.writeFile(file, bytes);
}

const count = (reader: StoreReader, sql: string) => reader.sql.value<number>(sql);

describe('a missing or damaged store file', () => {
  it('fails only the queries that need it, with a StoreError naming it', async () => {
    const dir = await twoUnderlyings();
    const quotes = await fileOf(dir, 'option_quotes', 'QQQ');
    await fs.rm(path.join(dir, quotes.path));
    const contracts = await fileOf(dir, 'contracts', 'SPY');
    await damageFooter(path.join(dir, contracts.path));
    const reader = await StoreReader.open(dir);
    try {
      // Opening reads only the manifest (checking files would grow with the store): a missing file is
      // known once a statement reads its table or its partition, an unreadable footer once a query of its
      // partition tries it.
      expect(reader.damaged).toEqual([]);
      const spyContracts = await reader.partitionSql('contracts', { underlying: 'SPY' });
      expect(reader.damaged.map((d) => [d.path, d.problem])).toEqual([[contracts.path, 'damaged']]);
      expect(await count(reader, "SELECT count(*) FROM option_quotes WHERE underlying = 'SPY'")).toBe(30);
      expect(reader.damaged.map((d) => [d.path, d.problem])).toEqual([
        [contracts.path, 'damaged'],
        [quotes.path, 'missing'],
      ]);
      await expect(reader.sql.value(`SELECT count(*) FROM ${spyContracts}`)).rejects.toThrow(contracts.path);
      expect(
        await count(
          reader,
          `SELECT count(*) FROM ${await reader.partitionSql('contracts', { underlying: 'QQQ' })}`,
        ),
      ).toBe(10);
      expect(await count(reader, "SELECT count(*) FROM option_quotes WHERE underlying = 'SPY'")).toBe(30);
      expect(await count(reader, "SELECT count(*) FROM contracts WHERE underlying = 'QQQ'")).toBe(10);
      const chain = `SELECT count(*) FROM option_quotes q WHERE q.underlying = $u AND q.session_date = DATE '2024-01-03'
        AND q.option_symbol IN (SELECT option_symbol FROM contracts WHERE underlying = $u)`;
      expect(await reader.sql.value(chain, { u: 'SPY' }).catch((e: Error) => e.message)).toMatch(
        contracts.path,
      );
      expect(await reader.sql.value(chain, { u: 'QQQ' }).catch((e: Error) => e.message)).toMatch(quotes.path);
      for (const sql of [
        "SELECT count(*) FROM option_quotes WHERE underlying = 'QQQ'",
        "SELECT max(bid) FROM option_quotes WHERE underlying = 'QQQ' AND session_date = DATE '2024-01-02'",
        'SELECT count(*) FROM option_quotes',
      ]) {
        const failed = reader.sql.value(sql);
        await expect(failed, sql).rejects.toBeInstanceOf(StoreError);
        await expect(failed, sql).rejects.toThrow(path.join(dir, quotes.path));
      }
    } finally {
      reader.close();
    }
  });

  it('is replaced by an ingest that rewrites its partition, whatever is wrong with it', async () => {
    const dir = await twoUnderlyings();
    const missing = await fileOf(dir, 'option_quotes', 'QQQ');
    await fs.rm(path.join(dir, missing.path));
    const pages = await fileOf(dir, 'option_quotes', 'SPY');
    await damagePages(path.join(dir, pages.path));
    const contracts = await fileOf(dir, 'contracts', 'SPY');
    await damageFooter(path.join(dir, contracts.path));
    const repairQqq = await ingest(dir, 1, 'QQQ');
    expect(repairQqq.replaced.map((d) => d.path)).toEqual([missing.path]);
    const repairSpy = await ingest(dir, 1, 'SPY');
    expect(repairSpy.replaced.map((d) => d.path).sort()).toEqual([contracts.path, pages.path].sort());
    const reader = await StoreReader.open(dir);
    try {
      expect(reader.damaged).toEqual([]);
      expect(
        await reader.sql.all(
          'SELECT underlying, count(*) AS n, min(bid) AS bid FROM option_quotes GROUP BY ALL ORDER BY 1',
        ),
      ).toEqual([
        { underlying: 'QQQ', n: 30, bid: 15 },
        { underlying: 'SPY', n: 30, bid: 15 },
      ]);
    } finally {
      reader.close();
    }
  });
});

describe('views made on first use', () => {
  it('opens without touching a file, and makes each view when a statement first reads it, however it is named', async () => {
    const dir = await twoUnderlyings();
    const quotes = await fileOf(dir, 'option_quotes', 'QQQ');
    await fs.rm(path.join(dir, quotes.path));
    const reader = await StoreReader.open(dir);
    try {
      expect(reader.damaged).toEqual([]);
      // A schema-qualified name is not seen in the text: the failed statement makes the view and runs again.
      expect(await count(reader, 'SELECT count(*) FROM main.contracts')).toBe(20);
      expect(reader.damaged).toEqual([]);
      expect(await count(reader, 'SELECT count(*) FROM "option_quotes" q WHERE q.underlying = \'SPY\'')).toBe(
        30,
      );
      expect(reader.damaged.map((d) => [d.path, d.problem])).toEqual([[quotes.path, 'missing']]);
      // Put back, the file is read again after a refresh at the same version.
      await ingest(dir, 0, 'QQQ');
      expect(await reader.refresh()).toBe(false);
      expect(await count(reader, 'SELECT count(*) FROM option_quotes')).toBe(60);
      expect(reader.damaged).toEqual([]);
    } finally {
      reader.close();
    }
  });
});

describe('pitchain verify', () => {
  it('checks every file against its content hash: exit 0 when all are intact, 1 listing what is not', async () => {
    const dir = await twoUnderlyings();
    const good = await pitchain('verify', '--store', dir);
    expect([good.code, good.stderr]).toEqual([0, '']);
    expect(good.stdout).toMatch(/^all 4 files intact \(.+\); data version [0-9a-f]{16}$/m);

    const missing = await fileOf(dir, 'option_quotes', 'QQQ');
    await fs.rm(path.join(dir, missing.path));
    const pages = await fileOf(dir, 'option_quotes', 'SPY');
    await damagePages(path.join(dir, pages.path));
    const bad = await pitchain('verify', '--store', dir);
    expect(bad.code).toBe(1);
    expect(bad.stdout.split('\n')).toEqual(
      expect.arrayContaining([
        `missing  ${missing.path} (no such file)`,
        `damaged  ${pages.path} (its content hash differs from the manifest)`,
        expect.stringMatching(/^2 of 4 files missing or damaged; data version [0-9a-f]{16}$/),
      ]),
    );
    const json = JSON.parse((await pitchain('verify', '--store', dir, '--json')).stdout);
    expect(json.damaged.map((d: { path: string }) => d.path).sort()).toEqual(
      [missing.path, pages.path].sort(),
    );

    const none = await pitchain('verify', '--store', path.join(dir, 'tables'));
    expect([none.code, none.stderr]).toEqual([
      1,
      expect.stringMatching(/^pitchain: .* is not a pitchain store/),
    ]);
    const help = await pitchain('verify', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout.trimEnd()).toMatch(/Examples:\n {2}\$ pitchain verify --store data\/sample\n.+$/);
  });

  it('checks each session column file too, and --repair writes again those missing or damaged', async () => {
    const dir = await twoUnderlyings();
    const spy = path.join(dir, sessionColumnsPath((await fileOf(dir, 'option_quotes', 'SPY')).path));
    const qqq = path.join(dir, sessionColumnsPath((await fileOf(dir, 'option_quotes', 'QQQ')).path));
    const written = await fs.readFile(spy);
    // A byte of its rows changed: its trailer still holds, so a reader would trust it; verify does not.
    const changed = Buffer.from(written);
    changed[8] = changed[8]! ^ 0xff;
    await fs.writeFile(spy, changed);
    await fs.rm(qqq);
    const bad = await pitchain('verify', '--store', dir);
    expect(bad.code).toBe(1);
    expect(bad.stdout.split('\n')).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `^damaged  ${path.relative(dir, spy)} \\(a session column file not whole or not its Parquet file`,
          ),
        ),
        '1 quote and open interest files have no session column file: their sessions are read through DuckDB (pitchain verify --repair writes them)',
      ]),
    );
    const repaired = await pitchain('verify', '--store', dir, '--repair');
    expect([repaired.code, repaired.stderr]).toEqual([0, '']);
    expect(repaired.stdout).toMatch(/^wrote 2 session column files$/m);
    expect(repaired.stdout).toMatch(/^all 4 files intact/m);
    expect(repaired.stdout).not.toMatch(/no session column file/);
    // The same bytes the commit wrote: a session column file is its Parquet file's, and nothing else.
    expect((await fs.readFile(spy)).equals(written)).toBe(true);
    const json = JSON.parse((await pitchain('verify', '--store', dir, '--json', '--repair')).stdout);
    expect([json.repaired, json.withoutSessionColumns, json.damaged]).toEqual([0, [], []]);
  });
});
