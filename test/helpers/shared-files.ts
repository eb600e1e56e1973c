/**
 * The real market data and documented example bodies the tests and benchmarks read, where each comes
 * from, and where to find it on this machine. No test framework here: `scripts/fixtures.ts` and `bench/`
 * use it too; tests go through `shared-data.ts`.
 *
 * A file is named by its path in the shared folder's layout (`data/options/…`, `spec/examples/…`) and
 * looked for, in order:
 * 1. `test/fixtures/shared/<path>`: the files whose licence lets the project redistribute them
 *    (attributed in NOTICE), committed;
 * 2. `$PITCHAIN_SHARED/<path>`: a folder with that layout named by the environment, or, when the variable
 *    is unset, the `shared` folder beside the checkout (`../shared`) if there is one;
 * 3. `test/fixtures/downloaded/<path>`: what `npm run fixtures` fetched from the pinned upstream (not
 *    committed).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where a file comes from upstream: the file itself, one entry of a zip, or a Markdown page's n-th ```json block. */
export type Origin =
  | { readonly url: string }
  | { readonly url: string; readonly zipEntry: string }
  | { readonly url: string; readonly fencedJson: number };

export type SharedFile = {
  /** sha256 of the bytes the tests read. */
  readonly sha256: string;
  /** Committed under `test/fixtures/shared/` (its licence allows it; see NOTICE). */
  readonly committed?: true;
  /** Where `npm run fixtures` gets a file that is not committed. */
  readonly origin?: Origin;
};

const OPTOPSY = 'https://raw.githubusercontent.com/michaelchu/optopsy';
const LEAN = 'https://raw.githubusercontent.com/QuantConnect/Lean/24863901deffa9ec7985e21ef8fbdb0258efb9e4';
const DOCS =
  'https://raw.githubusercontent.com/MarketDataApp/documentation/9ebbcaf1fd4da08cd2e2758a359d6e9095121444';
/** The documentation the year before its strikes page was removed (the endpoint still answers). */
const DOCS_WITH_STRIKES =
  'https://raw.githubusercontent.com/MarketDataApp/documentation/36deedf5098daf0b09a470e4f299c020423cfe87';

const leanMinute = (day: string, sha256: string): [string, SharedFile] => [
  `data/stocks/lean_minute/${day}_spy_minute_trade.csv`,
  {
    sha256,
    origin: {
      url: `${LEAN}/Data/equity/usa/minute/spy/${day}_trade.zip`,
      zipEntry: `${day}_spy_minute_trade.csv`,
    },
  },
];

const docExample = (name: string, url: string, sha256: string): [string, SharedFile] => [
  `spec/examples/${name}.json`,
  { sha256, origin: { url, fencedJson: 0 } },
];

/** Every shared file a test or benchmark reads. */
export const SHARED_FILES: Readonly<Record<string, SharedFile>> = Object.fromEntries([
  [
    'data/options/hod_SPXW_2018-01-02_to_2018-02-28.csv',
    {
      sha256: 'c7bb85e41cb549f0687c8373b198226146c96049bba838d205e76d0a08ff1cbf',
      origin: { url: `${OPTOPSY}/9102f8b2f55473d57ffb954e86f05de5e0351b6c/strategies/data/SPX_2018.csv` },
    },
  ],
  [
    'data/options/hod_L3_A_2016-01-05.csv',
    { sha256: '319e7e994cba02d84afe15c7483b6ba793c9c8f76a4b4d6a33e552e2c1c7cfcd', committed: true },
  ],
  [
    'data/options/cboe_datashop_VIX_2016-06-01.csv',
    { sha256: 'a77aa936f69affd62a035359fab2cddc4e6b81c5330714e4d5bc75422858051c', committed: true },
  ],
  [
    'data/stocks/lean_daily_spy_raw_19980102_20210331.csv',
    { sha256: '1c625ddc2f05306ac30950308135fc45d5d0ad06d1d5171fc53bf09879c67455', committed: true },
  ],
  [
    'data/stocks/lean_daily_aapl_raw_19980102_20210331.csv',
    { sha256: '8db3f9b99bbfce7586b8869c579ff705fddedbe2b0fce56b54cf30f2c8aaf04f', committed: true },
  ],
  [
    'data/stocks/lean_factor_file_aapl.csv',
    {
      sha256: '86f7f2508a11259dfbb53b2f81fc8e711c8a4b97a9ee599b661079a9566801c9',
      origin: { url: `${LEAN}/Data/equity/usa/factor_files/aapl.csv` },
    },
  ],
  [
    'data/stocks/lean_factor_file_spy.csv',
    {
      sha256: 'ad53e292de2e7076ff36721e1dcffd1db0d04fe6813b59aeece8620fb0d4cec1',
      origin: { url: `${LEAN}/Data/equity/usa/factor_files/spy.csv` },
    },
  ],
  leanMinute('20131004', 'fcd68a487705c2a9f6f3415ee7f25309315b0b5980e7760fcfc56e0feb7f1e07'),
  leanMinute('20131007', '8062105ca4ffee483143ccccbcbb17b0ff8be0b90f0ab143c17cec7433e5c7a2'),
  leanMinute('20131008', 'fb6564bf94298bdefc0b15e88d4a229ecc4aa6029bd11ee22ca568f7040234af'),
  leanMinute('20131009', '35dfd5d35870efe30fd6834cde75006a1e9538538fed09aca77bce0dec7faa9e'),
  leanMinute('20131010', '0bb1a7ea0af5bb5f52c29d03473ef471204019111471a318976f559ae8304aca'),
  leanMinute('20131011', 'c963c32e9bb08ab775c5e187cdaf02513b5a7d746bdb86afcc4e0a57737d11f3'),
  [
    'data/calendars/nyse_calendar_2000_2030.csv',
    { sha256: 'd4773cab02d780387e2000137d14107a9493ca84bed49b7b75485a193cfaea4b', committed: true },
  ],
  [
    'data/calendars/exchange_calendars_xnys_answers_1990-01-02_to_2023-01-13.csv',
    { sha256: '5f91ec537dd8672130d41f2796a194f5b2c1733dfe79191af8593d80600fb3cc', committed: true },
  ],
  docExample(
    'markets_status',
    `${DOCS}/api/markets/status.mdx`,
    '91bad899116021819902a7bf086240d03e86409089148b12feb1d7cd54d51c5d',
  ),
  docExample(
    'options_chain',
    `${DOCS}/api/options/chain.mdx`,
    'bdf086dbf0a034e543bea2ac6a649ffa442ae25f6159caeb69156163abeca2bf',
  ),
  docExample(
    'options_expirations',
    `${DOCS}/api/options/expirations.mdx`,
    '9ee541d3f1f4338805b3d8e5a45bae1e0cbb91c27a2324ae118dc3e36507e4c5',
  ),
  docExample(
    'options_lookup',
    `${DOCS}/api/options/lookup.mdx`,
    '59d78a8e7fa06ef84005a58eb6e92cdb50fa22cfc57ca0e6300cf9481ecd4020',
  ),
  docExample(
    'options_quotes',
    `${DOCS}/api/options/quotes.mdx`,
    '179fc98659af7ce755754306d588d9d6b720f338a1c73b034aff2f8e20d7e41d',
  ),
  docExample(
    'options_strikes_2023_removed_page',
    `${DOCS_WITH_STRIKES}/api/options/strikes.mdx`,
    '5c8b2c85fd794a6aef165f9ca4363fe82d0d4a2cedd2ff1f96d9c7be2ec2c0c7',
  ),
  docExample(
    'stocks_bulkcandles',
    `${DOCS}/api/stocks/bulkcandles.mdx`,
    'c1bddaa2e5e42f314b9e8eae7970f3faf1fe461cce700cfac3d7f92d264d3e60',
  ),
  docExample(
    'stocks_candles',
    `${DOCS}/api/stocks/candles.mdx`,
    '87d9297cce7ac70b22ce90c0ee59be9fc1d529ac5f58e0bb48a59c2fe5a452b2',
  ),
  docExample(
    'stocks_prices',
    `${DOCS}/api/stocks/prices.mdx`,
    'c145e8973f1a5a250b7d0a1d2c7825e8ca9eacd4594e86bfec52cb841b9cc820',
  ),
  docExample(
    'stocks_quotes',
    `${DOCS}/api/stocks/quotes.mdx`,
    '18313ba569732c77a67dd1ea846b7ddb4178bc6e618a9f4ba2aa565a7ed48340',
  ),
] satisfies [string, SharedFile][]);

/** The shared files committed with the tests. */
export const COMMITTED_DIR = join(REPO_ROOT, 'test/fixtures/shared');
/** Where `npm run fixtures` puts what it fetched. */
export const DOWNLOADED_DIR = join(REPO_ROOT, 'test/fixtures/downloaded');
/** The environment variable naming a folder with the shared layout (`data/`, `spec/examples/`). */
export const SHARED_ENV = 'PITCHAIN_SHARED';

/** The folder named by PITCHAIN_SHARED, else `../shared` beside the checkout when it exists. */
export function sharedFolder(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const named = env[SHARED_ENV];
  if (named !== undefined && named !== '') return resolve(REPO_ROOT, named);
  const beside = resolve(REPO_ROOT, '../shared');
  return existsSync(beside) ? beside : undefined;
}

/** The places a shared file is looked for, in order. */
export function candidatePaths(file: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const folder = sharedFolder(env);
  return [
    join(COMMITTED_DIR, file),
    ...(folder === undefined ? [] : [join(folder, file)]),
    join(DOWNLOADED_DIR, file),
  ];
}

/** The path of a shared file on this machine, or undefined when it is in none of its places. */
export function findShared(file: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!(file in SHARED_FILES))
    throw new Error(`${file} is not a known shared file (see test/helpers/shared-files.ts)`);
  return candidatePaths(file, env).find((path) => existsSync(path));
}

/** The path of a shared file: where it was found, else its first candidate (read only by gated code). */
export function sharedPath(file: string): string {
  return findShared(file) ?? (candidatePaths(file)[0] as string);
}

/** What to do about a missing shared file. */
export const HOW_TO_GET =
  `run \`npm run fixtures\` (fetches them from their pinned upstream and checks their hashes), ` +
  `or set ${SHARED_ENV} to a folder holding them (data/…, spec/examples/…)`;
