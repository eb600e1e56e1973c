/**
 * A seeded property-based fuzz of the service: hostile request targets and request options over the
 * sample store, in process. Whatever a caller sends, the answer is a status below 500 with a body in the
 * service's shapes: `{"s":"error","errmsg":…}`, `no_data`, or the HTML 400 of an over-long request line.
 *
 * 50,000 requests with PITCHAIN_TEST_SIZE=full (CI), 5,000 of the same seeded sequence otherwise;
 * `FUZZ_RUNS` and `FUZZ_SEED` override the run count and seed (a failure prints its seed and path).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/index.js';
import type { RequestOptions } from '../../src/service/service.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { testSize } from '../helpers/size.js';
import { pinTimeZone } from '../helpers/time-zone.js';
import { hostile, requestTarget, shapeProblem } from './helpers/hostile.js';

pinTimeZone('Pacific/Auckland');

const RUNS = Number(process.env['FUZZ_RUNS'] ?? testSize(50_000, 5_000));
const SEED = Number(process.env['FUZZ_SEED'] ?? 20_200_316);
/** The store's clock; requests mostly keep it, some name their own `now`. */
const NOW = '2020-03-20T15:45:00-04:00';

const throwing = {
  toString: () => {
    throw new Error('no text');
  },
};
const hostileOptionValues: unknown[] = [
  Number.NaN,
  Number.POSITIVE_INFINITY,
  -1,
  1e20,
  0,
  '2020-03-16',
  '2020-03-16T15:45:00-04:00',
  'constructor',
  '',
  new Date(Number.NaN),
  new Date('2020-03-16T19:45:00Z'),
  null,
  {},
  [],
  Object.create(null),
  throwing,
  Symbol('now'),
  10n,
  () => 1,
];

const optionsArbitrary: fc.Arbitrary<RequestOptions> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({}) },
  { weight: 1, arbitrary: fc.constant(null as unknown as RequestOptions) },
  {
    weight: 1,
    arbitrary: fc
      .record(
        {
          now: fc.constantFrom(...hostileOptionValues, 1584733500, '2020-03-19T10:00:00-04:00'),
          token: fc.constantFrom(...hostileOptionValues, 'token', 'Bearer x'),
          headers: fc.oneof(
            fc.constantFrom(...hostileOptionValues),
            fc.dictionary(hostile, fc.constantFrom(...hostileOptionValues, 'Bearer abc', 'text/csv')),
          ),
          ip: fc.constantFrom(...hostileOptionValues, '10.0.0.1'),
        },
        { requiredKeys: [] },
      )
      .map((options) => options as RequestOptions),
  },
);

/** The tokens of the accounts store: a free plan (historical only) and a paid one. */
const TOKENS = ['free-token', 'prime-token'];

/** The sample store as the local account, and the same store behind an accounts file. */
let store: Store;
let guarded: Store;
let dir: string;
beforeAll(async () => {
  store = await openStore(path.join(REPO_ROOT, 'data/sample'), { now: NOW });
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-fuzz-'));
  const accounts = path.join(dir, 'accounts.json');
  await fs.writeFile(
    accounts,
    JSON.stringify({
      [TOKENS[0]!]: { plan: 'free' },
      [TOKENS[1]!]: { plan: 'prime', userType: 'pro', opra: true },
    }),
  );
  guarded = await openStore(path.join(REPO_ROOT, 'data/sample'), { now: NOW, accounts });
});
afterAll(async () => {
  store?.close();
  guarded?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

/** One request in eight goes to the accounts store, with a known, a missing or a hostile token. */
const accountsArbitrary = fc.tuple(
  fc.integer({ min: 0, max: 7 }),
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...TOKENS) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, 'PRIME-TOKEN', '') },
    { weight: 1, arbitrary: hostile },
  ),
);

it(`answers ${RUNS} hostile requests below 500 in the service's shapes`, async () => {
  const statuses = new Map<number, number>();
  let requests = 0;
  const started = performance.now();
  await fc.assert(
    fc.asyncProperty(
      requestTarget,
      optionsArbitrary,
      accountsArbitrary,
      async (target, options, [which, token]) => {
        const response =
          which === 0
            ? await guarded.request(target, token === undefined ? options : { ...options, token })
            : await store.request(target, options);
        requests++;
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status >= 500)
          throw new Error(`${response.status}: ${response.detail ?? response.body}`);
        if (response.status >= 400) {
          const problem = shapeProblem(response);
          if (problem !== undefined) throw new Error(`${response.status} with ${problem}: ${response.body}`);
        }
      },
    ),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  );
  const seconds = (performance.now() - started) / 1000;
  const histogram = [...statuses]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}:${count}`)
    .join(' ');
  console.log(
    `fuzz: ${requests} requests in ${seconds.toFixed(1)}s (${Math.round(requests / seconds)}/s), seed ${SEED}; statuses ${histogram}`,
  );
  expect(requests).toBe(RUNS);
}, 600_000);
