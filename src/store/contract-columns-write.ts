/**
 * Writing a contract column file (`contract-columns.ts`) from a contracts Parquet file the writer has just
 * written: its contracts read back in symbol order, their numbers as `CONTRACT_NUMBER_READS` gives them.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import {
  CONTRACT_COLUMNS_FORMAT,
  CONTRACT_COLUMNS_MAGIC,
  CONTRACT_NUMBER_COLUMNS,
  CONTRACT_NUMBER_READS,
  type ContractColumnsHeader,
  contractColumnsPath,
  pad8,
  rootIndices,
} from './contract-columns.js';
import { fsyncFile } from './parquet.js';
import { TABLE_PARTITIONS, TABLES } from './schema.js';
import { quoteLiteral, type SqlSession } from './sql.js';
import { quoteIdentifier } from './sql-text.js';

/**
 * Writes the contract column file of the contracts Parquet file `parquetAbs` (content hash `sha256`),
 * durably, under a scratch name first (`temp`, a writer's, which garbage collection removes when a crash
 * leaves one behind); returns its absolute path, or nothing when the file cannot hold the contracts (a
 * symbol that is not ASCII, more roots than 16 bits number): readers then read the Parquet file.
 */
export async function writeContractColumns(
  sql: SqlSession,
  parquetAbs: string,
  sha256: string,
  temp: (target: string) => string,
): Promise<string | undefined> {
  // The file holds numbers in this machine's byte order, which only a little-endian reader reads.
  if (os.endianness() !== 'LE') return undefined;
  // The file's columns as the store's schema types them, as a reader's view casts them (a file of an
  // earlier writer, repaired, may hold another physical type), so both reads make the same numbers.
  const typed = TABLES.contracts
    .filter((column) => !TABLE_PARTITIONS.contracts.includes(column.name))
    .map(
      (column) =>
        `CAST(${quoteIdentifier(column.name)} AS ${column.type}) AS ${quoteIdentifier(column.name)}`,
    );
  const { columns } = await sql.typedColumns(
    `SELECT c.option_symbol, c.root, ${CONTRACT_NUMBER_COLUMNS.map((name) => CONTRACT_NUMBER_READS[name]).join(', ')}
     FROM (SELECT ${typed.join(', ')} FROM read_parquet(${quoteLiteral(parquetAbs)})) c
     ORDER BY c.option_symbol`,
  );
  const symbols = columns[0] as string[];
  const rootTexts = columns[1] as string[];
  const numbers = columns.slice(2) as Float64Array[];
  const rows = symbols.length;
  const joined = symbols.join('');
  // Latin-1 keeps one byte a character: only ASCII comes back as it went in.
  if (!/^[\x20-\x7e]*$/.test(joined)) return undefined;
  const text = Buffer.from(joined, 'latin1');
  const ends = new Uint32Array(rows);
  let end = 0;
  for (const [i, symbol] of symbols.entries()) {
    end += symbol.length;
    ends[i] = end;
  }
  const { roots, root } = rootIndices(rootTexts);
  if (roots.length > 0xffff) return undefined;
  const parts = [
    ...numbers.map((column) => Buffer.from(column.buffer, column.byteOffset, column.byteLength)),
    Buffer.from(ends.buffer, 0, ends.byteLength),
    Buffer.alloc(pad8(ends.byteLength)),
    Buffer.from(root.buffer, 0, root.byteLength),
    Buffer.alloc(pad8(root.byteLength)),
    text,
    Buffer.alloc(pad8(text.length)),
  ];
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  const header: ContractColumnsHeader = {
    format: CONTRACT_COLUMNS_FORMAT,
    parquet: sha256,
    rows,
    roots,
    symbolBytes: text.length,
    data: hash.digest('hex'),
  };
  const trailer = Buffer.from(JSON.stringify(header), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(trailer.length, 0);
  const target = contractColumnsPath(parquetAbs);
  const scratch = temp(target);
  await fs.writeFile(
    scratch,
    Buffer.concat([CONTRACT_COLUMNS_MAGIC, ...parts, trailer, length, CONTRACT_COLUMNS_MAGIC]),
  );
  await fsyncFile(scratch);
  await fs.rename(scratch, target);
  return target;
}
