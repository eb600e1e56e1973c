/**
 * The service: the one adapter that turns a request target into the status, headers and body the
 * market-data service would send at clock T — request line limit, query parsing (last occurrence wins),
 * authentication, routing, modes and entitlements, the response cache, output formats, credits and
 * headers, and one table from error to status (`errors.ts`). `store.request`, the HTTP server and the
 * CLI go through `request`; the typed library face goes through `evaluate`. Endpoints only answer
 * questions.
 */
import { type Account, type AccountBook, LOCAL_ACCOUNT } from '../billing/accounts.js';
import { creditsFor } from '../billing/credits.js';
import { Ledger } from '../billing/ledger.js';
import { MarketDataError } from '../errors.js';
import { type Clock, fixedClock, parseDateInput, systemClock } from '../market-time/index.js';
import type { AsOf } from '../pit/as-of.js';
import type { Answer, Endpoint, EndpointResult, GreeksSource, Mode } from '../query/types.js';
import { StoreCache } from '../store/cache.js';
import type { SqlSession } from '../store/sql.js';
import { failureOf } from './errors.js';
import {
  keep,
  type OutputOptions,
  parseOutputOptions,
  renderAnswer,
  renderError,
  renderNoData,
  UNIVERSAL_KEYS,
} from './format.js';
import { parseMode, resolveFreshness } from './modes.js';
import { ResponseCache } from './response-cache.js';
import { Router } from './router.js';

/** The maximum HTTP request line (specification L1). */
export const MAX_REQUEST_LINE = 4094;

/** What a request returns: status, headers and the body text exactly as the service would send them. */
export type ApiResponse = {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly credits: number;
  /** For logs only, on a 500: what failed, its causes and SQL. Never part of the body. */
  readonly detail?: string;
};

/** Per-request options of the library face. */
export type RequestOptions = {
  /** Clock instant T: epoch seconds, a Date, or any input date form (`2024-03-15T15:45:00-04:00`). */
  readonly now?: number | Date | string;
  /** API token (else the `Authorization` header or the `token` parameter). */
  readonly token?: string;
  /** Request headers (names in any case). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Caller's IP address, for the one-device rule (the server passes it). */
  readonly ip?: string;
};

/** How an API instance is set up. */
export type ApiOptions = {
  readonly sql: SqlSession;
  /** The store's cache (keyed by data version); default: one of this service's own. */
  readonly cache?: StoreCache;
  readonly endpoints: readonly Endpoint[];
  /** Accounts; without them every request acts for the default local account. */
  readonly accounts?: AccountBook;
  /** The clock used when a request names no `now` (default: real time). */
  readonly clock?: Clock;
  /** Append every request-log entry to this JSON-lines file. */
  readonly ledgerFile?: string;
  /** Where option answers' IV and Greeks come from (default `vendor`, the service's own rule). */
  readonly greeks?: GreeksSource;
};

/** The header that marks IV and Greeks computed from the quotes rather than the vendor's. */
export const GREEKS_HEADER = 'X-Pitchain-Greeks';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  203: 'Non-Authoritative Information',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
};

/** The reason phrase of a status code. */
export function statusText(status: number): string {
  return STATUS_TEXT[status] ?? '';
}

const BASE_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'X-Content-Type-Options': 'nosniff',
  Vary: 'Accept, Origin',
};

/** What `evaluate` found: the endpoint's answer (or none, for a cache miss) and how it was reached. */
export type Evaluation = {
  /** 200 fresh, 203 from the response cache, 204 a `mode=cached` miss (no result). */
  readonly status: 200 | 203 | 204;
  readonly result: EndpointResult | undefined;
  readonly mode: Mode;
  readonly asOf: AsOf;
  /** Whether this was a `mode=cached` hit (billed 1 per request). */
  readonly cachedHit: boolean;
};

/** One service over one store: routing, accounts and ledger live as long as it does. */
export class Api {
  readonly ledger: Ledger;
  private readonly router: Router;
  private readonly cache: ResponseCache;
  private readonly storeCache: StoreCache;
  /** The endpoints by service name and path parameter names (see `endpoint`), made on first use. */
  private byService: Map<string, Endpoint> | undefined;
  private readonly clock: Clock;

  constructor(private readonly options: ApiOptions) {
    this.router = new Router(options.endpoints);
    this.ledger = new Ledger(options.ledgerFile);
    this.clock = options.clock ?? systemClock;
    this.storeCache = options.cache ?? new StoreCache(() => 'unversioned');
    this.cache = new ResponseCache(this.storeCache);
  }

  /** Answers `GET <target>` (path and query) at clock T exactly as the service would; never throws. */
  async request(target: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const nowSeconds = this.readNow(options?.now);
    if (nowSeconds === undefined) return invalidNow(options?.now);
    if (typeof target !== 'string') target = String(target);
    const requestLine = `GET ${target} HTTP/1.1`;
    if (Buffer.byteLength(requestLine) > MAX_REQUEST_LINE)
      return requestLineTooLarge(Buffer.byteLength(requestLine));

    const queryAt = target.indexOf('?');
    const rawPath = queryAt < 0 ? target : target.slice(0, queryAt);
    const rawQuery = queryAt < 0 ? '' : target.slice(queryAt + 1);
    // A null-prototype record: a parameter named `__proto__` or `constructor` is just a parameter.
    const query: Record<string, string> = Object.create(null);
    for (const [k, v] of new URLSearchParams(rawQuery)) query[k] = v; // the last occurrence wins
    const malformed = /[&=]/.test(rawPath) || rawQuery.includes('?');

    const headers = lowerCaseKeys(options?.headers);
    const token =
      (typeof options?.token === 'string' ? options.token : undefined) ??
      bearer(headers['authorization']) ??
      query['token'];
    // The request log keeps the path only, and never a token, even one written into the path by mistake.
    const loggedPath = withoutTokens(rawPath, token);
    let output: OutputOptions | undefined;
    let account: Account | undefined;
    try {
      output = parseOutputOptions(query);
      const path = rawPath.replace(/\/{2,}/g, '/');
      if (/^\/headers\/?$/i.test(path))
        return this.plain(200, echoHeaders(headers), this.authenticate(token), nowSeconds);
      if (/^\/status\/?$/i.test(path))
        return this.plain(200, this.statusBody(nowSeconds), this.authenticate(token), nowSeconds);
      account = this.authenticate(token);
      if (account === undefined) {
        throw new MarketDataError(
          401,
          'Unauthorized. Send a valid token in the Authorization header (Bearer) or as the token parameter.',
        );
      }
      if (malformed) {
        throw new MarketDataError(
          400,
          'Malformed URL. Start the query string with ? and separate parameters with &.',
        );
      }
      if (/^\/user\/?$/i.test(path)) return this.userResponse(account, nowSeconds);
      const match = this.route(path);
      if (match === undefined) throw new MarketDataError(404, `No endpoint at ${path}.`);
      return await this.answer(
        match.endpoint,
        match.params,
        query,
        output,
        account,
        nowSeconds,
        loggedPath,
        typeof options?.ip === 'string' ? options.ip : undefined,
      );
    } catch (error) {
      const failure = failureOf(error);
      const rendered = renderError(failure.body, output);
      const credits = 0;
      const extra: Record<string, string> =
        account === undefined ? {} : this.ledger.headers(account, nowSeconds, credits);
      // A request log that cannot be written (the fault being answered, perhaps) must not make this throw.
      const entry =
        account === undefined
          ? undefined
          : await this.ledger
              .record(account, loggedPath, failure.status, 0, nowSeconds)
              .catch(() => undefined);
      // The one-device 403 names the address the account is bound to in a header too (SDKs read it there).
      const authorizedIp = (failure.body as Record<string, unknown>)['authorizedIP'];
      if (typeof authorizedIp === 'string') extra['X-API-Authorized-IP'] = authorizedIp;
      return {
        status: failure.status,
        headers: { ...BASE_HEADERS, 'Content-Type': rendered.contentType, ...extra, ...rayHeaders(entry) },
        body: rendered.body,
        credits,
        ...(failure.detail === undefined ? {} : { detail: failure.detail }),
      };
    }
  }

  /**
   * The endpoint of a service name (`/v1/options/chain/`) whose path takes exactly these parameters
   * (stock quotes answer both `/quotes/{symbol}/` and `/quotes/?symbols=`).
   */
  endpoint(service: string, pathKeys: readonly string[]): Endpoint {
    const wanted = `${service} ${[...pathKeys].sort().join(',')}`;
    this.byService ??= new Map(
      this.options.endpoints.map((e) => [
        `${e.service} ${e.pattern
          .split('/')
          .filter((part) => part.startsWith(':') || part.startsWith('*'))
          .map((part) => part.slice(1))
          .sort()
          .join(',')}`,
        e,
      ]),
    );
    const found = this.byService.get(wanted);
    if (found === undefined) throw new Error(`No endpoint ${wanted}`);
    return found;
  }

  /**
   * Runs an endpoint for an account at clock T: mode and entitlements, the as-of, the response cache.
   * `query` holds the endpoint's parameters and `mode`/`maxage`; throws the service's refusals.
   */
  async evaluate(
    endpoint: Endpoint,
    pathParams: Readonly<Record<string, string>>,
    query: Readonly<Record<string, string>>,
    account: Account,
    nowSeconds: number,
    greeks: GreeksSource = this.options.greeks ?? 'vendor',
  ): Promise<Evaluation> {
    const mode = parseMode(query['mode'] ?? query['feed']);
    const { mode: resolved, asOf } = resolveFreshness(endpoint, account, mode, query['date'], nowSeconds);
    const endpointQuery = endpointParams(query, asOf.kind === 'dated');
    // Computed Greeks make another answer than the vendor's: they are kept apart.
    const cacheKey = `${ResponseCache.key(endpoint.service, pathParams, endpointQuery)}${greeks === 'computed' ? '|greeks=computed' : ''}`;
    const done = (status: Evaluation['status'], result: EndpointResult | undefined, cachedHit = false) => ({
      status,
      result,
      mode: resolved,
      asOf,
      cachedHit,
    });

    if (resolved === 'cached') {
      const entry = this.cache.get(cacheKey);
      const maxAge = parseMaxAge(query['maxage'] ?? query['maxAge'], nowSeconds);
      const fresh =
        entry !== undefined && entry.snapshotSeconds <= nowSeconds && entry.snapshotSeconds >= maxAge;
      return fresh ? done(203, entry.answer, true) : done(204, undefined);
    }
    const cutoff = asOf.kind === 'current' ? asOf.cutoffSeconds : undefined;
    const live = resolved === 'live' || resolved === 'delayed';
    const entry = cutoff === undefined || !live ? undefined : this.cache.get(cacheKey);
    if (entry !== undefined && entry.cutoffSeconds === cutoff) return done(203, entry.answer);
    const result = await this.run(endpoint, pathParams, endpointQuery, asOf, resolved, nowSeconds, greeks);
    if (result.kind === 'ok' && cutoff !== undefined && live) {
      this.cache.set(cacheKey, {
        answer: result,
        snapshotSeconds: result.dataAsOfSeconds ?? cutoff,
        cutoffSeconds: cutoff,
      });
    }
    return done(200, result);
  }

  /**
   * Runs an endpoint at an as-of the caller resolved (the backtest face's dated requests, judged by
   * known-at rather than refused), bypassing modes and the response cache.
   */
  answerAt(
    endpoint: Endpoint,
    pathParams: Readonly<Record<string, string>>,
    query: Readonly<Record<string, string>>,
    asOf: AsOf,
    mode: Mode,
    nowSeconds: number,
    greeks: GreeksSource = this.options.greeks ?? 'vendor',
  ): Promise<EndpointResult> {
    return this.run(endpoint, pathParams, endpointParams(query, true), asOf, mode, nowSeconds, greeks);
  }

  private run(
    endpoint: Endpoint,
    path: Readonly<Record<string, string>>,
    query: Readonly<Record<string, string>>,
    asOf: AsOf,
    mode: Mode,
    nowSeconds: number,
    greeks: GreeksSource,
  ): Promise<EndpointResult> {
    return endpoint.run({
      sql: this.options.sql,
      cache: this.storeCache,
      nowSeconds,
      path,
      query,
      asOf,
      mode,
      greeks,
    });
  }

  /** Closes what the service holds open (its request log file). */
  close(): Promise<void> {
    return this.ledger.close();
  }

  /** The account a token names (the local account when the service has no accounts file). */
  authenticate(token: string | undefined): Account | undefined {
    const book = this.options.accounts;
    if (book === undefined) return LOCAL_ACCOUNT;
    return token === undefined || token === '' ? undefined : book.find(token);
  }

  /** Clock instant T of a request: its `now` option, else the service's clock; undefined if unreadable. */
  readNow(now: unknown): number | undefined {
    if (now === undefined) return this.clock.nowSeconds();
    return readInstant(now, this.clock);
  }

  private async answer(
    endpoint: Endpoint,
    pathParams: Record<string, string>,
    query: Record<string, string>,
    output: OutputOptions,
    account: Account,
    nowSeconds: number,
    loggedPath: string,
    ip: string | undefined,
  ): Promise<ApiResponse> {
    const boundIp = this.ledger.checkDevice(account, ip, nowSeconds);
    if (boundIp !== undefined) {
      throw refusal(403, MULTIPLE_DEVICES, 'multiple-ip-addresses', { authorizedIP: boundIp, blockedIP: ip });
    }
    if (this.ledger.remaining(account, nowSeconds) < 1) {
      throw refusal(429, 'API credit limit reached for current window.', 'running-out-of-credits');
    }
    if (!this.ledger.enter(account)) {
      throw refusal(
        429,
        'Too many concurrent requests. Please reduce parallel requests and retry.',
        'too-many-concurrent-requests',
      );
    }
    try {
      const evaluation = await this.evaluate(endpoint, pathParams, query, account, nowSeconds);
      const result = evaluation.result;
      if (result === undefined)
        return await this.finish(account, loggedPath, 204, 0, nowSeconds, '', undefined);
      if (result.kind === 'no_data') {
        const rendered = renderNoData(result, output);
        return await this.finish(
          account,
          loggedPath,
          rendered.status,
          0,
          nowSeconds,
          rendered.body,
          rendered.contentType,
        );
      }
      const { fields, kept } = keep(result, output);
      const credits = creditsFor(
        result.billing,
        kept.rows,
        kept.keys.length > 0 ? kept.keys : allKeys(result),
        evaluation.cachedHit,
      );
      const rendered = renderAnswer(result, fields, output);
      return await this.finish(
        account,
        loggedPath,
        evaluation.status,
        credits,
        nowSeconds,
        rendered.body,
        rendered.contentType,
        // Not the service's figures: say so beside them.
        result.greeksComputed ? { [GREEKS_HEADER]: 'computed' } : undefined,
      );
    } finally {
      this.ledger.leave(account);
    }
  }

  private async finish(
    account: Account,
    loggedPath: string,
    status: number,
    credits: number,
    nowSeconds: number,
    body: string,
    contentType: string | undefined,
    extra?: Readonly<Record<string, string>>,
  ): Promise<ApiResponse> {
    const entry = await this.ledger.record(account, loggedPath, status, credits, nowSeconds);
    const headers: Record<string, string> = { ...BASE_HEADERS, ...extra };
    if (contentType !== undefined) headers['Content-Type'] = contentType;
    Object.assign(headers, this.ledger.headers(account, nowSeconds, credits), rayHeaders(entry));
    return { status, headers, body, credits };
  }

  private route(path: string) {
    try {
      return this.router.match(path);
    } catch {
      throw new MarketDataError(400, 'Malformed URL: a percent escape in the path could not be decoded.');
    }
  }

  /**
   * A free answer (`/headers/`, `/status/`): no credits, no log entry. A request whose token names an
   * account also gets its rate-limit headers, which some official SDKs read on every success (the
   * Python SDK's 1.3.0 fails without them).
   */
  private plain(status: number, body: unknown, account?: Account, nowSeconds = 0): ApiResponse {
    return {
      status,
      headers: {
        ...BASE_HEADERS,
        'Content-Type': 'application/json',
        ...(account === undefined ? {} : this.ledger.headers(account, nowSeconds, 0)),
      },
      body: JSON.stringify(body),
      credits: 0,
    };
  }

  private userResponse(account: Account, nowSeconds: number): ApiResponse {
    const cap = account.userType !== 'nonpro' ? 'historical' : account.opra ? 'realtime' : 'delayed';
    return {
      status: 200,
      headers: {
        ...BASE_HEADERS,
        'Content-Type': 'application/json',
        ...this.ledger.headers(account, nowSeconds, 0),
      },
      body: JSON.stringify({
        'x-ratelimit-requests-remaining': this.ledger.remaining(account, nowSeconds),
        'x-ratelimit-requests-limit': account.credits.limit,
        'x-options-data-permissions': cap,
      }),
      credits: 0,
    };
  }

  private statusBody(nowSeconds: number): unknown {
    const services = [...new Set(this.options.endpoints.map((e) => e.service))].sort();
    return {
      s: 'ok',
      service: services,
      status: services.map(() => 'online'),
      online: services.map(() => true),
      uptimePct30d: services.map(() => 1),
      uptimePct90d: services.map(() => 1),
      updated: services.map(() => Math.floor(nowSeconds)),
    };
  }
}

const MULTIPLE_DEVICES =
  'Access denied. Only one device is permitted. Your IP address has changed, and your account is temporarily blocked for security reasons. Please wait 5 minutes before trying again.';

/** A refusal with the service's body: the message, any extra keys, and its troubleshooting guide. */
function refusal(
  status: number,
  errmsg: string,
  guide: string,
  extra: Record<string, unknown> = {},
): MarketDataError {
  return new MarketDataError(status, errmsg, {
    body: {
      s: 'error',
      errmsg,
      ...extra,
      troubleshootingGuide: `https://www.marketdata.app/docs/api/troubleshooting/${guide}`,
    },
  });
}

function allKeys(answer: Answer): string[] {
  return answer.fields.map((f) => f.key);
}

/** The web server's HTML 400 for a request line over {@link MAX_REQUEST_LINE} bytes (specification §7). */
export function requestLineTooLarge(size: number): ApiResponse {
  return {
    status: 400,
    headers: { 'Content-Type': 'text/html' },
    body: `<html><head><title>Bad Request</title></head><body><h1><p>Bad Request</p></h1>Request Line is too large (${size} > ${MAX_REQUEST_LINE})</body></html>`,
    credits: 0,
  };
}

function rayHeaders(entry: { ray: string; logId: number } | undefined): Record<string, string> {
  if (entry === undefined) return {};
  return { 'CF-Ray': entry.ray, 'X-Api-Response-Log-Id': String(entry.logId) };
}

/** The parameters an endpoint reads: the query without the universal ones (and `date` once resolved). */
function endpointParams(
  query: Readonly<Record<string, string>>,
  withoutDate: boolean,
): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(query)) {
    if (!(withoutDate && k === 'date') && !(UNIVERSAL_KEYS as readonly string[]).includes(k)) out[k] = v;
  }
  return out;
}

/**
 * Header names in lower case; values that are not text are left out, and an object that throws when read
 * (a getter, a proxy) gives what was read before (a caller's mistake, not a crash).
 */
function lowerCaseKeys(headers: unknown): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (headers === null || typeof headers !== 'object') return out;
  try {
    for (const [k, v] of Object.entries(headers)) if (typeof v === 'string') out[k.toLowerCase()] = v;
  } catch {
    // keep what was read
  }
  return out;
}

/** The latest instant the clock accepts: the calendar ends in 2035; beyond this no answer means anything. */
const MAX_INSTANT_SECONDS = 4_102_444_800; // 2100-01-01

/**
 * Reads a clock instant: epoch seconds, a Date, or an instant in any input form. A bare date, NaN,
 * ±Infinity, an instant outside 1970–2100 or anything else gives undefined.
 */
export function readInstant(now: unknown, clock: Clock = systemClock): number | undefined {
  let seconds: number | undefined;
  if (typeof now === 'number') seconds = now;
  else if (now instanceof Date) seconds = now.getTime() / 1000;
  else if (typeof now === 'string') {
    try {
      const parsed = parseDateInput(now, clock);
      if (parsed.kind === 'instant') seconds = parsed.tsSeconds;
    } catch {
      seconds = undefined;
    }
  }
  if (seconds === undefined || !Number.isFinite(seconds)) return undefined;
  return seconds >= 0 && seconds < MAX_INSTANT_SECONDS ? seconds : undefined;
}

/** The 400 for a clock instant that cannot be read (a caller's mistake in `now`). */
function invalidNow(now: unknown): ApiResponse {
  const shown =
    typeof now === 'string'
      ? `'${now.slice(0, 40)}'`
      : typeof now === 'number' || typeof now === 'bigint' || typeof now === 'boolean' || now === null
        ? String(now).slice(0, 40)
        : now instanceof Date
          ? 'Invalid Date'
          : `of type ${typeof now}`; // an object's own text could throw: never ask it
  const errmsg = `Invalid clock instant ${shown}: give epoch seconds, a Date, or a date and time such as 2020-03-16T15:45:00-04:00.`;
  return {
    status: 400,
    headers: { ...BASE_HEADERS, 'Content-Type': 'application/json' },
    body: JSON.stringify({ s: 'error', errmsg }),
    credits: 0,
  };
}

/** The token-shaped parts of a path a request log may not keep: `token=…` and the request's own token. */
const TOKEN_PARAMETER = /(token=)[^&/?#;]*/gi;

/** A path fit for the request log: `token=` values and the request's token (8+ characters) replaced. */
export function withoutTokens(path: string, token: string | undefined): string {
  let out = path.replace(TOKEN_PARAMETER, '$1[redacted]');
  if (token !== undefined && token.length >= 8) {
    out = out.split(token).join('[redacted]');
    const escaped = encodeURIComponent(token);
    if (escaped !== token) out = out.split(escaped).join('[redacted]');
  }
  return out;
}

function bearer(value: string | undefined): string | undefined {
  const match = value === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match?.[1];
}

/** The `/headers/` echo: lower-case names, the token redacted but for its last four characters. */
function echoHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(headers)) {
    if (k === 'authorization') {
      const token = bearer(v) ?? v;
      out[k] = `Bearer ${'*'.repeat(Math.max(0, token.length - 4))}${token.slice(-4)}`;
    } else out[k] = v;
  }
  return out;
}

const RELATIVE_AGE = /^(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?)$/i;

/** The oldest snapshot instant `maxage` accepts: relative (`30s`, `5min`, `1h`, `2d`) or an absolute instant. */
function parseMaxAge(text: string | undefined, nowSeconds: number): number {
  if (text === undefined || text === '') return Number.NEGATIVE_INFINITY;
  const relative = RELATIVE_AGE.exec(text.trim());
  if (relative !== null) {
    const unit = relative[2]!.toLowerCase();
    const seconds = unit.startsWith('s')
      ? 1
      : unit.startsWith('m')
        ? 60
        : unit.startsWith('h')
          ? 3600
          : 86_400;
    return nowSeconds - Number(relative[1]) * seconds;
  }
  try {
    const parsed = parseDateInput(text, fixedClock(nowSeconds));
    if (parsed.kind === 'instant') return parsed.tsSeconds;
  } catch {
    // fall through to the 400 below
  }
  throw new MarketDataError(
    400,
    `Invalid maxage '${text}'. Use a duration such as 30s, 5min, 1h or 2d, or a date and time.`,
  );
}
