import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCsvHeader, readCsvInto, scanLines, splitCsvLine } from '../../src/ingest/csv-source.js';
import { SqlSession } from '../../src/store/sql.js';

describe('csv-source', () => {
  let dir: string;
  let sql: SqlSession;
  const write = async (name: string, text: string) => {
    const file = path.join(dir, name);
    await fs.writeFile(file, text);
    return file;
  };
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-csv-source-'));
    sql = await SqlSession.open();
  });
  afterAll(async () => {
    sql.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('splits quoted fields', () => {
    expect(splitCsvLine('a,"b,c","d ""e""",,f')).toEqual(['a', 'b,c', 'd "e"', '', 'f']);
    expect(splitCsvLine('a;b', ';')).toEqual(['a', 'b']);
  });

  it('reads the header after a BOM and leading blank lines, trimmed', async () => {
    const file = await write('h.csv', '\uFEFF\r\n\r\n a , "b,c" ,d\r\n1,2,3\r\n');
    expect(await readCsvHeader(file)).toEqual({ names: ['a', 'b,c', 'd'], line: 3 });
  });

  it('starts reading after a header that follows blank lines', async () => {
    const file = await write('lead.csv', '\uFEFF\r\n\r\nk,v\r\na,1\r\n\r\nb,2,3\r\nc,3\r\n');
    const header = await readCsvHeader(file);
    await sql.run('CREATE TABLE lead (k VARCHAR, v VARCHAR, _line BIGINT, _reject VARCHAR)');
    const read = await readCsvInto(
      sql,
      { file, columns: 2, headerLine: header.line },
      {
        target: 'lead',
        fields: [
          { name: 'k', sql: '"c1"' },
          { name: 'v', sql: '"c2"' },
        ],
        outputs: { k: 'r.k', v: 'r.v' },
      },
    );
    expect(read.malformed).toEqual([{ file, line: 6, reason: 'malformed row: expected 2 fields, found 3' }]);
    expect(await sql.all('SELECT k, v, _line FROM lead ORDER BY _line')).toEqual([
      { k: 'a', v: '1', _line: 4 },
      { k: 'c', v: '3', _line: 7 },
    ]);
  });

  it('finds blank lines and counts lines with or without a final newline', async () => {
    expect(await scanLines(await write('s1.csv', 'h\r\n1\r\n\r\n2\n\n3'))).toEqual({
      lines: 6,
      blank: [3, 5],
      bytes: 12,
    });
    expect(await scanLines(await write('s2.csv', 'h\n1\n'))).toEqual({ lines: 2, blank: [], bytes: 4 });
  });

  it('numbers rows by their file line around blank lines and malformed rows, and types them', async () => {
    const file = await write('n.csv', 'k,v\n\na,1\nb,2,extra\n\nc,x\nd\ne,5\n');
    await sql.run('CREATE TABLE t (k VARCHAR, v INTEGER, _line BIGINT, _reject VARCHAR)');
    const read = await readCsvInto(
      sql,
      { file, columns: 2, headerLine: 1 },
      {
        target: 't',
        fields: [
          { name: 'k', sql: '"c1"' },
          {
            name: 'v',
            sql: 'TRY_CAST("c2" AS INTEGER)',
            raw: '"c2"',
            label: 'v',
            expect: 'a number',
            required: true,
          },
        ],
        outputs: { k: 'r.k', v: 'r.v' },
      },
    );
    expect(read).toEqual({
      records: 3,
      malformed: [
        { file, line: 4, reason: 'malformed row: expected 2 fields, found 3' },
        { file, line: 7, reason: 'malformed row: expected 2 fields, found 1' },
      ],
    });
    expect(await sql.columns('SELECT k, v, _line, _reject FROM t ORDER BY _line')).toEqual({
      names: ['k', 'v', '_line', '_reject'],
      columns: [
        ['a', 'c', 'e'],
        [1, null, 5],
        [3, 6, 8],
        [null, 'wrong type: v "x" is not a number', null],
      ],
    });
  });
});
