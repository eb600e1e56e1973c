/**
 * `createClient({ baseUrl, token })`: the endpoint functions of a local store (`options.chain`,
 * `stocks.candles`, …; the same names, parameters and typed results) answered by a service that speaks the
 * API, so a script moves between the service and a store by changing the line that opens it.
 *
 * One call may be several requests (`split.ts`): symbol batches and intraday year chunks, whose columns
 * are joined in order and whose credits are summed. A 204 (a `mode=cached` miss) is asked once more with
 * `mode=live`. A 404 without `errmsg` is an empty result; with one it is a `NotFoundError`, as a store
 * throws it.
 */
import { UsageError } from '../errors.js';
import {
  type Ask,
  type CallOptions,
  marketFunctions,
  optionFunctions,
  type Question,
  stockFunctions,
} from '../library/face.js';
import { toQuery } from '../library/params.js';
import { type Columns, QueryResult, type ResultMeta } from '../library/result.js';
import { OPTION_COLUMNS } from '../query/options/columns.js';
import type { Mode } from '../query/types.js';
import { errorForStatus, ParseError } from './errors.js';
import { candleChunks, encodeQueryValue, isIntraday, symbolBatches } from './split.js';
import {
  type Credits,
  type RawResponse,
  type ResponseEvent,
  rayIdOf,
  requestLineBytes,
  Transport,
} from './transport.js';

/** How to reach the service; every field has the official SDKs' default. */
export type ClientOptions = {
  /** The service's address (default: `MARKETDATA_BASE_URL`, else `https://api.marketdata.app`). */
  readonly baseUrl?: string;
  /** The API token, sent as `Authorization: Bearer …` (default: `MARKETDATA_TOKEN`; none: demo access). */
  readonly token?: string;
  /** Retries after a status above 500 or a network failure (default 3). */
  readonly maxRetries?: number;
  /** The first backoff in ms, doubled on each retry (default 500). */
  readonly retryInitialWaitMs?: number;
  /** The longest backoff in ms (default 10,000). */
  readonly retryMaxWaitMs?: number;
  /** The longest `Retry-After` in ms the client waits on before retrying (default 300,000). */
  readonly retryAfterMaxMs?: number;
  /** How long one attempt may take before it is retried as a network failure (default 99,000 ms, as the SDKs). */
  readonly timeoutMs?: number;
  /** Requests in flight at once (default and most: 50, the service's cap per account). */
  readonly maxInFlight?: number;
  /** The fetch function (default: the global one). */
  readonly fetch?: typeof fetch;
  /** How the client waits between attempts (default: a timer); tests record the waits instead. */
  readonly wait?: (ms: number) => Promise<void>;
  /** Called after every answer the service sends, retries and fallbacks included. */
  readonly onResponse?: (event: ResponseEvent) => void;
};

/** The service's default address (api-reference §1). */
export const DEFAULT_BASE_URL = 'https://api.marketdata.app';

/** The most requests in flight the service allows one account (429 beyond). */
export const MAX_IN_FLIGHT = 50;

const USER_AGENT = 'pitchain-client/0.1.0';

/** A client of the service: the store's endpoint functions, the credits spent, and raw GETs. */
export type Client = {
  readonly options: ReturnType<typeof optionFunctions>;
  readonly stocks: ReturnType<typeof stockFunctions>;
  readonly markets: ReturnType<typeof marketFunctions>;
  /** The credit state the service last reported and the credits this client spent. */
  readonly credits: Credits;
  /** The base URL requests go to. */
  readonly baseUrl: string;
  /** `GET target` (`/v1/…/?…`) as it is: retried like any call, no splitting, no fallback; 200/203/204/404 answered. */
  get(target: string, options?: { readonly token?: string }): Promise<RawResponse>;
};

/** A client of the service at `baseUrl` (see `ClientOptions` for the defaults, read from the environment). */
export function createClient(options: ClientOptions = {}): Client {
  const env = typeof process === 'undefined' ? {} : process.env;
  const baseUrl = options.baseUrl ?? nonEmpty(env['MARKETDATA_BASE_URL']) ?? DEFAULT_BASE_URL;
  try {
    new URL(baseUrl);
  } catch (cause) {
    throw new UsageError(
      `baseUrl ${JSON.stringify(baseUrl)} is not a URL (e.g. https://api.marketdata.app)`,
      {
        cause,
      },
    );
  }
  const maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
  if (!(Number.isInteger(maxInFlight) && maxInFlight >= 1 && maxInFlight <= MAX_IN_FLIGHT)) {
    throw new UsageError(`maxInFlight must be a whole number from 1 to ${MAX_IN_FLIGHT}, not ${maxInFlight}`);
  }
  const transport = new Transport({
    baseUrl,
    token: options.token ?? nonEmpty(env['MARKETDATA_TOKEN']),
    maxRetries: options.maxRetries ?? 3,
    retryInitialWaitMs: options.retryInitialWaitMs ?? 500,
    retryMaxWaitMs: options.retryMaxWaitMs ?? 10_000,
    retryAfterMaxMs: options.retryAfterMaxMs ?? 300_000,
    maxInFlight,
    timeoutMs: options.timeoutMs ?? 99_000,
    userAgent: USER_AGENT,
    fetch: options.fetch ?? globalThis.fetch,
    wait: options.wait ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    onResponse: options.onResponse,
  });
  const ask: Ask = (question, callOptions) => askService(transport, question, callOptions);
  return {
    options: optionFunctions(ask),
    stocks: stockFunctions(ask),
    markets: marketFunctions(ask),
    get credits() {
      return transport.credits;
    },
    baseUrl,
    get: (target, getOptions) => transport.get(target, getOptions?.token),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/**
 * The request target of a question: the service's path with the path parameters percent-encoded (lookup
 * text arrives encoded), a trailing slash, and the query in the parameters' order.
 */
export function requestTarget(question: Question): string {
  const segments = Object.entries(question.path).map(([name, value]) =>
    name === 'text' ? value : encodeURIComponent(value),
  );
  const path = segments.length === 0 ? question.service : `${question.service}${segments.join('/')}/`;
  return withQuery(path, toQuery(question.params));
}

function withQuery(path: string, query: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(query).map(
    ([key, value]) => `${encodeURIComponent(key)}=${encodeQueryValue(value)}`,
  );
  return pairs.length === 0 ? path : `${path}?${pairs.join('&')}`;
}

/** One request's part of a call's answer. */
type Part = {
  readonly status: number;
  readonly credits: number;
  readonly body: Record<string, unknown> | undefined;
  readonly mode: string | undefined;
};

async function askService<C extends Columns>(
  transport: Transport,
  question: Question,
  callOptions: CallOptions = {},
): Promise<QueryResult<C>> {
  if (callOptions.now !== undefined) {
    throw new UsageError(
      'The service answers at its own clock: `now` is for a local store (openStore(dir, { now }) or store.at(T)).',
    );
  }
  const asOf = Math.floor(Date.now() / 1000);
  const token = callOptions.token;
  const query = toQuery(question.params);
  const queries = splitQuery(transport, question, query);
  const parts = await Promise.all(queries.map((q) => askOnce(transport, question, q, token)));
  return joinParts<C>(question.service, parts, asOf);
}

/** The queries one call becomes: symbol batches, or intraday candle chunks, or the query itself. */
function splitQuery(
  transport: Transport,
  question: Question,
  query: Record<string, string>,
): Record<string, string>[] {
  const symbols = query['symbols'];
  if (symbols?.includes(',')) {
    const list = symbols.split(',');
    const empty = requestLineBytes(
      transport.url(requestTarget({ ...question, params: { ...query, symbols: '' } })),
    );
    return symbolBatches(list, empty).map((batch) => ({ ...query, symbols: batch.join(',') }));
  }
  const resolution = question.path['resolution'];
  if (question.service === '/v1/stocks/candles/' && resolution !== undefined && isIntraday(resolution)) {
    const chunks = candleChunks(query['from'], query['to']);
    if (chunks !== undefined && chunks.length > 1) {
      return chunks.map((chunk) => ({ ...query, from: chunk.from, to: chunk.to }));
    }
  }
  return [query];
}

/** One request, with at most one `mode=live` fallback after a 204. */
async function askOnce(
  transport: Transport,
  question: Question,
  query: Record<string, string>,
  token: string | undefined,
): Promise<Part> {
  let response = await transport.get(requestTarget({ ...question, params: query }), token);
  let credits = response.consumed;
  let mode = query['mode'];
  if (response.status === 204) {
    mode = 'live';
    response = await transport.get(requestTarget({ ...question, params: { ...query, mode: 'live' } }), token);
    credits += response.consumed;
    // A second 204 (which `mode=live` should never give) is an empty answer, as the Go SDK reads it.
    if (response.status === 204) return { status: 204, credits, body: undefined, mode };
  }
  const body = parseBody(response);
  if (response.status === 404) {
    // With an errmsg it is a refusal, typed as the transport types every other one.
    if (typeof body['errmsg'] === 'string') {
      throw errorForStatus(404, response.text, rayIdOf(response.headers));
    }
    return { status: 404, credits, body, mode };
  }
  if (body['s'] !== 'ok') {
    throw new ParseError(
      `GET ${response.target}: status ${response.status} with s=${JSON.stringify(body['s'])}`,
    );
  }
  return { status: response.status, credits, body, mode };
}

function parseBody(response: RawResponse): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(response.text);
  } catch (cause) {
    throw new ParseError(`GET ${response.target}: status ${response.status} with a body that is not JSON`, {
      cause,
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ParseError(
      `GET ${response.target}: status ${response.status} with a body that is not an object`,
    );
  }
  return parsed as Record<string, unknown>;
}

/** The call's result: the parts' columns joined in order, their credits summed. */
function joinParts<C extends Columns>(service: string, parts: readonly Part[], asOf: number): QueryResult<C> {
  const credits = parts.reduce((sum, part) => sum + part.credits, 0);
  const answered = parts.filter((part) => part.status === 200 || part.status === 203);
  const mode = (parts.find((part) => part.mode !== undefined)?.mode ?? 'live') as Mode;
  const base = {
    asOf,
    dataVersion: '',
    lookAhead: [],
    mode,
    credits,
    status: parts.some((part) => part.status === 203) ? (203 as const) : (200 as const),
  };
  if (answered.length === 0) {
    const first = parts[0]?.body;
    const last = parts.at(-1)?.body;
    const meta: ResultMeta = {
      ...base,
      dataAsOf: null,
      scalars: {},
      noData: true,
      ...(last !== undefined && 'nextTime' in last ? { nextTime: last['nextTime'] as number | null } : {}),
      ...(first !== undefined && 'prevTime' in first ? { prevTime: first['prevTime'] as number | null } : {}),
    };
    return new QueryResult<C>(emptyColumns(service) as unknown as C, meta);
  }
  const columns: Record<string, unknown[]> = {};
  const scalars: Record<string, unknown> = {};
  for (const part of answered) {
    for (const [key, value] of Object.entries(part.body!)) {
      if (Array.isArray(value)) {
        const column = columns[key];
        if (column === undefined) columns[key] = [...value];
        else for (const item of value) column.push(item);
      } else if (key !== 's') scalars[key] = value;
    }
  }
  return new QueryResult<C>(columns as unknown as C, { ...base, dataAsOf: null, scalars });
}

/** The columns of an empty answer, as a store gives them: the option row's keys for option rows, else none. */
function emptyColumns(service: string): Record<string, unknown[]> {
  if (service === '/v1/options/chain/' || service === '/v1/options/quotes/') {
    return Object.fromEntries(OPTION_COLUMNS.map(({ key }) => [key, []]));
  }
  return {};
}
