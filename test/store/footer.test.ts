/**
 * The footer walk (`footer.ts`) against DuckDB's own reading of the footer: every file of the sample
 * walks, and a footer damaged in any of several ways fails the walk as it fails DuckDB.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { footerProblem } from '../../src/store/footer.js';
import { readManifest } from '../../src/store/manifest.js';
import { SqlSession } from '../../src/store/sql.js';

let dir: string;
let sql: SqlSession;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-footer-'));
  sql = await SqlSession.open();
});
afterAll(async () => {
  sql.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const duckdbReads = (file: string) =>
  sql.value('SELECT count(*) FROM parquet_file_metadata($file)', { file }).then(
    () => true,
    () => false,
  );

describe('the footer walk', () => {
  it('walks every footer of the sample whole', async () => {
    const manifest = (await readManifest('data/sample'))!;
    const files = Object.values(manifest.tables).flat();
    expect(files.length).toBeGreaterThan(20);
    for (const file of files)
      expect(footerProblem(path.join('data/sample', file.path)), file.path).toBeUndefined();
  });

  it('fails a damaged footer as DuckDB does', async () => {
    const manifest = (await readManifest('data/sample'))!;
    const source = path.join('data/sample', manifest.tables.option_quotes[0]!.path);
    const bytes = await fs.readFile(source);
    const length = bytes.readUInt32LE(bytes.length - 8);
    const damages: Record<string, (b: Buffer) => Buffer> = {
      'flipped before the length': (b) => {
        for (let i = b.length - 200; i < b.length - 8; i++) b[i] = b[i]! ^ 0xff;
        return b;
      },
      'flipped at the footer start': (b) => {
        for (let i = b.length - 8 - length; i < b.length - 8 - length + 16; i++) b[i] = b[i]! ^ 0xff;
        return b;
      },
      truncated: (b) => b.subarray(0, b.length - 100),
      'length too large': (b) => {
        b.writeUInt32LE(b.length, b.length - 8);
        return b;
      },
      'no magic': (b) => {
        b[b.length - 1] = 0;
        return b;
      },
    };
    for (const [name, damage] of Object.entries(damages)) {
      const file = path.join(dir, `${name.replaceAll(' ', '-')}.parquet`);
      await fs.writeFile(file, damage(Buffer.from(bytes)));
      expect(await duckdbReads(file), name).toBe(false);
      expect(footerProblem(file), name).toBeDefined();
    }
    expect(footerProblem(path.join(dir, 'absent.parquet'))).toMatch(/cannot open/);
  });
});
