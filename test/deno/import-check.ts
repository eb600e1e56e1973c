/**
 * Run by Deno (`deno run --allow-all test/deno/import-check.ts`, see test/deno.test.ts): imports the built
 * package by its own name, as a Deno user would, and the DuckDB native addon the store runs on, opens the
 * embedded sample store and asks it a chain, then prints `ok`. Any failed check throws, which makes Deno exit non-zero.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { FIXED_MESSAGES, MarketDataError, openStore } from 'pitchain';

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`import check failed: ${what}`);
}

const error = new MarketDataError(400, FIXED_MESSAGES.invalidDate);
check(error instanceof Error && error.status === 400, 'MarketDataError carries its status');
check(
  JSON.stringify(error.body) === JSON.stringify({ s: 'error', errmsg: FIXED_MESSAGES.invalidDate }),
  'MarketDataError carries the service body',
);

const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
try {
  const reader = await connection.runAndReadAll('SELECT 42 AS answer');
  const rows = reader.getRowObjectsJS();
  check(
    JSON.stringify(rows) === JSON.stringify([{ answer: 42 }]),
    `DuckDB SELECT 42 gave ${JSON.stringify(rows)}`,
  );
} finally {
  connection.closeSync();
  instance.closeSync();
}

// The library face itself: the embedded sample store answers a dated chain under Deno too.
const store = await openStore('data/sample', { now: '2020-03-16T15:45:00-04:00', threads: 1 });
try {
  const response = await store.request(
    '/v1/options/chain/SPY/?date=2020-03-13&dte=30&side=put&strikeLimit=1&columns=optionSymbol',
  );
  check(response.status === 200, `sample chain answered ${response.status} ${response.body}`);
  check(/^\{"optionSymbol":\["SPY\d{6}P\d{8}"/.test(response.body), `sample chain body ${response.body}`);
} finally {
  store.close();
}

console.log('ok');
