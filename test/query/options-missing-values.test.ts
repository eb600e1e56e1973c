/**
 * What an option row says when its source left a value out (README, "What the official SDKs need"): the
 * underlying price, and the moneyness figures made from it, are null without it; `mid` and
 * `extrinsicValue` are null without both a bid and an ask. Nothing is made up for an option, even though
 * the official JS SDK refuses such a row.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chain } from '../../src/query/endpoints/options-chain.js';
import type { StoreReader } from '../../src/store/store.js';
import { buildStore, context, dated, occ } from './helpers/options-market.js';
import { columns } from './helpers/shape.js';

let reader: StoreReader;
let close: () => Promise<void>;

const CALL = occ('SPY', '2024-03-15', 'C', 500);
const PUT = occ('SPY', '2024-03-15', 'P', 500);
const HALF = occ('SPY', '2024-03-15', 'C', 505);

beforeAll(async () => {
  ({ reader, close } = await buildStore(
    [
      { symbol: CALL, session: '2024-03-14', time: '16:00', bid: 3, ask: 3.1, underlyingPrice: null },
      { symbol: PUT, session: '2024-03-14', time: '16:00', bid: null, ask: null, underlyingPrice: 502.5 },
      { symbol: HALF, session: '2024-03-14', time: '16:00', bid: 0.5, ask: null, underlyingPrice: 502.5 },
    ],
    [],
  ));
});
afterAll(async () => close());

it('serves null where the source gave no underlying price or no bid and ask, and the rest as usual', async () => {
  const result = await chain.run(
    context(reader, { now: '2024-03-19 12:00', asOf: dated('2024-03-14'), path: { underlying: 'SPY' } }),
  );
  const got = columns(result);
  const pick = (...keys: string[]) => Object.fromEntries(keys.map((k) => [k, got[k]]));
  expect(
    pick(
      'optionSymbol',
      'bid',
      'ask',
      'mid',
      'underlyingPrice',
      'inTheMoney',
      'intrinsicValue',
      'extrinsicValue',
    ),
  ).toEqual({
    optionSymbol: [CALL, HALF, PUT],
    bid: [3, 0.5, null],
    ask: [3.1, null, null],
    mid: [3.05, null, null],
    underlyingPrice: [null, 502.5, 502.5],
    inTheMoney: [null, false, false],
    intrinsicValue: [null, 0, 0],
    extrinsicValue: [null, null, null],
  });
});
