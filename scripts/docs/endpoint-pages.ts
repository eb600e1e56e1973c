/**
 * The endpoint pages of `docs/endpoints/`, generated from the code and the sample store so that they cannot
 * drift: the parameters and what they accept come from each endpoint's zod schema (`schema(clock)` and the
 * shapes in `paramShapes`), the fields and their types from the answers the endpoints really give, the
 * known-at rule of each option field from `src/pit/known-at.ts`, the credits from `src/billing/credits.ts`,
 * the entitlements from `src/service/modes.ts`, and every example response from running its request
 * against `data/sample` at a pinned clock. The words come from `endpoint-texts.ts`; a text that names a
 * parameter or field the code does not have, or misses one it has, is refused with every such problem.
 */
import { join } from 'node:path';
import type { z } from 'zod';
import { type Account, LOCAL_ACCOUNT } from '../../src/billing/accounts.js';
import { creditsFor } from '../../src/billing/credits.js';
import { type Ask, marketFunctions, optionFunctions, stockFunctions } from '../../src/library/face.js';
import { openStore, type Store, storeInternals } from '../../src/library/store.js';
import { fixedClock, formatInstant, isIsoDate } from '../../src/market-time/index.js';
import { type KnownAtFamily, OPTION_FIELD_KNOWN_AT } from '../../src/pit/known-at.js';
import { ENDPOINTS } from '../../src/query/endpoints/index.js';
import { isOptionAnswer } from '../../src/query/endpoints/option-answer.js';
import { type ParamShape, paramNames, paramShapes } from '../../src/query/params.js';
import type { Answer, Billing, Endpoint, FieldKind } from '../../src/query/types.js';
import { DEFAULT_LIMIT, MAX_LIMIT, UNIVERSAL_KEYS } from '../../src/service/format.js';
import { entitlementCap } from '../../src/service/modes.js';
import { Router } from '../../src/service/router.js';
import { Api, type ApiResponse, readInstant, statusText } from '../../src/service/service.js';
import { StoreCache } from '../../src/store/cache.js';
import {
  ENDPOINT_TEXTS,
  type ExampleText,
  type FieldText,
  type PageText,
  UNIVERSAL_TEXTS,
} from './endpoint-texts.js';
import { code, fence, readableJson, table } from './markdown.js';

/** The clock of every example: 15:45 ET on the Monday the market fell 12%, as in the README. */
export const DOCS_NOW = '2020-03-16T15:45:00-04:00';

/** The store the examples are answered from, relative to the repository. */
export const DOCS_STORE = 'data/sample';

/** Where the pages go, relative to the repository. */
export const ENDPOINT_DOCS_DIR = 'docs/endpoints';

/** The utility paths the service answers itself, besides the endpoints. */
const UTILITIES = ['/status/', '/headers/', '/user/'] as const;

/** The texts disagree with the code: every disagreement, one per line. */
export class DocsDriftError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`the endpoint texts disagree with the code:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Each known-at family of an option field, in words (`src/pit/known-at.ts` names the families). */
const FAMILY_TEXT: Readonly<Record<KnownAtFamily, string>> = {
  listing: '09:30 ET of the contract’s first traded date',
  quote: 'the snapshot’s quote time q (`updated`)',
  volume: 'the volume’s own stamp v (a 15:45 Cboe snapshot carries the full session’s volume: v = the close)',
  openInterest: 'its publication, 09:30 ET by default of the session after the one it was settled from',
};

/** Each credit rule of `src/billing/credits.ts`, in words; its examples are computed by `creditsFor`. */
const BILLING_TEXT: Readonly<Record<Billing, string>> = {
  'per-row': '1 per row returned',
  'per-1000-rows': '1 per 1,000 rows returned, rounded up',
  'per-symbol-with-quote': '1 per row while the kept columns include `bid`, `ask`, `mid` or `last`; else 1',
  'per-response': '1 per response',
};

const KIND_TEXT: Readonly<Record<FieldKind, string>> = {
  string: 'string',
  number: 'number',
  integer: 'integer',
  boolean: 'boolean',
  instant: 'instant',
  date: 'date',
};

/** One request run against the store: the response as sent, and the endpoint's answer behind it. */
type Run = {
  readonly example: ExampleText;
  readonly response: ApiResponse;
  readonly answer: Answer | undefined;
};

/** A field as the answers give it. */
type SeenField = { readonly key: string; readonly kind: string; readonly scalar: boolean };

/** Generates every page: path relative to the repository → text. */
export async function endpointPages(
  repoRoot: string,
  texts: Readonly<Record<string, PageText>> = ENDPOINT_TEXTS,
): Promise<Map<string, string>> {
  const store = await openStore(join(repoRoot, DOCS_STORE), { now: DOCS_NOW, threads: 2 });
  try {
    return await generate(store, texts);
  } finally {
    store.close();
  }
}

async function generate(
  store: Store,
  texts: Readonly<Record<string, PageText>>,
): Promise<Map<string, string>> {
  const nowSeconds = readInstant(DOCS_NOW)!;
  const problems: string[] = [];
  const services = [...new Set(ENDPOINTS.map((endpoint) => endpoint.service))];
  const pageKeys = [...services, ...UTILITIES];
  for (const key of pageKeys) if (texts[key] === undefined) problems.push(`${key}: no page text`);
  for (const key of Object.keys(texts)) {
    if (!pageKeys.includes(key)) problems.push(`${key}: a page text for a path the service does not answer`);
  }
  if (problems.length > 0) throw new DocsDriftError(problems);

  const router = new Router(ENDPOINTS);
  const calls = libraryCalls();
  const pages = new Map<string, string>();
  const index: string[][] = [];
  for (const key of pageKeys) {
    const text = texts[key]!;
    const endpoints = ENDPOINTS.filter((endpoint) => endpoint.service === key);
    const runs: Run[] = [];
    for (const example of text.examples) {
      const run = await runExample(store, router, example, nowSeconds);
      if (run.response.status !== 200) {
        problems.push(`${key}: ${example.target} answers ${run.response.status} ${run.response.body}`);
      }
      runs.push(run);
    }
    const file = `${ENDPOINT_DOCS_DIR}/${pageName(key)}`;
    const page = renderPage(
      key,
      text,
      endpoints,
      runs,
      calls.get(key),
      nowSeconds,
      store.dataVersion,
      problems,
    );
    pages.set(file, page);
    index.push([
      endpoints.length === 0 ? code(key) : endpoints.map((e) => code(displayPattern(e.pattern))).join('<br>'),
      `[${text.title}](${pageName(key)})`,
      text.summary,
      calls.has(key) ? code(`${calls.get(key)}(…)`) : '—',
    ]);
  }
  const csv = await runExample(
    store,
    router,
    {
      target:
        '/v1/options/chain/SPY/?expiration=2020-03-20&side=put&strikeLimit=1&columns=optionSymbol,updated,bid,ask,openInterest&format=csv&dateformat=timestamp',
    },
    nowSeconds,
  );
  if (csv.response.status !== 200) problems.push(`index: the CSV example answers ${csv.response.status}`);
  pages.set(`${ENDPOINT_DOCS_DIR}/README.md`, renderIndex(index, csv, problems));
  if (problems.length > 0) throw new DocsDriftError(problems);
  return pages;
}

/** Runs one example in a service of its own (fresh ledger and response cache), as a new process would. */
async function runExample(
  store: Store,
  router: Router,
  example: ExampleText,
  nowSeconds: number,
): Promise<Run> {
  const service = () =>
    new Api({
      sql: storeInternals(store).reader.sql,
      cache: new StoreCache(() => store.dataVersion),
      endpoints: ENDPOINTS,
      clock: fixedClock(nowSeconds),
    });
  const response = await service().request(
    example.target,
    example.headers ? { headers: example.headers } : {},
  );
  const [path = '', rawQuery = ''] = example.target.split('?');
  const match = router.match(path);
  let answer: Answer | undefined;
  if (match !== undefined && response.status === 200) {
    const query: Record<string, string> = Object.fromEntries(new URLSearchParams(rawQuery));
    const evaluation = await service().evaluate(
      match.endpoint,
      match.params,
      query,
      LOCAL_ACCOUNT,
      nowSeconds,
    );
    if (evaluation.result?.kind === 'ok') answer = evaluation.result;
  }
  return { example, response, answer };
}

function renderPage(
  key: string,
  text: PageText,
  endpoints: readonly Endpoint[],
  runs: readonly Run[],
  call: string | undefined,
  nowSeconds: number,
  dataVersion: string,
  problems: string[],
): string {
  const out: string[] = [GENERATED_NOTE, ''];
  const paths = endpoints.length === 0 ? [key] : endpoints.map((e) => displayPattern(e.pattern));
  out.push(`# ${text.title}: ${paths.map((p) => code(`GET ${p}`)).join(', ')}`, '', text.intro, '');
  const example = text.examples.find((e) => e.title !== undefined)?.target ?? key;
  out.push(
    call === undefined
      ? `From code: ${code(`store.request('${example}')`)} answers with the status, headers and body the service would send.`
      : `From code: ${code(`${call}(…)`)} returns the answer as typed columns (a \`QueryResult\`); ${code(`store.request('${example}')`)} answers with the status, headers and body the service would send.`,
    '',
  );

  // Path segments: exactly the patterns' parameters.
  const pathKeys = [
    ...new Set(
      endpoints.flatMap((e) =>
        e.pattern
          .split('/')
          .filter((s) => s.startsWith(':') || s.startsWith('*'))
          .map((s) => s.slice(1)),
      ),
    ),
  ];
  compareKeys(`${key} path`, pathKeys, Object.keys(text.path), problems);
  if (pathKeys.length > 0) {
    out.push('## Path', '');
    out.push(
      table(
        ['segment', 'meaning'],
        pathKeys.map((k) => [code(k), text.path[k] ?? '']),
      ),
      '',
    );
  }

  // Parameters: the schema's keys, `date` where the service reads it, and keys accepted but not read.
  out.push('## Parameters', '');
  const params = parameterRows(key, text, endpoints, nowSeconds, problems);
  if (endpoints.length === 0) {
    out.push('None; the output parameters (`format`, `columns`, `human`, …) do not shape this answer.', '');
  } else {
    out.push(
      params.length === 0
        ? 'None besides the universal ones.'
        : table(['name', 'type', 'default', 'meaning'], params),
      '',
      'Every endpoint also takes the [universal parameters](README.md#universal-parameters) (`format`, `dateformat`, `columns`, `human`, `limit`, `offset`, `mode`, `maxage`, `token`); dates and instants are read in any [input form](README.md#dates-and-instants).',
      '',
    );
  }

  if (endpoints.length > 0) out.push('## Modes', '', ...modeLines(endpoints), '');

  // Fields: exactly those of the answers, in their order, with the known-at of each.
  out.push('## Fields', '');
  const fields = seenFields(key, runs, problems);
  compareKeys(
    `${key} fields`,
    fields.map((f) => f.key),
    Object.keys(text.fields),
    problems,
  );
  const optionRows = runs.some((run) => run.answer !== undefined && isOptionAnswer(run.answer));
  const rows = fields.map((field) => {
    const words: FieldText = text.fields[field.key] ?? { unit: '', meaning: '' };
    const type = `${field.kind}${field.scalar ? ' (one value)' : ''}`;
    return [
      code(field.key),
      type,
      words.unit,
      words.meaning,
      knownAtOf(key, field.key, words, optionRows, problems),
    ];
  });
  out.push(
    optionRows
      ? 'Each field’s known-at rule is that of its family in `src/pit/known-at.ts`; see [point in time](../point-in-time.md).'
      : 'Arrays hold one element per row unless marked “one value”.',
    '',
    table(['field', 'type', 'unit', 'meaning', 'known at'], rows),
    '',
  );

  out.push('## Credits', '', ...creditLines(key, endpoints, runs, problems), '');
  if (text.notes !== undefined) out.push('## No data and refusals', '', text.notes, '');

  const shown = runs.filter((run) => run.example.title !== undefined);
  out.push(
    shown.length === 1 ? '## Example' : '## Examples',
    '',
    `Answered by the sample store (\`${DOCS_STORE}\`, data version \`${dataVersion}\`) at T = ${formatInstant(nowSeconds, 'timestamp')} for the local account (paid, non-professional, with OPRA); headers abridged, JSON bodies shown one key per line.`,
    '',
  );
  for (const run of shown) out.push(`### ${run.example.title}`, '', ...renderExample(run), '');
  return `${out.join('\n').trimEnd()}\n`;
}

const GENERATED_NOTE =
  '<!-- Generated by `npm run docs` from the endpoint schemas, src/pit/known-at.ts, src/billing/credits.ts and the sample store; the words live in scripts/docs/endpoint-texts.ts. A test fails when this page differs from what the code generates. -->';

function parameterRows(
  key: string,
  text: PageText,
  endpoints: readonly Endpoint[],
  nowSeconds: number,
  problems: string[],
): string[][] {
  const shapes = new Map<string, ParamShape | undefined>();
  for (const endpoint of endpoints) {
    for (const [name, schema] of Object.entries(endpoint.schema(fixedClock(nowSeconds)).shape)) {
      const shape = shapeOf(schema as z.ZodType);
      if (shape === undefined) problems.push(`${key}: parameter ${name} has no shape in paramShapes`);
      shapes.set(name, shape);
    }
  }
  const dated = endpoints.some((e) => e.dated);
  const names = [...new Set(endpoints.flatMap(paramNames))];
  compareKeys(`${key} parameters`, names, Object.keys(text.params), problems);
  return names.map((name) => {
    const words = text.params[name] ?? { meaning: '' };
    const shape = shapes.get(name);
    // The service reads `date` of a dated endpoint itself: the endpoint never sees it.
    const type =
      name === 'date' && dated
        ? 'date (a past session)'
        : shape !== undefined
          ? shapeText(shape)
          : 'text (not read)';
    return [code(name), type, words.default ?? '—', words.meaning];
  });
}

/** The shape a parameter schema was made with (through `.optional()`). */
function shapeOf(schema: z.ZodType): ParamShape | undefined {
  let current: z.ZodType = schema;
  for (;;) {
    const shape = paramShapes.get(current);
    if (shape !== undefined) return shape;
    const inner = (current as { unwrap?: () => z.ZodType }).unwrap;
    if (inner === undefined) return undefined;
    current = inner.call(current);
  }
}

function shapeText(shape: ParamShape): string {
  const n = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 6 });
  switch (shape.kind) {
    case 'boolean':
      return 'boolean (`true`, `false`, `1`, `0`)';
    case 'number':
    case 'integer': {
      const range =
        shape.min !== undefined && shape.max !== undefined
          ? ` ${n(shape.min)}–${n(shape.max)}`
          : shape.min !== undefined
            ? ` ≥ ${n(shape.min)}`
            : shape.max !== undefined
              ? ` ≤ ${n(shape.max)}`
              : '';
      return `${shape.kind}${range}`;
    }
    case 'date':
      return 'date';
    case 'date-or-relative':
      return 'date, instant, or `-N unit`';
    case 'expiration':
      return 'date or `all`';
    case 'expression':
      return `expression: ${shape.example}${shape.absolute === true ? ' (a sign is ignored)' : ''}`;
    case 'choice':
      return shape.values.map(code).join(' | ');
    case 'symbols':
      return 'comma-separated tickers';
    case 'text':
      return 'text';
  }
}

/** What `date`, `mode=cached` and the account's entitlement do on these endpoints (`src/service/modes.ts`). */
function modeLines(endpoints: readonly Endpoint[]): string[] {
  const [endpoint] = endpoints as [Endpoint];
  const account = (userType: Account['userType'], opra: boolean): Account => ({
    ...LOCAL_ACCOUNT,
    userType,
    opra,
  });
  const caps = [
    ['a non-professional account with OPRA', account('nonpro', true)],
    ['without OPRA', account('nonpro', false)],
    ['a professional or unknown one', account('pro', false)],
  ] as const;
  const [withOpra, withoutOpra, professional] = caps.map(([, a]) => entitlementCap(a, endpoint.family));
  const freshest =
    withOpra === withoutOpra && withOpra === professional
      ? `\`${withOpra}\`, whatever the entitlements`
      : withOpra === withoutOpra
        ? `a non-professional account, \`${withOpra}\`; ${caps[2][0]}, \`${professional}\``
        : `${caps[0][0]}, \`${withOpra}\`; ${caps[1][0]}, \`${withoutOpra}\`; ${caps[2][0]}, \`${professional}\``;
  return [
    endpoint.dated
      ? '- Historical requests: `date=D`, a past session, with `mode` omitted, `historical` or `eod`; the answer is D’s as it stood at its end of day, whatever T.'
      : '- No historical (`date`) request: the answer is as of the clock T in the request’s mode.',
    endpoint.cacheable
      ? '- `mode=cached` serves the response cache: 203 with the cached answer when one is within `maxage`, else 204 and no credit.'
      : '- `mode=cached` is a 400 here.',
    `- The freshest mode a paid account may see: ${freshest}. A request for fresher data is served at that cap. Free and trial accounts get \`historical\` only.`,
  ];
}

function seenFields(key: string, runs: readonly Run[], problems: string[]): SeenField[] {
  const seen = new Map<string, SeenField>();
  const add = (field: SeenField) => {
    const before = seen.get(field.key);
    if (before === undefined) seen.set(field.key, field);
    else if (before.kind !== field.kind || before.scalar !== field.scalar) {
      problems.push(
        `${key}: field ${field.key} is ${before.kind} in one answer and ${field.kind} in another`,
      );
    }
  };
  for (const run of runs) {
    const answer = run.answer;
    if (answer !== undefined) {
      for (const s of answer.scalars ?? [])
        if (s.position === 'before') add({ key: s.key, kind: KIND_TEXT[s.kind], scalar: true });
      for (const f of answer.fields) add({ key: f.key, kind: KIND_TEXT[f.kind], scalar: false });
      for (const s of answer.scalars ?? [])
        if (s.position === 'after') add({ key: s.key, kind: KIND_TEXT[s.kind], scalar: true });
      for (const [name, value] of Object.entries(answer.rawBody ?? {})) add(jsonField(key, name, value));
    } else if (run.response.status === 200) {
      const body = JSON.parse(run.response.body) as Record<string, unknown>;
      for (const [name, value] of Object.entries(body)) if (name !== 's') add(jsonField(key, name, value));
    }
  }
  return [...seen.values()];
}

/** A field read from a JSON body: date keys (strikes) and echoed headers stand for their kind of key. */
function jsonField(page: string, name: string, value: unknown): SeenField {
  const key = page === '/headers/' ? '<header name>' : isIsoDate(name) ? 'YYYY-MM-DD' : name;
  const scalar = !Array.isArray(value);
  const sample = Array.isArray(value) ? value[0] : value;
  return { key, kind: typeof sample === 'number' ? 'number' : typeof sample, scalar };
}

function knownAtOf(
  page: string,
  field: string,
  words: FieldText,
  optionRows: boolean,
  problems: string[],
): string {
  if (!optionRows) {
    if (words.knownAt === undefined)
      problems.push(`${page}: field ${field} says nothing of when it is known`);
    return words.knownAt ?? '';
  }
  if (words.knownAt !== undefined) problems.push(`${page}: option field ${field} has its own known-at text`);
  const family = (OPTION_FIELD_KNOWN_AT as Readonly<Record<string, KnownAtFamily>>)[field];
  if (family === undefined) {
    problems.push(`${page}: option field ${field} has no known-at family in src/pit/known-at.ts`);
    return '';
  }
  return `${code(family)}: ${FAMILY_TEXT[family]}`;
}

/** The credits of each case the examples show, the cached-mode rule, and what is free. */
function creditLines(
  key: string,
  endpoints: readonly Endpoint[],
  runs: readonly Run[],
  problems: string[],
): string[] {
  if (endpoints.length === 0) {
    const credits = [...new Set(runs.map((run) => run.response.credits))];
    return [`Free: ${credits.join(', ')} credits; the request is not metered.`];
  }
  const byCase = new Map<string, Set<Billing>>();
  for (const run of runs) {
    if (run.answer === undefined) continue;
    const label = run.example.case;
    if (label === undefined) {
      problems.push(`${key}: example ${run.example.target} names no credit case`);
      continue;
    }
    const billings = byCase.get(label) ?? new Set();
    billings.add(run.answer.billing);
    byCase.set(label, billings);
  }
  const rows: string[][] = [];
  for (const [label, billings] of byCase) {
    if (billings.size !== 1)
      problems.push(`${key}: the case ${label} is billed ${[...billings].join(' and ')}`);
    const billing = [...billings][0]!;
    rows.push([label === 'any' ? 'every request' : label, BILLING_TEXT[billing], billingExamples(billing)]);
  }
  if (endpoints.some((e) => e.cacheable)) {
    rows.push(['`mode=cached`, a hit (203)', 'per request', `${creditsFor('per-row', 500, ['bid'], true)}`]);
    rows.push(['`mode=cached`, a miss (204)', 'none', '0']);
  }
  return [
    table(['request', 'credits', 'e.g.'], rows),
    '',
    'A no-data answer (404), any other 4xx and a 204 cost nothing; only 200 and 203 consume credits.',
  ];
}

function billingExamples(billing: Billing): string {
  const rows = (n: number) => `${n.toLocaleString('en-US')} row${n === 1 ? '' : 's'}`;
  const at = (n: number, keys: readonly string[]) => creditsFor(billing, n, keys, false);
  switch (billing) {
    case 'per-row':
      return [1, 250].map((n) => `${rows(n)}: ${at(n, ['bid']).toLocaleString('en-US')}`).join('; ');
    case 'per-1000-rows':
      return [1, 1000, 1001, 5000].map((n) => `${rows(n)}: ${at(n, ['bid'])}`).join('; ');
    case 'per-symbol-with-quote':
      return `3 rows: ${at(3, ['symbol', 'bid', 'ask', 'mid', 'last'])}; 3 rows with \`columns=symbol,volume\`: ${at(3, ['symbol', 'volume'])}`;
    case 'per-response':
      return `${at(3, ['bid'])}`;
  }
}

function renderExample(run: Run): string[] {
  const { example, response } = run;
  const command =
    example.headers === undefined
      ? `npx pitchain request --store ${DOCS_STORE} --now ${DOCS_NOW} -i '${example.target}'`
      : `curl -i ${Object.entries(example.headers)
          .map(([name, value]) => `-H '${name}: ${value}'`)
          .join(' ')} 'http://127.0.0.1:8787${example.target}'`;
  const shownHeaders = ['Content-Type', 'X-Api-Ratelimit-Consumed']
    .filter((name) => response.headers[name] !== undefined)
    .map((name) => `${name}: ${response.headers[name]}`);
  // CSV lines end in CRLF on the wire; a page shows them as lines.
  const body =
    response.headers['Content-Type'] === 'application/json'
      ? readableJson(response.body)
      : response.body.replaceAll('\r\n', '\n');
  return [
    fence('sh', command),
    '',
    fence(
      'text',
      [`HTTP/1.1 ${response.status} ${statusText(response.status)}`, ...shownHeaders, '', body].join('\n'),
    ),
  ];
}

function renderIndex(rows: readonly string[][], csv: Run, problems: string[]): string {
  compareKeys('universal parameters', [...UNIVERSAL_KEYS], Object.keys(UNIVERSAL_TEXTS), problems);
  const universal = UNIVERSAL_KEYS.map((name) => {
    const words = UNIVERSAL_TEXTS[name] ?? { type: '', meaning: '' };
    if (name === 'limit') {
      return [
        code(name),
        `integer ≤ ${MAX_LIMIT.toLocaleString('en-US')}`,
        DEFAULT_LIMIT.toLocaleString('en-US'),
        words.meaning,
      ];
    }
    return [code(name), words.type, words.default ?? '—', words.meaning];
  });
  const families = Object.entries(FAMILY_TEXT).map(([family, words]) => [
    code(family),
    words,
    Object.entries(OPTION_FIELD_KNOWN_AT)
      .filter(([, f]) => f === family)
      .map(([field]) => code(field))
      .join(', '),
  ]);
  return `${[
    GENERATED_NOTE,
    '',
    '# Endpoints',
    '',
    'One page per path the service answers: its parameters (name, type, default), its fields with their units and the instant each becomes known, its credits, and example responses. The pages are generated from the endpoint schemas and the sample store (`npm run docs`), and a test fails when they differ from what the code generates, so they say what the code does.',
    '',
    table(['path', 'page', 'what it answers', 'typed function'], rows),
    '',
    '## Responses',
    '',
    'A body is columnar JSON: `"s": "ok"` and one array per field, element i of every array describing the same row (a few keys are single values, marked “one value”). A valid question without data is 404 `{"s":"no_data"}`, with `nextTime`/`prevTime` where known, or with an `errmsg` such as `Symbol not found.`; a refusal is `{"s":"error","errmsg":…}` with its status (400, 401, 402, 403, 404, 413, 429). `mode=cached` adds 203 (a cache hit) and 204 (a miss, empty body).',
    '',
    'Field types: `string`, `number`, `integer`, `boolean`; an `instant` is epoch seconds by default (`dateformat` changes it), a `date` is `YYYY-MM-DD` (an instant at 00:00 ET under `dateformat`).',
    '',
    '## Dates and instants',
    '',
    'Date parameters accept `YYYY-MM-DD` (optionally with `HH:MM[:SS]` and an offset), US `M/D/YYYY` and `M/D/YY`, unix seconds, spreadsheet serials, and `today`, `yesterday`, `now`, `N days ago`, all read against the clock T and in Eastern time, never the host’s. `from` may also be relative to `to` (`-5 days`).',
    '',
    '## Universal parameters',
    '',
    table(['name', 'type', 'default', 'meaning'], universal),
    '',
    `For example, a chain in CSV with ISO instants (T = ${DOCS_NOW}):`,
    '',
    ...renderExample(csv),
    '',
    '## Known-at families of option fields',
    '',
    'Every field of an option row (chain, option quotes) belongs to one family of `src/pit/known-at.ts`, whose instant is stored per row; see [point in time](../point-in-time.md).',
    '',
    table(['family', 'known at', 'fields'], families),
  ].join('\n')}\n`;
}

/** Records which typed function of the library face asks which service. */
function libraryCalls(): Map<string, string> {
  const calls = new Map<string, string>();
  let asked = '';
  const ask = ((question: { service: string }) => {
    asked = question.service;
    return Promise.resolve(undefined);
  }) as unknown as Ask;
  const groups = {
    options: optionFunctions(ask),
    stocks: stockFunctions(ask),
    markets: marketFunctions(ask),
  };
  for (const [group, functions] of Object.entries(groups)) {
    for (const [name, fn] of Object.entries(functions) as [string, (...args: string[]) => unknown][]) {
      void fn('D', 'X');
      if (!calls.has(asked)) calls.set(asked, `store.${group}.${name}`);
    }
  }
  return calls;
}

function compareKeys(
  what: string,
  fromCode: readonly string[],
  fromText: readonly string[],
  problems: string[],
): void {
  const missing = fromCode.filter((k) => !fromText.includes(k));
  const extra = fromText.filter((k) => !fromCode.includes(k));
  if (missing.length > 0) problems.push(`${what}: the code has ${missing.join(', ')}, the texts do not`);
  if (extra.length > 0) problems.push(`${what}: the texts have ${extra.join(', ')}, the code does not`);
}

/** `/v1/options/chain/:underlying/` → `/v1/options/chain/{underlying}/`. */
function displayPattern(pattern: string): string {
  return pattern.replace(/[:*](\w+)/g, '{$1}');
}

/** `/v1/options/chain/` → `options-chain.md`; `/status/` → `utilities-status.md`. */
export function pageName(service: string): string {
  const parts = service.split('/').filter((p) => p !== '');
  return `${parts[0] === 'v1' ? parts.slice(1).join('-') : `utilities-${parts.join('-')}`}.md`;
}
