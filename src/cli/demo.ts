import type { Command } from 'commander';
import { openStore } from '../library/store.js';
import { formatInstant } from '../market-time/index.js';
import { renderTable } from './format.js';
import { SAMPLE_STORE } from './sample.js';

const NOW = '2020-03-16T15:45:00-04:00';
const CHAIN = '/v1/options/chain/SPY/?dte=30&side=put&strikeLimit=3';

/** `pitchain demo`: the newcomer's first run — what the sample store answers, as of a past instant. */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('Show what pitchain answers from a store at a past instant (the `npm start` job).')
    .option('--store <dir>', 'store directory (default: the embedded sample)')
    .action(async (options: { store?: string }) => {
      const store = await openStore(options.store ?? SAMPLE_STORE, { now: NOW, threads: 2 });
      try {
        const summary = await store.summary();
        const out: string[] = [];
        out.push('pitchain — option chains answered as the market-data API would, at any past instant');
        out.push('');
        out.push(
          `store: ${options.store ?? 'embedded sample (synthetic option quotes on real SPY/AAPL daily bars)'}`,
        );
        out.push(`data version: ${summary.dataVersion}`);
        out.push(
          `underlyings: ${summary.underlyings.join(', ')}; sessions ${summary.sessions.first} .. ${summary.sessions.last}; ${summary.optionRows.toLocaleString('en-US')} option rows`,
        );
        out.push('');
        out.push(`1) The clock is ${NOW}, minutes before the close of the day the market fell 12%.`);
        out.push(`   GET ${CHAIN}   (live mode: each field as last known at that instant)`);
        out.push(await chainTable(store, CHAIN));
        out.push('');
        const dated = `${CHAIN}&date=2020-03-13`;
        out.push('2) The same question for the close of Friday 2020-03-13 (a historical request):');
        out.push(`   GET ${dated}   (Greeks null, open interest settled 03-12, prices as of 16:00)`);
        out.push(await chainTable(store, dated));
        out.push('');
        const used = store.api.ledger.log.map((e) => `${e.credits}`).join(' + ');
        out.push(`credits billed, as the service would: ${used} = ${store.api.ledger.totalCredits}`);
        out.push('');
        out.push('Try: npx pitchain request --store data/sample --now 2020-03-16T15:45:00-04:00 -i \\');
        out.push("       '/v1/options/chain/SPY/?dte=30&side=put&strikeLimit=3&dateformat=timestamp'");
        out.push('     npx pitchain --help');
        process.stdout.write(`${out.join('\n')}\n`);
      } finally {
        store.close();
      }
    });
}

async function chainTable(store: Awaited<ReturnType<typeof openStore>>, target: string): Promise<string> {
  const response = await store.request(target);
  const body = JSON.parse(response.body) as Record<string, unknown[]>;
  if (response.status >= 300) return `   ${response.status} ${response.body}`;
  const keys = ['optionSymbol', 'updated', 'bid', 'ask', 'mid', 'openInterest', 'volume', 'iv', 'delta'];
  const rows = (body['optionSymbol'] ?? []).map((_, i) =>
    keys.map((k) => {
      const value = body[k]?.[i];
      if (k === 'updated' && typeof value === 'number')
        return String(formatInstant(value, 'timestamp')).slice(0, 16);
      return value === null ? '—' : value;
    }),
  );
  return renderTable(keys, rows)
    .split('\n')
    .map((line) => `   ${line}`)
    .join('\n');
}
