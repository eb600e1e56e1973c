/**
 * One memory series of the chain benchmark, in a process of its own run the way users run the package:
 * plain Node on the built `dist/`, without the TypeScript loader the benchmarks otherwise run under (which
 * alone holds some 30 MB). The parent sends the job; this answers with the RSS once the store (or the
 * raw DuckDB) is open and the peak while asking.
 *
 * Job (`memory-job.ts` `MemoryJob`): `{ kind: 'store', dir, requests: [now, path, allowNoData][] }`,
 * `{ kind: 'at-loop', dir, instants, symbol, params }` or `{ kind: 'raw', statements }`.
 */
import { openStore } from '../dist/index.js';
import { SqlSession } from '../dist/store/sql.js';

const rssMb = () => process.memoryUsage().rss / 2 ** 20;

async function measure(job) {
  const opened = job.kind === 'raw' ? await SqlSession.open() : await openStore(job.dir);
  try {
    const openMb = rssMb();
    let peakMb = openMb;
    const timer = setInterval(() => {
      peakMb = Math.max(peakMb, rssMb());
    }, 10);
    try {
      if (job.kind === 'raw') {
        for (const statement of job.statements) await opened.value(statement);
      } else if (job.kind === 'at-loop') {
        for (const T of job.instants) await opened.at(T).options.chain(job.symbol, job.params);
      } else {
        for (const [now, path, allowNoData] of job.requests) {
          const response = await opened.request(path, { now });
          const noData = response.status === 404 && response.body.startsWith('{"s":"no_data"');
          if (response.status !== 200 && !(allowNoData && noData)) {
            throw new Error(`${path} answered ${response.status}: ${response.body}`);
          }
        }
      }
    } finally {
      clearInterval(timer);
    }
    return { peakMb: Math.max(peakMb, rssMb()), openMb };
  } finally {
    opened.close();
  }
}

process.once('message', async (job) => {
  let result;
  try {
    result = await measure(job);
  } catch (error) {
    result = { error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  process.send(result, () => process.disconnect());
});
