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
import { storeClosedError } from '../errors.js';
import { type Clock, systemClock } from '../market-time/index.js';
import type { AsOf } from '../pit/as-of.js';
import type { Answer, Endpoint, EndpointResult, GreeksSource, Mode } from '../query/types.js';
import { StoreCache } from '../store/cache.js';
import type { SqlSession } from '../store/sql.js';
import { failureOf, REFUSALS } from './errors.js';
import {
  answerPieces,
  contentTypeOf,
  keep,
  type OutputOptions,
  parseOutputOptions,
  renderError,
  renderNoData,
} from './format.js';
import { parseMaxAge, readInstant } from './instant.js';
import { Budget, DEFAULT_LIMITS, type ServiceLimits } from './limits.js';
import { parseMode, resolveFreshness } from './modes.js';
import { endpointParams, lowerCaseKeys } from './query.js';
import { type RenderedAnswer, ResponseCache } from './response-cache.js';
import {
  type ApiResponse,
  BASE_HEADERS,
  invalidNow,
  MAX_REQUEST_LINE,
  rayHeaders,
  requestLineTooLarge,
} from './responses.js';
import { Router } from './router.js';
import { bearer, echoHeaders, withoutTokens } from './secrets.js';

export { statusText } from './errors.js';
export { readInstant } from './instant.js';
export { DEFAULT_LIMITS, type ServiceLimits } from './limits.js';
export { type ApiResponse, MAX_REQUEST_LINE, requestLineTooLarge } from './responses.js';
export { withoutTokens } from './secrets.js';

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
  /** Bounds on one request's rows, bytes and time (default {@link DEFAULT_LIMITS}). */
  readonly limits?: Partial<ServiceLimits>;
  /** Bytes the response cache may hold (default 64 MB). */
  readonly responseCacheBytes?: number;
};

/** The header that marks IV and Greeks computed from the quotes rather than the vendor's. */
export const GREEKS_HEADER = 'X-Pitchain-Greeks';

/** What `evaluate` found: the endpoint's answer (or none, for a cache miss) and how it was reached. */
export type Evaluation = {
  /** 200 fresh, 203 from the response cache, 204 a `mode=cached` miss (no result). */
  readonly status: 200 | 203 | 204;
  readonly result: EndpointResult | undefined;
  readonly mode: Mode;
  readonly asOf: AsOf;
  /** Whether this was a `mode=cached` hit (billed 1 per request). */
  readonly cachedHit: boolean;
  /** The response cache's key when `result` is the answer it keeps (its printed bodies are kept there too). */
  readonly cacheKey?: string;
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
  /** The bounds on one request's work. */
  readonly limits: ServiceLimits;
  /** Set by `close`. */
  private closed = false;

  constructor(private readonly options: ApiOptions) {
    this.router = new Router(options.endpoints);
    this.ledger = new Ledger(options.ledgerFile);
    this.clock = options.clock ?? systemClock;
    const storeCache = options.cache ?? new StoreCache(() => 'unversioned');
    this.storeCache = storeCache;
    this.cache = new ResponseCache(() => storeCache.currentVersion, options.responseCacheBytes);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  /** The response cache (its size, for `/status/` and the benchmarks). */
  get responseCache(): ResponseCache {
    return this.cache;
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

    const budget = new Budget(this.limits);
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
      if (account === undefined) throw REFUSALS.unauthorized();
      if (malformed) throw REFUSALS.malformedUrl();
      if (/^\/user\/?$/i.test(path)) return this.userResponse(account, nowSeconds);
      const match = this.route(path);
      if (match === undefined) throw REFUSALS.noEndpoint(path);
      return await this.answer(
        budget,
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
      // A message that echoes what the caller sent never echoes a token.
      const body =
        typeof failure.body.errmsg === 'string'
          ? { ...failure.body, errmsg: withoutTokens(failure.body.errmsg, token) }
          : failure.body;
      const rendered = renderError(body, output);
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
        headers: {
          ...BASE_HEADERS,
          'Content-Type': rendered.contentType,
          ...extra,
          ...failure.headers,
          ...rayHeaders(entry),
        },
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
    if (this.closed) throw storeClosedError();
    const mode = parseMode(query['mode'] ?? query['feed']);
    const { mode: resolved, asOf } = resolveFreshness(endpoint, account, mode, query['date'], nowSeconds);
    const endpointQuery = endpointParams(query, asOf.kind === 'dated');
    const cutoff = asOf.kind === 'current' ? asOf.cutoffSeconds : undefined;
    const live = resolved === 'live' || resolved === 'delayed';
    // `mode=cached` and a current live or delayed answer use the cache (semantics §5); so does a dated
    // answer, which no instant changes within a data version, kept apart by its session (a relative `date`
    // keeps its raw text in the key) so that `mode=cached` never finds it. No other request is keyed (the
    // key parses the parameters once more).
    const dated = asOf.kind === 'dated' ? asOf.session : undefined;
    const key =
      resolved === 'cached' || (cutoff !== undefined && live) || dated !== undefined
        ? ResponseCache.key(endpoint, pathParams, endpointQuery, nowSeconds)
        : undefined;
    // Computed Greeks make another answer than the vendor's: they are kept apart.
    const cacheKey =
      key === undefined
        ? undefined
        : `${key}${dated === undefined ? '' : `|dated=${dated}`}${greeks === 'computed' ? '|greeks=computed' : ''}`;
    const done = (
      status: Evaluation['status'],
      result: EndpointResult | undefined,
      cachedHit = false,
      kept = false,
    ): Evaluation => ({
      status,
      result,
      mode: resolved,
      asOf,
      cachedHit,
      ...(kept && cacheKey !== undefined ? { cacheKey } : {}),
    });

    if (resolved === 'cached') {
      const entry = cacheKey === undefined ? undefined : this.cache.get(cacheKey);
      const maxAge = parseMaxAge(query['maxage'] ?? query['maxAge'], nowSeconds);
      const fresh =
        entry !== undefined && entry.snapshotSeconds <= nowSeconds && entry.snapshotSeconds >= maxAge;
      return fresh ? done(203, entry.answer, true, true) : done(204, undefined);
    }
    const entry = cacheKey === undefined ? undefined : this.cache.get(cacheKey);
    // A dated answer kept is the answer itself, as computed (200); a live one at the same cutoff is a 203.
    if (entry !== undefined && dated !== undefined) return done(200, entry.answer, false, true);
    if (entry !== undefined && entry.cutoffSeconds === cutoff) return done(203, entry.answer, false, true);
    const result = await this.run(endpoint, pathParams, endpointQuery, asOf, resolved, nowSeconds, greeks);
    // An answer that was running when the service closed is given, not kept.
    const keep = !this.closed && cacheKey !== undefined && (cutoff !== undefined || dated !== undefined);
    if (result.kind === 'ok' && keep) {
      // A dated answer serves no `mode=cached` request, only a repeat: kept once asked again (`admit`).
      if (dated !== undefined && !this.cache.admit(cacheKey)) return done(200, result);
      this.cache.set(cacheKey, {
        answer: result,
        snapshotSeconds: result.dataAsOfSeconds ?? cutoff ?? 0,
        cutoffSeconds: cutoff ?? Number.NaN,
      });
      return done(200, result, false, true);
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
    if (this.closed) return Promise.reject(storeClosedError());
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

  /**
   * Closes what the service holds open (its request log file) and lets go of what it keeps (both caches,
   * which a closed store must not keep answering from): every later evaluation throws
   * {@link storeClosedError}.
   */
  close(): Promise<void> {
    this.closed = true;
    this.cache.clear();
    this.storeCache.clear();
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
    budget: Budget,
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
    if (boundIp !== undefined) throw REFUSALS.multipleDevices(boundIp, ip);
    await this.ledger.ready;
    if (this.ledger.remaining(account, nowSeconds) < 1) throw REFUSALS.outOfCredits();
    if (!this.ledger.enter(account)) throw REFUSALS.tooManyConcurrent();
    try {
      const evaluation = await this.evaluate(endpoint, pathParams, query, account, nowSeconds);
      budget.check();
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
      budget.checkRows(result.fields[0]?.values.length ?? 0);
      const rendered = await this.render(budget, result, output, evaluation.cacheKey);
      const credits = creditsFor(
        result.billing,
        rendered.rows,
        rendered.keys.length > 0 ? rendered.keys : allKeys(result),
        evaluation.cachedHit,
      );
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

  /**
   * An answer printed for the request's output options: printed a piece at a time, so a heavy answer lets
   * other requests run, and refused once too large; or, for an answer the response cache keeps, the body
   * printed for the same options before.
   */
  private async render(
    budget: Budget,
    result: Answer,
    output: OutputOptions,
    cacheKey: string | undefined,
  ): Promise<RenderedAnswer> {
    const outputKey = cacheKey === undefined ? '' : JSON.stringify(output);
    const printed = cacheKey === undefined ? undefined : this.cache.rendered(cacheKey, result, outputKey);
    if (printed !== undefined) return printed;
    const { fields, kept } = keep(result, output);
    const body = await budget.join(answerPieces(result, fields, output));
    const rendered = { body, contentType: contentTypeOf(output), rows: kept.rows, keys: kept.keys };
    if (cacheKey !== undefined) this.cache.keepRendered(cacheKey, result, outputKey, rendered);
    return rendered;
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
      throw REFUSALS.badEscape();
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

  /** `/status/`: every service online, or `degraded` while the request log cannot be written. */
  private statusBody(nowSeconds: number): unknown {
    const services = [...new Set(this.options.endpoints.map((e) => e.service))].sort();
    const state = this.ledger.degraded ? 'degraded' : 'online';
    return {
      s: 'ok',
      service: services,
      status: services.map(() => state),
      online: services.map(() => true),
      uptimePct30d: services.map(() => 1),
      uptimePct90d: services.map(() => 1),
      updated: services.map(() => Math.floor(nowSeconds)),
    };
  }
}

function allKeys(answer: Answer): string[] {
  return answer.fields.map((f) => f.key);
}
