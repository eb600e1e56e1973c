/**
 * Hostile request targets for the fuzz tests (in process and over HTTP): plausible requests to every
 * endpoint with a few parameters, segments or shapes changed to hostile values, and the check that a
 * failure's body is in one of the service's shapes.
 */
import fc from 'fast-check';
import { ENDPOINTS } from '../../../src/query/endpoints/index.js';
import { paramNames } from '../../../src/query/params.js';
import { UNIVERSAL_KEYS } from '../../../src/service/format.js';

export const PROTOTYPE_NAMES = [
  'constructor',
  '__proto__',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'Constructor',
  '__PROTO__',
];

export const HUGE_NUMBERS = [
  '9223372036854775808',
  '9223372036854775807',
  '18446744073709551616',
  '1000000000',
  '999999999999',
  '1e308',
  '1e309',
  '-1e308',
  '1e-320',
  '4.9e-324',
  '368928',
  '10000000',
  '99999999',
  '100000000',
  '2147483648',
  '-2147483649',
  '253402300800',
  '-62135596801',
  '9'.repeat(60),
  `0.${'0'.repeat(40)}1`,
  '0x7fffffff',
  '1_000',
  'NaN',
  'Infinity',
  '-Infinity',
  '-0',
  '+1',
  '00000000000000000001',
];

export const HOSTILE = [
  ...PROTOTYPE_NAMES,
  ...HUGE_NUMBERS,
  '',
  ' ',
  '\t',
  '-',
  '--1',
  '0',
  '-1',
  '1',
  'null',
  'undefined',
  'true',
  'false',
  '[]',
  '{}',
  '\u0000',
  'a\u0000b',
  '\uFFFF',
  '\uD800',
  '\uDC00x',
  '😀',
  'Ünïcödé',
  'İ',
  'ß',
  'Ｄ',
  '١٢٣',
  '\u202Eevil',
  '../..',
  '/',
  '//',
  '?',
  '&',
  '=',
  '#',
  '%',
  '%zz',
  '%E0%A4%A',
  '%00',
  '%2F',
  '+',
  ',',
  ',,,',
  '<script>alert(1)</script>',
  "'; DROP TABLE contracts; --",
  '$1',
  '$symbol',
  '$' + '{x}',
  '\\',
  'x'.repeat(300),
  '1,'.repeat(200),
  '-5 constructor',
  '5 __proto__ ago',
  '-99999999999 days',
  '-1e30 years',
  '-9999999999999999 minutes',
  '-999999 years',
  '999999 years ago',
  '99999999 weeks ago',
  '2020-02-30',
  '2020-13-01',
  '0000-01-01',
  '0001-01-01',
  '1899-12-30',
  '9999-12-31',
  '10000-01-01',
  '2020-03-16T25:00',
  '2020-03-16T15:45:00+99:99',
  '2020-03-16 15:45:00.123456789Z',
  '1/1/1',
  '13/45/2020',
  '2/29/2100',
  '59999.9999',
  '60000',
  '0.5',
  'now',
  'today',
  'yesterday',
  'last session',
  'all',
  '>=',
  '>=-1',
  '1-',
  '5-1',
  '1,,2',
  '.',
  '1.2.3',
];

export const DATES = [
  '2020-03-16',
  '2020-03-13',
  '2020-03-20',
  '2020-03-21',
  '2019-12-31',
  '2020-01-02',
  '2018-06-01',
  '2024-01-01',
  '2020-03-16T10:00:00-04:00',
  '2020-03-19 15:59',
  '3/16/2020',
  '1584374400',
  '43906',
  '43906.5',
  '-5 days',
  '-2 weeks',
  '-1 month',
  '-1 year',
  '-90 minutes',
  '3 days ago',
  'yesterday',
  'today',
  'now',
  'last session',
];

/** Plausible values by parameter name, so that hostile values also land beside valid ones. */
const PLAUSIBLE: Readonly<Record<string, readonly string[]>> = {
  format: ['json', 'csv', 'CSV', 'xml'],
  headers: ['true', 'false', '0'],
  dateformat: ['unix', 'timestamp', 'spreadsheet', 'iso'],
  columns: ['s,bid,ask', 't,c', 'optionSymbol', 'Date', 'nope', ',,'],
  human: ['true', 'false'],
  limit: ['1', '2', '10', '0', '50000', '50001'],
  offset: ['0', '1', '5', '100000'],
  mode: ['live', 'delayed', 'eod', 'historical', 'cached', 'cache', 'stale', 'LIVE'],
  feed: ['live', 'delayed', 'cached'],
  maxage: ['30s', '5min', '1h', '2d', '2020-03-20T15:00:00-04:00', '1.5h'],
  maxAge: ['30s', '1h'],
  token: ['abc', ''],
  side: ['call', 'put', 'CALL', 'both'],
  range: ['itm', 'otm', 'all'],
  strike: ['240', '>=240', '<250', '230-250', '240,250', '240.5', '-240'],
  delta: ['.5', '-.25', '>=.3', '0.2-0.4'],
  strikeLimit: ['1', '2', '10', '0'],
  dte: ['0', '7', '30', '-1'],
  month: ['3', '12', '13'],
  year: ['2020', '1999'],
  weekly: ['true', 'false'],
  monthly: ['true', 'false'],
  quarterly: ['true', 'false'],
  nonstandard: ['true', 'false'],
  am: ['true', 'false'],
  pm: ['true', 'false'],
  expiration: ['2020-03-20', '2020-04-17', 'all', '2020-03-21'],
  countback: ['1', '5', '100', '0', '10000000'],
  symbols: ['SPY', 'SPY,AAPL', 'spy, aapl ,', 'ZZZZ', ','],
  snapshot: ['true', 'false'],
  extended: ['true', 'false'],
  adjustsplits: ['true', 'false'],
  adjustdividends: ['true', 'false'],
  country: ['US', 'us', 'GB', 'USA'],
  '52week': ['true', 'false'],
  candle: ['true', 'false'],
};
const DATE_KEYS = new Set(['date', 'from', 'to']);
/** Parameters and segments any text is valid for: a hostile one is a store query. */
const FREE_TEXT = new Set(['symbols', 'symbol', 'underlying', 'text', 'maxAge', 'token', 'columns']);

const SEGMENTS: Readonly<Record<string, readonly string[]>> = {
  underlying: ['SPY', 'AAPL', 'SPX', 'spy', 'SPXW', 'ZZZZ', 'BRK.B'],
  symbol: ['SPY', 'AAPL', 'aapl', 'ZZZZ'],
  optionSymbol: ['SPY200320P00240000', 'AAPL200417C00250000', 'SPXW200320C02500000', 'SPY200320X00240000'],
  resolution: ['1', '5', '15', 'H', '4H', 'D', '2D', 'W', 'M', 'Y', 'daily', '999999Y', '999999', '0', 'h'],
  text: ['SPY 3/20/20 240 put', 'AAPL%204/17/20%20%24250%20Call', 'SPX 3/20/20 2500 call', 'x'],
};

/** Every endpoint's path segments and parameters (`date` where it takes one). */
const endpoints = ENDPOINTS.map((endpoint) => ({
  segments: endpoint.pattern.split('/').filter((s) => s !== ''),
  keys: paramNames(endpoint),
}));
const EXTRA_PATHS = [
  '/headers/',
  '/status/',
  '/user/',
  '/',
  '/v1/',
  '/v1/options/',
  '/v2/options/chain/SPY/',
];

export const hostile = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 24 }) },
);

/** How a text is written into the target: escaped as a browser would, raw, or escaped twice. */
type Encoding = 'escaped' | 'raw' | 'double';
const encoding = fc.constantFrom<Encoding>('escaped', 'escaped', 'escaped', 'raw', 'double');

function encode(text: string, how: Encoding): string {
  const escaped = (s: string) => {
    try {
      return encodeURIComponent(s);
    } catch {
      return s; // a lone surrogate cannot be escaped: it goes raw
    }
  };
  if (how === 'raw') return text;
  return how === 'double' ? escaped(escaped(text)) : escaped(text);
}

/**
 * One change to a plausible request. Most are values the endpoint validates, so most requests end in a
 * 4xx before the store is read; those that pass are mostly repeats the response cache answers, which
 * keeps tens of thousands of requests within a few minutes.
 */
type Mutation =
  | { kind: 'param' | 'universal' | 'segment'; pick: number; value: Choice; how: Encoding }
  | { kind: 'key'; key: string; value: string; how: Encoding }
  | { kind: 'shape'; opener: string; separator: string; caseFold: boolean; slashes: string }
  | { kind: 'long'; bytes: number };

/** A value for a named parameter or segment: `[choice, index, hostile]`, see `chosen`. */
type Choice = readonly [number, number, string];
const value: fc.Arbitrary<Choice> = fc.tuple(fc.integer({ min: 0, max: 9 }), fc.nat(), hostile);

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 40,
    arbitrary: fc
      .tuple(fc.nat(), value, encoding)
      .map(([pick, v, how]) => ({ kind: 'param' as const, pick, value: v, how })),
  },
  {
    weight: 25,
    arbitrary: fc
      .tuple(fc.nat(), value, encoding)
      .map(([pick, v, how]) => ({ kind: 'universal' as const, pick, value: v, how })),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('key' as const), key: hostile, value: hostile, how: encoding }),
  },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.nat(), value, encoding)
      .map(([pick, v, how]) => ({ kind: 'segment' as const, pick, value: v, how })),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('shape' as const),
      opener: fc.constantFrom('?', '', '??', '&', '#'),
      separator: fc.constantFrom('&', '&&', ';', '&amp;'),
      caseFold: fc.boolean(),
      slashes: fc.constantFrom('/', '', '//', '/./'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('long' as const), bytes: fc.integer({ min: 3990, max: 4200 }) }),
  },
);

/**
 * A plausible value from `pool` (`choice` < 1 of 10), else the hostile one. Free text (symbols) that
 * reaches the store is mostly plausible, so that each hostile one is not a new store query.
 */
function chosen([choice, index, bad]: Choice, pool: readonly string[] | undefined, freeText = false): string {
  return pool !== undefined && choice < (freeText ? 9 : 1) ? pool[index % pool.length]! : bad;
}

export const requestTarget = fc
  .tuple(
    fc.nat(),
    fc.array(mutation, { minLength: 3, maxLength: 5 }),
    fc.integer({ min: 0, max: 39 }),
    fc.constantFrom(...EXTRA_PATHS),
  )
  .map(([which, mutations, extra, extraPath]) => {
    const endpoint = endpoints[which % endpoints.length]!;
    const segments = endpoint.segments.map((segment) =>
      segment.startsWith(':') || segment.startsWith('*')
        ? (SEGMENTS[segment.slice(1)] ?? ['x'])[0]!
        : segment,
    );
    const variables = endpoint.segments.flatMap((segment, i) =>
      segment.startsWith(':') || segment.startsWith('*') ? [i] : [],
    );
    const pairs: string[] = [];
    let shape: Extract<Mutation, { kind: 'shape' }> | undefined;
    let pad = '';
    for (const m of mutations) {
      if (m.kind === 'param' || m.kind === 'universal') {
        const keys = m.kind === 'param' && endpoint.keys.length > 0 ? endpoint.keys : UNIVERSAL_KEYS;
        const key = keys[m.pick % keys.length]!;
        const pool = DATE_KEYS.has(key) ? DATES : PLAUSIBLE[key];
        const text = chosen(m.value, pool, FREE_TEXT.has(key));
        pairs.push(`${key}=${encode(text, pool?.includes(text) ? 'escaped' : m.how)}`);
      } else if (m.kind === 'key') {
        pairs.push(`${encode(m.key, m.how === 'double' ? 'escaped' : m.how)}=${encode(m.value, m.how)}`);
      } else if (m.kind === 'segment' && variables.length > 0) {
        const at = variables[m.pick % variables.length]!;
        const name = endpoint.segments[at]!.slice(1);
        const pool = SEGMENTS[name];
        const text = chosen(m.value, pool, FREE_TEXT.has(name));
        segments[at] = pool?.includes(text) ? text : encode(text, m.how);
      } else if (m.kind === 'shape') {
        shape = m;
      } else if (m.kind === 'long') {
        pad = 'p'.repeat(m.bytes);
      }
    }
    if (pad !== '') pairs.push(`pad=${pad}`);
    const path =
      extra === 0
        ? extraPath
        : `/${segments.map((s, i) => (shape?.caseFold && !variables.includes(i) ? s.toUpperCase() : s)).join('/')}${shape?.slashes ?? '/'}`;
    if (pairs.length === 0) return path;
    return `${path}${shape?.opener ?? '?'}${pairs.join(shape?.separator ?? '&')}`;
  });

/** Texts of JavaScript or DuckDB internals that must never reach a body. */
const INTERNALS =
  /Invalid time value|Cannot read prop|is not a function|is not defined|\[object |Maximum call stack|Conversion Error|Binder Error|Parser Error|SQL|NaN-NaN|TypeError|RangeError|ZodError/;

/** The cells of one CSV line (quoted cells may hold commas and doubled quotes). */
function csvCells(line: string): string[] {
  const cells: string[] = [];
  for (const match of line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)) {
    const cell = match[1]!;
    cells.push(cell.startsWith('"') ? cell.slice(1, -1).replaceAll('""', '"') : cell);
    if (match[2] === '') break;
  }
  return cells;
}

/** Whether a failure body is in one of the service's shapes; returns what is wrong, or undefined. */
export function shapeProblem(response: {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: string;
}): string | undefined {
  const type = response.headers['Content-Type'];
  if (type === 'text/html') {
    return response.status === 400 && /Request Line is too large \(\d+ > 4094\)/.test(response.body)
      ? undefined
      : 'an HTML body that is not the request-line 400';
  }
  let body: Record<string, unknown>;
  if (type === 'text/csv') {
    const at = response.body.indexOf('\r\n');
    const head = response.body.slice(0, at);
    const row = response.body.slice(at + 2); // a quoted cell may hold a line break of its own
    const names = csvCells(head);
    if (names[0] !== 's' || (names.length > 1 && names[1] !== 'errmsg')) return `a CSV error headed ${head}`;
    const cells = csvCells(row);
    body = { s: cells[0], errmsg: cells[1] };
  } else {
    try {
      body = JSON.parse(response.body) as Record<string, unknown>;
    } catch {
      return 'a body that is not JSON';
    }
  }
  if (body['s'] === 'no_data') {
    return body['errmsg'] === undefined || typeof body['errmsg'] === 'string'
      ? undefined
      : 'a no_data errmsg that is not text';
  }
  if (body['s'] !== 'error') return `s is ${String(body['s'])}`;
  const errmsg = body['errmsg'];
  if (typeof errmsg !== 'string' || errmsg === '') return 'no errmsg';
  if (INTERNALS.test(errmsg)) return `internals in errmsg: ${errmsg}`;
  return undefined;
}
