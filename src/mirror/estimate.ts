/**
 * What a mirror run will cost, in the service's credits: estimated before the run from the cheap
 * endpoints, and predicted per request while it runs, so that a budget stops it before it is exceeded.
 */
import { creditsFor } from '../billing/credits.js';
import type { Client } from '../client/index.js';
import { isIsoDate } from '../market-time/index.js';
import type { Item } from './plan.js';
import type { MirrorEstimate } from './types.js';

/** Budget headroom on a chain's expected size: chains grow from session to session. */
const CHAIN_MARGIN = 1.25;

/**
 * The credits the missing requests will cost, from the cheap endpoints: the strikes of the first and last
 * missing session per underlying (a chain holds a call and a put per listed strike; sessions between are
 * interpolated) and one session's minute bars. Sets each item's `expectedRows`.
 */
export async function estimateItems(
  client: Client,
  items: readonly Item[],
  spent: () => number,
  budget: number | undefined,
): Promise<MirrorEstimate> {
  const before = spent();
  // Each request of the estimate costs at most one credit (strikes; one session of minute bars).
  let partial = false;
  const affordable = () => {
    const yes = budget === undefined || spent() + 1 <= budget;
    partial ||= !yes;
    return yes;
  };
  const totals = new Map<string, { requests: number; credits: number }>();
  const add = (what: string, credits: number) => {
    const row = totals.get(what) ?? { requests: 0, credits: 0 };
    totals.set(what, { requests: row.requests + 1, credits: row.credits + credits });
  };
  for (const underlying of new Set(items.map((item) => item.underlying))) {
    const mine = items.filter((item) => item.underlying === underlying);
    const chains = mine.filter((item) => item.kind === 'chain');
    if (!affordable()) break;
    if (chains.length > 0) {
      const first = await contractsOn(client, underlying, chains[0]!.session!);
      const last =
        chains.length === 1 || !affordable()
          ? first
          : await contractsOn(client, underlying, chains.at(-1)!.session!);
      chains.forEach((item, i) => {
        item.expectedRows = Math.round(first + ((last - first) * i) / Math.max(chains.length - 1, 1));
        add('option chains', estimatedCredits(item.expectedRows));
      });
    }
    const minutes = mine.filter((item) => item.kind === 'minute');
    const probeDay = minutes[0]?.session;
    const perSession =
      probeDay === undefined || !affordable()
        ? undefined
        : (await client.stocks.candles('1', underlying, { date: probeDay })).length;
    for (const item of perSession === undefined ? [] : minutes) {
      item.expectedRows = perSession! * item.sessions;
      if (item.expectedRows > 0) add('minute bars', estimatedCredits(item.expectedRows));
    }
    for (const item of mine.filter((i) => i.kind === 'daily')) {
      item.expectedRows = item.sessions;
      add('daily bars', estimatedCredits(item.sessions));
    }
  }
  const rows = [...totals].map(([what, row]) => ({ what, ...row }));
  return {
    rows,
    credits: rows.reduce((sum, row) => sum + row.credits, 0),
    spent: spent() - before,
    ...(partial ? { partial: true as const } : {}),
  };
}

/** The service's credits for an answer of `rows` chain or candle rows (the `per-1000-rows` rule). */
function perThousandRows(rows: number): number {
  return creditsFor('per-1000-rows', rows, [], false);
}

/** The estimate's credits for `rows` expected rows: none when none are expected. */
function estimatedCredits(rows: number): number {
  return rows > 0 ? perThousandRows(rows) : 0;
}

/** Contracts listed on `session`: a call and a put per strike of every expiration (0 when none). */
async function contractsOn(client: Client, underlying: string, session: string): Promise<number> {
  const strikes = await client.options.strikes(underlying, { date: session });
  let count = 0;
  for (const [key, values] of Object.entries(strikes.columns)) {
    if (isIsoDate(key)) count += 2 * values.length;
  }
  return count;
}

/** The most an item may cost, for the budget: its expected rows (chains with headroom) per 1,000. */
export function predictCredits(item: Item, chainSeen: ReadonlyMap<string, number>): number {
  if (item.kind !== 'chain') return perThousandRows(item.expectedRows ?? 1);
  const rows = Math.max(item.expectedRows ?? 1, chainSeen.get(item.underlying) ?? 0) * CHAIN_MARGIN;
  return perThousandRows(rows);
}
