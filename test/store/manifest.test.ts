/** The manifest is input like any other: an entry that leaves the store directory is refused, not read. */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { readManifest } from '../../src/store/manifest.js';
import { StoreReader } from '../../src/store/store.js';
import { WriteTransaction } from '../../src/store/writer.js';
import { stageSyntheticQuotes } from './fixtures/synthetic.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true });
});

/** A store in a directory of its own under a fresh parent, so that `../outside` is a real file beside it. */
async function storeWithOutsideFile(): Promise<{ dir: string; outside: string }> {
  const parent = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-manifest-'));
  dirs.push(parent);
  const dir = path.join(parent, 'store');
  const tx = await WriteTransaction.begin(dir, { create: true });
  await stageSyntheticQuotes(tx.sql, { batch: 0, sessions: 2, strikes: 5 });
  await tx.commit([{ source: 'b0', sha256: 'h0', format: 'synthetic', rows: {}, rejected: 0 }]);
  // A valid Parquet file of the table, outside the store: read as data, it would answer queries.
  const [entry] = (await readManifest(dir))!.tables.option_quotes;
  await fs.mkdir(path.join(parent, 'outside'));
  const outside = path.join(parent, 'outside', 'x.parquet');
  await fs.copyFile(path.join(dir, entry!.path), outside);
  return { dir, outside };
}

async function tamper(dir: string, edit: (manifest: Record<string, unknown>) => void): Promise<void> {
  const file = path.join(dir, 'manifest.json');
  const manifest = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
  edit(manifest);
  await fs.writeFile(file, JSON.stringify(manifest));
}

describe('manifest entries', () => {
  const escapes = (outside: string): [string, string][] => [
    ['a path up and out', 'tables/option_quotes/../../../outside/x.parquet'],
    ['a path that starts outside', '../outside/x.parquet'],
    ['/etc/passwd', '../../../../../../../../etc/passwd'],
    ['an absolute path', outside],
    ['a NUL byte', 'tables/option_quotes/underlying=SPY/year=2024/x.parquet\u0000.txt'],
    ['a backslash', 'tables\\option_quotes\\..\\..\\..\\outside\\x.parquet'],
    ['another table', 'tables/stock_bars/../option_quotes/x.parquet'],
  ];

  it('refuses any file path that escapes the store directory, for readers and writers alike', async () => {
    const { dir, outside } = await storeWithOutsideFile();
    const original = await fs.readFile(path.join(dir, 'manifest.json'), 'utf8');
    for (const [what, bad] of escapes(outside)) {
      await fs.writeFile(path.join(dir, 'manifest.json'), original);
      await tamper(dir, (m) => {
        const tables = m['tables'] as Record<string, { path: string }[]>;
        tables['option_quotes']![0]!.path = bad;
      });
      const refused = StoreReader.open(dir);
      await expect(refused, what).rejects.toBeInstanceOf(StoreError);
      await expect(refused, what).rejects.toThrow(/damaged or tampered with/);
      await expect(WriteTransaction.begin(dir), what).rejects.toThrow(/damaged or tampered with/);
    }
  });

  it('refuses unknown tables (prototype names too) and entries without their fields', async () => {
    const { dir } = await storeWithOutsideFile();
    const original = await fs.readFile(path.join(dir, 'manifest.json'), 'utf8');
    const edits: [string, (m: Record<string, unknown>) => void][] = [
      [
        '__proto__ table',
        (m) => Object.defineProperty(m['tables'], '__proto__', { value: [], enumerable: true }),
      ],
      ['constructor table', (m) => ((m['tables'] as Record<string, unknown>)['constructor'] = [])],
      ['no tables', (m) => delete m['tables']],
      ['files not a list', (m) => ((m['tables'] as Record<string, unknown>)['splits'] = {})],
      [
        'no sha256',
        (m) =>
          delete (m['tables'] as Record<string, Record<string, unknown>[]>)['option_quotes']![0]!['sha256'],
      ],
      ['bad retired', (m) => (m['retired'] = [{ path: '../x.parquet', retiredAt: '2026-01-01T00:00:00Z' }])],
    ];
    for (const [what, edit] of edits) {
      await fs.writeFile(path.join(dir, 'manifest.json'), original);
      await tamper(dir, edit);
      await expect(StoreReader.open(dir), what).rejects.toThrow(/damaged or tampered with/);
    }
    await fs.writeFile(path.join(dir, 'manifest.json'), original);
    const reader = await StoreReader.open(dir);
    reader.close();
  });
});
