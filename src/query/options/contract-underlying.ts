/**
 * Which underlying the store files a contract under. The calendar knows the index roots (SPXW under
 * SPX) and every other root is its own underlying's, but for a root made by a corporate action (AAPL1 under
 * AAPL) only the data can say.
 */
import { underlyingOfRoot } from '../../market-time/index.js';
import type { StoreCache } from '../../store/cache.js';
import type { SqlSession } from '../../store/sql.js';
import { heldContractTable, indexOfContract } from './contract-table.js';

/**
 * The underlying the store files a contract of `root` under; undefined when it lists no contract of the
 * root, or lists them under more than one underlying. A loop has read the contract table of the root's
 * own underlying already, and a contract it lists answers at no cost; any other root is looked up in the
 * contracts table, read once per data version (a row per root).
 */
export async function underlyingOfContract(
  sql: SqlSession,
  cache: StoreCache,
  optionSymbol: string,
  root: string,
): Promise<string | undefined> {
  const guess = underlyingOfRoot(root);
  const held = await heldContractTable(cache, guess)?.catch(() => undefined);
  if (held !== undefined && indexOfContract(held, optionSymbol) !== -1) return guess;
  const owners = await cache.memoize('contract-roots', async () => {
    const rows = await sql.all<{ root: string; underlying: string }>(
      'SELECT DISTINCT root, underlying FROM contracts',
    );
    // null: a root under two underlyings, whose contracts are each looked up.
    const owner = new Map<string, string | null>();
    for (const row of rows) {
      owner.set(
        row.root,
        owner.has(row.root) && owner.get(row.root) !== row.underlying ? null : row.underlying,
      );
    }
    return owner;
  });
  return owners.get(root) ?? undefined;
}
