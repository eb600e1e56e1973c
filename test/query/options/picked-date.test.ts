/**
 * A chain request without `expiration` that picks one date (`dte`, the front month, a window of one date)
 * reads that date's rows only, chosen from the contracts listed at the as-of (`options-chain.ts`
 * `pickedDateAnswer`). These tests hold it to the rule the service states, applied here on its own to the
 * whole chain's answer: the same request with the date named (`expiration=D`) or with every date
 * (`expiration=all`), which read the chain as before, must answer the same, body for body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dte, etWallToSeconds, sessionsBetween, toEtDate } from '../../../src/market-time/index.js';
import { chain } from '../../../src/query/endpoints/options-chain.js';
import { contractTable } from '../../../src/query/options/contract-table.js';
import type { AsOf, EndpointContext, EndpointResult } from '../../../src/query/types.js';
import { StoreCache } from '../../../src/store/cache.js';
import { StoreReader } from '../../../src/store/store.js';
import { seededRandom } from '../../helpers/seeded-random.js';
import { context } from '../helpers/options-market.js';
import { render } from '../helpers/shape.js';

let reader: StoreReader;
beforeAll(async () => {
  reader = await StoreReader.open('data/sample', { threads: 1 });
});
afterAll(() => reader.close());

const NOW = '2021-06-01 12:00';

type Query = Record<string, string>;

function ask(
  underlying: string,
  asOf: AsOf,
  query: Query,
  greeks: EndpointContext['greeks'] = 'vendor',
): Promise<EndpointResult> {
  return chain.run({ ...context(reader, { now: NOW, asOf, path: { underlying }, query }), greeks });
}

/** What a response would print: the body of an answer, the no-data or error result as it is. */
const printed = (result: EndpointResult) => (result.kind === 'ok' ? render(result) : result);

/** The expiration dates of an answer's rows (none for a no-data answer). */
function datesOf(result: EndpointResult): string[] {
  if (result.kind !== 'ok') return [];
  const expirations = result.fields.find((field) => field.key === 'expiration')!.values as number[];
  return [...new Set(expirations.map((seconds) => toEtDate(seconds)))].sort();
}

const without = (query: Query, key: string): Query =>
  Object.fromEntries(Object.entries(query).filter(([k]) => k !== key));

/**
 * The answer the service's rule gives, from requests that read the whole chain: `dte=N` is the one date
 * nearest N days (the earlier on a tie) among those the other filters keep; no chooser at all is the
 * earliest monthly date; other choosers keep every date they match.
 */
async function expected(underlying: string, asOf: AsOf, session: string, query: Query, greeks?: 'computed') {
  if (query['dte'] !== undefined) {
    const rest = without(query, 'dte');
    const all = await ask(underlying, asOf, { ...rest, expiration: 'all' }, greeks);
    const target = Number(query['dte']);
    let best: string | undefined;
    for (const date of datesOf(all)) {
      if (
        best === undefined ||
        Math.abs(dte(session, date) - target) < Math.abs(dte(session, best) - target)
      ) {
        best = date;
      }
    }
    return best === undefined ? all : ask(underlying, asOf, { ...rest, expiration: best }, greeks);
  }
  const choosers = ['from', 'to', 'month', 'year', 'weekly', 'monthly', 'quarterly'];
  if (choosers.some((key) => query[key] !== undefined)) {
    return ask(underlying, asOf, { ...query, expiration: 'all' }, greeks);
  }
  const monthly = await ask(underlying, asOf, { ...query, monthly: 'true', expiration: 'all' }, greeks);
  const front = datesOf(monthly)[0];
  return front === undefined
    ? monthly
    : ask(underlying, asOf, { ...query, monthly: 'true', expiration: front }, greeks);
}

/** Requests whose expiration choice lands on one date, or may: every chooser, alone and combined. */
function queries(underlying: string, session: string): Query[] {
  const next = new Date(`${session}T12:00:00Z`);
  next.setUTCMonth(next.getUTCMonth() + 1);
  const list: Query[] = [
    {},
    { dte: '0' },
    { dte: '7' },
    { dte: '30' },
    { dte: '45', side: 'put' },
    { dte: '400' },
    { dte: '30', weekly: 'false' },
    { dte: '60', monthly: 'true' },
    { dte: '30', nonstandard: 'true' },
    { month: String(next.getUTCMonth() + 1), year: String(next.getUTCFullYear()), monthly: 'true' },
    { side: 'call', strikeLimit: '3' },
  ];
  if (underlying === 'SPX' || underlying === 'SPXW') list.push({ dte: '30', am: 'true' }, { pm: 'true' });
  return list;
}

describe('a chain request that picks one expiration date', () => {
  it('answers as the whole chain does, at random instants of every kind, for every chooser', async () => {
    const random = seededRandom(20261127);
    const sessions = sessionsBetween('2019-01-02', '2020-12-31');
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    let compared = 0;
    for (let draw = 0; draw < 10; draw++) {
      const underlying = pick(['SPY', 'SPX', 'SPXW', 'AAPL']);
      const session = pick(sessions);
      const asOf: AsOf = pick<AsOf>([
        { kind: 'dated', session },
        {
          kind: 'current',
          cutoffSeconds: etWallToSeconds(session, '15:50'),
          eodOnly: false,
          maxSession: null,
        },
        {
          kind: 'current',
          cutoffSeconds: etWallToSeconds(session, '10:00'),
          eodOnly: false,
          maxSession: null,
        },
        {
          kind: 'current',
          cutoffSeconds: etWallToSeconds(session, '18:00'),
          eodOnly: true,
          maxSession: session,
        },
      ]);
      const greeks = asOf.kind === 'current' && draw % 2 === 0 ? 'computed' : undefined;
      for (const query of queries(underlying, session)) {
        const where = `${underlying} ${JSON.stringify(asOf)} ${JSON.stringify(query)} ${greeks ?? ''}`;
        const answer = printed(await ask(underlying, asOf, query, greeks));
        expect(answer, where).toEqual(printed(await expected(underlying, asOf, session, query, greeks)));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
  }, 120_000);

  it('answers a root without monthly dates asked its front month from the listings alone, as the whole chain does', async () => {
    // SPXW lists no monthly date: its front month picks nothing, and nothing is read to say so.
    for (const session of ['2019-01-02', '2019-08-14', '2020-03-16', '2020-12-31']) {
      for (const asOf of [
        { kind: 'dated', session },
        {
          kind: 'current',
          cutoffSeconds: etWallToSeconds(session, '12:00'),
          eodOnly: false,
          maxSession: null,
        },
      ] satisfies AsOf[]) {
        const cache = new StoreCache(() => reader.dataVersion);
        await contractTable(reader.sql, cache, 'SPX');
        const before = cache.sessionCacheBytes;
        const answer = await chain.run({
          ...context(reader, { now: NOW, asOf, path: { underlying: 'SPXW' }, query: {} }),
          cache,
        });
        expect(answer, `${session} ${asOf.kind}`).toMatchObject({ kind: 'no_data' });
        expect(cache.sessionCacheBytes, `${session} ${asOf.kind}`).toBe(before);
        expect(printed(answer), `${session} ${asOf.kind}`).toEqual(
          printed(await expected('SPXW', asOf, session, {})),
        );
      }
    }
  });

  it('answers from the whole chain when the date the listings pick has no quote yet', async () => {
    // A SPY expiration listed on a session and first quoted at its close: at 10:00 that session the
    // listings hold it and the quotes do not, so a dte aimed at it must land where the quotes allow.
    const { columns } = await reader.sql.typedColumns(
      `SELECT CAST(min(first_traded) - DATE '1970-01-01' AS DOUBLE), CAST(expiration - DATE '1970-01-01' AS DOUBLE)
       FROM contracts WHERE underlying = 'SPY' GROUP BY expiration
       HAVING min(first_traded) BETWEEN DATE '2019-02-01' AND DATE '2020-12-01' ORDER BY 1, 2 LIMIT 1`,
    );
    const day = (n: number) => new Date(n * 86_400_000).toISOString().slice(0, 10);
    const listedOn = day((columns[0] as Float64Array)[0]!);
    const expiration = day((columns[1] as Float64Array)[0]!);
    const asOf: AsOf = {
      kind: 'current',
      cutoffSeconds: etWallToSeconds(listedOn, '10:00'),
      eodOnly: false,
      maxSession: null,
    };
    const query = { dte: String(dte(listedOn, expiration)) };
    const answer = await ask('SPY', asOf, query);
    expect(datesOf(answer)).not.toContain(expiration);
    expect(printed(answer)).toEqual(printed(await expected('SPY', asOf, listedOn, query)));
  });
});
