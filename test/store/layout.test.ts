import { describe, expect, it } from 'vitest';
import { PARTITION_EXPRESSIONS, partitionMatchSql } from '../../src/store/layout.js';
import { createStagingTableSql } from '../../src/store/schema.js';
import { SqlSession } from '../../src/store/sql.js';

describe('partitionMatchSql', () => {
  it('selects the rows of one partition, as the partition expressions file them, years by date range', async () => {
    const sql = await SqlSession.open();
    try {
      await sql.run(createStagingTableSql('open_interest'));
      await sql.run(
        `INSERT INTO open_interest (underlying, option_symbol, settled_session, open_interest)
         SELECT u, 'X', d, 1 FROM (VALUES ('SPX'), ('SPY'), ('O''X')) a(u),
           (VALUES (DATE '2019-12-31'), (DATE '2020-01-01'), (DATE '2020-12-31'), (DATE '2021-01-01')) b(d)`,
      );
      const expressions = PARTITION_EXPRESSIONS.open_interest;
      const partitions = await sql.all<{ underlying: string; year: string }>(
        `SELECT DISTINCT ${expressions['underlying']} AS underlying, CAST(${expressions['year']} AS VARCHAR) AS year
         FROM open_interest ORDER BY ALL`,
      );
      expect(partitions).toHaveLength(9);
      for (const partition of partitions) {
        const where = partitionMatchSql('open_interest', partition);
        expect(where[1]).toBe(
          `"settled_session" >= DATE '${partition.year}-01-01' AND "settled_session" < DATE '${Number(partition.year) + 1}-01-01'`,
        );
        const chosen = await sql.all(
          `SELECT underlying, settled_session FROM open_interest WHERE ${where.join(' AND ')} ORDER BY ALL`,
        );
        const expected = await sql.all(
          `SELECT underlying, settled_session FROM open_interest
           WHERE underlying = $1 AND year(settled_session) = $2::INTEGER ORDER BY ALL`,
          [partition.underlying, partition.year],
        );
        expect(chosen).toEqual(expected);
        expect(chosen.length).toBeGreaterThan(0);
      }
    } finally {
      sql.close();
    }
  });

  it('matches partitions without a year by their expressions', () => {
    expect(partitionMatchSql('contracts', { underlying: 'SPX' })).toEqual([`("underlying") = 'SPX'`]);
  });
});
