/**
 * Smoke benchmark: an aggregate over ten million integers in DuckDB (through the store's `SqlSession`)
 * against the same sum as a plain JavaScript loop. It keeps the harness honest end to end and tells how
 * much a round trip to DuckDB costs on this machine.
 */
import { SqlSession } from '../src/store/sql.js';
import { defineBenchmark, perSecond, ratioRow, rssPeakMb, timeIt } from './lib.js';

const N = 10_000_000;
const EXPECTED = (N * (N - 1)) / 2;

function jsSum(): number {
  let sum = 0;
  for (let i = 0; i < N; i++) {
    sum += i;
  }
  return sum;
}

export default defineBenchmark({
  name: 'smoke',
  description: `sum of range(${N.toLocaleString('en-US')}) in DuckDB vs a JS loop`,
  async run(ctx) {
    const openStarted = performance.now();
    const sql = await SqlSession.open();
    try {
      await sql.value('SELECT 42');
      const openMs = performance.now() - openStarted;

      const duckdbSum = () => sql.value<number>('SELECT sum(i) AS s FROM range($1) t(i)', [N]);
      const got = await duckdbSum();
      if (got !== EXPECTED || jsSum() !== EXPECTED) {
        throw new Error(`wrong sum: DuckDB ${got}, JS ${jsSum()}, expected ${EXPECTED}`);
      }
      ctx.log('timing DuckDB');
      const { value: ours, peakMb } = await rssPeakMb(() => timeIt(duckdbSum, { warmup: 2, iterations: 10 }));
      ctx.log('timing the JS loop');
      const baseline = await timeIt(jsSum, { warmup: 2, iterations: 10 });

      return [
        ratioRow({
          name: 'smoke: sum(range 1e7) p50',
          ours: ours.p50Ms,
          baseline: baseline.p50Ms,
          unit: 'ms',
          target: '≤ 5× baseline time',
          note: `p90 ${ours.p90Ms.toFixed(1)} vs ${baseline.p90Ms.toFixed(1)} ms`,
        }),
        ratioRow({
          name: 'smoke: sum(range 1e7) throughput',
          ours: perSecond(N, ours.meanMs),
          baseline: perSecond(N, baseline.meanMs),
          unit: 'rows/s',
          target: '≥ 0.2× baseline throughput',
        }),
        ratioRow({ name: 'smoke: open DuckDB + first query', ours: openMs, unit: 'ms', target: '≤ 1000 ms' }),
        ratioRow({ name: 'smoke: peak RSS while querying', ours: peakMb, unit: 'MB', target: '≤ 500 MB' }),
      ];
    } finally {
      sql.close();
    }
  },
});
