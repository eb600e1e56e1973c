/**
 * The footer walk (`footer.ts`) against DuckDB's own reading of the footer: every file of the sample
 * walks, and a footer damaged in any of several ways fails the walk as it fails DuckDB.
 */
import { promises as fs, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { footerFacts } from '../../src/store/footer.js';
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
      expect(footerFacts(path.join('data/sample', file.path)).problem, file.path).toBeUndefined();
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
      expect(footerFacts(file).problem, name).toBeDefined();
    }
    expect(footerFacts(path.join(dir, 'absent.parquet')).problem).toMatch(/cannot open/);
  });

  it('fails at once a footer whose lists claim more elements than its bytes hold', () => {
    // FileMetaData field 1 a list of 2^40 booleans (one byte each), then the end: a walk that trusted
    // the count would step for hours (the test's time limit fails it). A list of structs and a map of
    // booleans claim as many.
    const count = [0x80, 0x80, 0x80, 0x80, 0x80, 0x20]; // 2^40 as a varint
    const footers = {
      booleans: [0x19, 0xf1, ...count, 0x00],
      structs: [0x19, 0xfc, ...count, 0x00],
      map: [0x1b, ...count, 0x11, 0x00],
    };
    for (const [name, bytes] of Object.entries(footers)) {
      const footer = Buffer.from(bytes);
      const length = Buffer.alloc(4);
      length.writeUInt32LE(footer.length);
      const file = path.join(dir, `claims-${name}.parquet`);
      writeFileSync(file, Buffer.concat([Buffer.from('PAR1'), footer, length, Buffer.from('PAR1')]));
      expect(footerFacts(file).problem, name).toBe('footer does not decode');
    }
  });

  it('tells, in one walk, nothing to lean on of a footer that does not end where its length says', async () => {
    const manifest = (await readManifest('data/sample'))!;
    const source = path.join('data/sample', manifest.tables.option_quotes[0]!.path);
    const bytes = await fs.readFile(source);
    const whole = footerFacts(source);
    expect(whole.problem).toBeUndefined();
    expect(whole.integerBounds.size).toBeGreaterThan(0);
    // Four bytes slipped in after the footer's last field, the length grown to cover them.
    const length = bytes.readUInt32LE(bytes.length - 8);
    const tail = Buffer.alloc(8);
    tail.writeUInt32LE(length + 4, 0);
    tail.write('PAR1', 4, 'latin1');
    const file = path.join(dir, 'trailing.parquet');
    await fs.writeFile(file, Buffer.concat([bytes.subarray(0, bytes.length - 8), Buffer.alloc(4), tail]));
    const facts = footerFacts(file);
    expect(facts.problem).toBe('footer does not decode');
    expect(facts.allNull.size).toBe(0);
    expect(facts.integerBounds.size).toBe(0);
  });
});

describe('the columns a footer says are all NULL', () => {
  it('agrees with DuckDB counting the values of every column of every file of the sample', async () => {
    const manifest = (await readManifest('data/sample'))!;
    for (const file of [...manifest.tables.option_quotes, ...manifest.tables.open_interest]) {
      const at = path.join('data/sample', file.path);
      const names = (
        await sql.all<{ name: string }>('SELECT name FROM parquet_schema($at) WHERE num_children IS NULL', {
          at,
        })
      ).map((r) => r.name);
      const counted = await sql.all<Record<string, number>>(
        `SELECT ${names.map((n, i) => `count("${n}") AS c${i}`).join(', ')} FROM read_parquet($at)`,
        { at },
      );
      const empty = names.filter((_, i) => Number(counted[0]![`c${i}`]) === 0);
      expect([...footerFacts(at).allNull].sort(), file.path).toEqual(empty.sort());
    }
  });

  it('names a column NULL in every row group, and not one with a value in any', async () => {
    const file = path.join(dir, 'nulls.parquet');
    await sql.run(
      `COPY (SELECT i, CAST(NULL AS DOUBLE) AS never, CASE WHEN i = 150000 THEN 1.5 END AS once
             FROM range(200000) t(i)) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 50000)`,
    );
    expect(await sql.value('SELECT count(*) FROM parquet_metadata($file)', { file })).toBeGreaterThan(3);
    expect([...footerFacts(file).allNull]).toEqual(['never']);
  });

  it('names none in a file whose footer cannot be read', async () => {
    const file = path.join(dir, 'not-parquet.parquet');
    await fs.writeFile(file, 'not parquet at all');
    expect(footerFacts(file).allNull.size).toBe(0);
  });
});

describe('the integer bounds a footer states', () => {
  it('are the least and greatest unscaled value DuckDB finds in each integer column of the sample', async () => {
    const manifest = (await readManifest('data/sample'))!;
    // Each column with its scale: decimals are stored as their unscaled digits.
    const columns: Record<string, Record<string, number>> = {
      option_quotes: {
        bid: 2,
        ask: 2,
        last: 2,
        underlying_price: 4,
        iv: 6,
        delta: 6,
        bid_size: 0,
        volume: 0,
      },
      open_interest: { open_interest: 0 },
    };
    let compared = 0;
    for (const table of ['option_quotes', 'open_interest'] as const) {
      for (const file of manifest.tables[table]) {
        const at = path.join('data/sample', file.path);
        const bounds = footerFacts(at).integerBounds;
        for (const [column, scale] of Object.entries(columns[table]!)) {
          const unscaled = `CAST("${column}" * ${10 ** scale} AS BIGINT)`;
          const [row] = await sql.all<{ low: number | null; high: number | null }>(
            `SELECT min(${unscaled}) AS low, max(${unscaled}) AS high FROM read_parquet($at)`,
            { at },
          );
          const expected =
            row!.low === null
              ? [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]
              : [Number(row!.low), Number(row!.high)];
          expect(bounds.get(column), `${file.path} ${column}`).toEqual(expected);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(20);
  });

  it('bound only the values held, and leave out every column of a footer that does not walk', async () => {
    const file = path.join(dir, 'bounds.parquet');
    await sql.run(
      `COPY (SELECT CAST(i AS INTEGER) AS small, CAST(i AS BIGINT) * 4000000000 AS large,
                    CASE WHEN i < 50000 THEN CAST(i AS INTEGER) END AS some, CAST(NULL AS INTEGER) AS nothing
             FROM range(-100, 100000) t(i)) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 50000)`,
    );
    const bounds = footerFacts(file).integerBounds;
    expect(bounds.get('small')).toEqual([-100, 99999]);
    expect(bounds.get('large')).toEqual([-400000000000, 99999 * 4000000000]);
    // The last row groups of `some` are all NULL: they state no bounds and bound no value.
    expect(bounds.get('some')).toEqual([-100, 49999]);
    expect(bounds.get('nothing')).toEqual([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    const broken = path.join(dir, 'bounds-broken.parquet');
    await fs.writeFile(broken, (await fs.readFile(file)).subarray(0, 1000));
    expect(footerFacts(broken).integerBounds.size).toBe(0);
  });
});
