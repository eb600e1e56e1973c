/**
 * The generator's work tables on the JS side: the columns its JS half fills, and their creation as
 * temporary DuckDB tables (`statements.ts` names them and expands them into the store's rows).
 */
import type { SqlSession } from '../../store/sql.js';
import { WORK, WORK_TABLES } from './statements.js';

export type Columns = unknown[][];

/** A work table's rows, column by column (arrays or typed arrays). */
export type ColumnData = readonly ArrayLike<unknown>[];

export type WorkTable = keyof typeof WORK_TABLES;

export function columns(count: number): Columns {
  return Array.from({ length: count }, () => []);
}

export function push(table: Columns, ...values: unknown[]): void {
  for (let i = 0; i < values.length; i++) table[i]!.push(values[i]);
}

export async function createWorkTables(
  sql: SqlSession,
  tables: Partial<Record<WorkTable, ColumnData | undefined>>,
  kind: 'TEMP TABLE' | 'TABLE' = 'TEMP TABLE',
): Promise<void> {
  for (const [key, rows] of Object.entries(tables) as [WorkTable, ColumnData | undefined][]) {
    if (rows === undefined) continue;
    await sql.run(`CREATE ${kind} ${WORK[key]} (${WORK_TABLES[key]})`);
    await sql.append(WORK[key], rows);
  }
}

export async function dropWork(sql: SqlSession): Promise<void> {
  await sql.run(
    Object.values(WORK)
      .map((name) => `DROP TABLE IF EXISTS temp.${name};`)
      .join('\n'),
  );
}
