/**
 * Run by Deno (see test/deno.test.ts): serves the embedded sample store with `Deno.serve(app.fetch)` on a
 * free loopback port, asks it a chain over HTTP, checks the answer is byte for byte `store.request`'s,
 * stops the server and prints `ok`. Any failed check throws, which makes Deno exit non-zero.
 */
import { openStore } from 'pitchain';
import { createApp } from 'pitchain/http';

declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen?: (address: { port: number }) => void },
    handler: (request: Request) => Response | Promise<Response>,
  ): { finished: Promise<void>; shutdown(): Promise<void> };
};

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`serve check failed: ${what}`);
}

const store = await openStore('data/sample', { now: '2020-03-16T15:45:00-04:00', threads: 1 });
try {
  const app = createApp(store);
  let port = 0;
  let stop: () => Promise<void> = async () => {};
  const listening = new Promise<void>((resolve) => {
    const server = Deno.serve(
      {
        port: 0,
        hostname: '127.0.0.1',
        onListen: (address) => {
          port = address.port;
          resolve();
        },
      },
      app.fetch,
    );
    stop = () => server.shutdown();
  });
  await listening;
  const target = '/v1/options/chain/SPY/?dte=2&side=put&strikeLimit=1&columns=optionSymbol,bid';
  const response = await fetch(`http://127.0.0.1:${port}${target}`);
  // Asked second, at the same cutoff, the same answer comes from the response cache (203).
  const expected = await store.request(target);
  check(
    response.status === 200 && expected.status === 203,
    `statuses ${response.status}, ${expected.status}`,
  );
  check((await response.text()) === expected.body, 'the body is store.request\u2019s');
  check(
    response.headers.get('x-api-ratelimit-consumed') === expected.headers['X-Api-Ratelimit-Consumed'],
    'credits',
  );
  await stop();
} finally {
  store.close();
}
console.log('ok');
