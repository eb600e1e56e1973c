/**
 * The request log kept in memory: the last 10,000 entries, oldest first, however many requests a server
 * answers (it is cut in batches, not an entry at a time), and ray ids that do not repeat.
 */
import { describe, expect, it } from 'vitest';
import { type Account, LOCAL_ACCOUNT } from '../../src/billing/accounts.js';
import { Ledger } from '../../src/billing/ledger.js';

const NOW = 1_584_387_900; // 2020-03-16T15:45:00-04:00
const ACCOUNT: Account = { ...LOCAL_ACCOUNT, id: 'account-1', credits: { limit: 1e9, period: 'day' } };

describe('the request log in memory', () => {
  it('keeps the last 10,000 entries in order, at every count', async () => {
    const ledger = new Ledger(undefined);
    const rays = new Set<string>();
    const checkpoints = new Set([9_999, 10_000, 10_001, 19_999, 20_000, 20_001, 25_000]);
    for (let n = 1; n <= 25_000; n++) {
      const entry = await ledger.record(ACCOUNT, '/v1/markets/status/', 200, 1, NOW);
      rays.add(entry.ray);
      if (!checkpoints.has(n)) continue;
      const log = ledger.log;
      expect(log.length).toBe(Math.min(n, 10_000));
      expect(log.at(-1)).toEqual(entry);
      expect(log.at(-1)!.logId - log[0]!.logId).toBe(log.length - 1);
    }
    expect(rays.size).toBe(25_000);
    expect([...rays].every((ray) => /^[0-9a-f]{16}-LCL$/.test(ray))).toBe(true);
    expect(ledger.totalCredits).toBe(25_000);
  });
});
