/**
 * Stock answers at random instants: `store.at(T).stocks.quotes` and daily `candles` on `data/sample`, as
 * a notebook exploring or a backtest's runner asks them, each symbol's daily bars kept in memory
 * (`src/query/daily-history.ts`) against a store whose session cache is too small to keep them, so that
 * every answer asks its statements, in the same run. Both stores are freshly opened; the instants are the
 * same on both sides, drawn from a fixed sequence, and the answers are compared.
 */
import { openStore, type Store } from '../src/library/store.js';
import { etWallToSeconds, sessionsBetween } from '../src/market-time/index.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { defineBenchmark, loadAverage, ratioRow } from './lib.js';

const REQUESTS = 300;
/** Intraday instants (a quote sums the session's minute bars so far) and after the close (daily bars alone). */
const TIMES = ['09:45', '12:00', '15:59', '16:00', '17:30'];
/** Small enough that no symbol's daily bars are kept: the statements' side. */
const STATEMENTS_ONLY_CACHE = 1024;

type Side = { quotes: number[]; candles: number[]; answers: string[] };

async function askAll(store: Store): Promise<Side> {
  const sessions = sessionsBetween('2019-01-02', '2020-12-31');
  const random = seededRandom(20_201_127);
  const side: Side = { quotes: [], candles: [], answers: [] };
  for (let i = 0; i < REQUESTS; i++) {
    const session = sessions[Math.floor(random() * sessions.length)]!;
    const view = store.at(etWallToSeconds(session, TIMES[Math.floor(random() * TIMES.length)]!));
    const symbol = random() < 0.5 ? 'SPY' : 'AAPL';
    let started = performance.now();
    const quote = await view.stocks.quotes(symbol);
    side.quotes.push(performance.now() - started);
    started = performance.now();
    const candles = await view.stocks.candles('D', symbol, { countback: 5 });
    side.candles.push(performance.now() - started);
    side.answers.push(JSON.stringify([quote.columns, candles.columns]));
  }
  return side;
}

async function measured(dir: string, sessionCacheBytes?: number): Promise<Side> {
  const store = await openStore(dir, sessionCacheBytes === undefined ? {} : { sessionCacheBytes });
  try {
    return await askAll(store);
  } finally {
    store.close();
  }
}

const p50 = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export default defineBenchmark({
  name: 'stocks',
  description: `${REQUESTS} stock quotes and daily candles at random instants on data/sample, daily bars in memory vs statements`,
  async run(ctx) {
    const dir = `${ctx.repoRoot}data/sample`;
    ctx.log('statements first, then daily bars in memory, then both again');
    const statements = [await measured(dir, STATEMENTS_ONLY_CACHE)];
    const memory = [await measured(dir)];
    statements.push(await measured(dir, STATEMENTS_ONLY_CACHE));
    memory.push(await measured(dir));
    const differing = memory[0]!.answers.filter((answer, i) => answer !== statements[0]!.answers[i]).length;
    const best = (sides: Side[], pick: (side: Side) => number[]) =>
      Math.min(...sides.map((s) => p50(pick(s))));
    const load = loadAverage();
    return [
      ratioRow({
        name: 'stocks: quote at a random instant, p50',
        ours: best(memory, (s) => s.quotes),
        baseline: best(statements, (s) => s.quotes),
        unit: 'ms',
        target: '≤ 0.7× baseline time',
        note: `SPY or AAPL; intraday instants still read the session's minute bars; better of 2; load ${load}`,
      }),
      ratioRow({
        name: 'stocks: daily candles (countback 5) at a random instant, p50',
        ours: best(memory, (s) => s.candles),
        baseline: best(statements, (s) => s.candles),
        unit: 'ms',
        target: '≤ 0.2× baseline time',
        note: 'better of 2',
      }),
      ratioRow({
        name: 'stocks: answers differing, memory vs statements',
        ours: differing,
        unit: 'answers',
        target: '≤ 0 answers',
        note: `${REQUESTS} quotes and ${REQUESTS} candles compared`,
      }),
    ];
  },
});
