/**
 * The library face: `openStore(dir)` gives typed endpoint functions (`store.options.chain(…)` →
 * `QueryResult`), `store.request(path)` (the service's exact status, headers and body), and `store.at(T)`
 * (the backtest face). All of them are answered by the same endpoints over the same store and cache.
 */
import { type Account, AccountBook } from '../billing/accounts.js';
import { MarketDataError, storeClosedError, UsageError } from '../errors.js';
import { type Clock, fixedClock, systemClock } from '../market-time/index.js';
import { type OptionSide, tryParseOccSymbol } from '../occ/index.js';
import { parsePolicy } from '../pit/policy.js';
import { ENDPOINTS } from '../query/endpoints/index.js';
import {
  type ContractTable,
  contractAt,
  contractTable,
  indexOfContract,
} from '../query/options/contract-table.js';
import { underlyingOfContract } from '../query/options/contract-underlying.js';
import { announceSessionLoop } from '../query/options/read-ahead.js';
import type { GreeksSource } from '../query/types.js';
import {
  Api,
  type ApiResponse,
  type RequestOptions,
  readInstant,
  type ServiceLimits,
} from '../service/service.js';
import { StoreCache } from '../store/cache.js';
import { ReaderLease } from '../store/lease.js';
import { type OpenStoreOptions as ReaderOptions, StoreReader } from '../store/store.js';
import { type StoreSummary, summarizeStore } from '../store/summary.js';
import { libraryError, noDataOf, toResult } from './answer.js';
import {
  type Ask,
  type CallOptions,
  type MarketFunctions,
  marketFunctions,
  type OptionFunctions,
  optionFunctions,
  type StockFunctions,
  stockFunctions,
} from './face.js';
import { Follower } from './follow.js';
import { toQuery } from './params.js';
import type { Columns, QueryResult } from './result.js';
import { PointInTimeView, type ViewOptions } from './view.js';

/** How to open a store. */
export type OpenOptions = ReaderOptions & {
  /** The default clock instant T for requests that name none: an instant, or omit for real time. */
  readonly now?: number | Date | string;
  /**
   * Accounts (tokens → plan, entitlements, credits): the path of an accounts file, or an `AccountBook`;
   * default: every request is the local account.
   */
  readonly accounts?: string | AccountBook;
  /** Append every request-log entry to this JSON-lines file. */
  readonly ledgerFile?: string;
  /** The token the typed functions and `at()` act for (needed only with an accounts file). */
  readonly token?: string;
  /**
   * `computed`: every option answer's IV and Greeks computed point-in-time from its quotes (marked by
   * `meta.greeks` and the `X-Pitchain-Greeks` header), also on dated requests where the service serves
   * none; `vendor` (default): the service's own rule.
   */
  readonly greeks?: GreeksSource;
  /** The bytes the session cache (sessions' rows read, shared by loops and random requests) may hold. */
  readonly sessionCacheBytes?: number;
  /**
   * Follow new commits: before each request a cheap check of the manifest; when a writer committed, the
   * store moves to the new version once the requests in flight have finished on theirs (new ones wait for
   * the move). Default false (a notebook or backtest keeps the version it opened); `pitchain serve` follows.
   */
  readonly follow?: boolean;
  /** Bounds on one request's rows, bytes and time (see `ServiceLimits`). */
  readonly limits?: Partial<ServiceLimits>;
  /** Bytes the response cache may hold (default 64 MB). */
  readonly responseCacheBytes?: number;
};

/** A stock split: on `exDate` one share of `symbol` became `ratio` shares. */
export type Split = { readonly symbol: string; readonly exDate: string; readonly ratio: number };

/** An option contract's terms as the store lists them. */
export type ContractTerms = {
  readonly symbol: string;
  readonly underlying: string;
  readonly root: string;
  readonly expiration: string;
  readonly side: OptionSide;
  readonly strike: number;
  readonly settlement: 'AM' | 'PM';
};

const CONTRACT_TERMS_SQL = `SELECT option_symbol AS symbol, underlying, root, CAST(expiration AS VARCHAR) AS expiration,
  side, CAST(strike AS DOUBLE) AS strike, settlement FROM contracts`;

/** The terms of contract `index` of an underlying's contract table, or undefined for -1. */
function termsAt(table: ContractTable, index: number): ContractTerms | undefined {
  if (index === -1) return undefined;
  const {
    option_symbol: symbol,
    underlying,
    root,
    expiration,
    side,
    strike,
    settlement,
  } = contractAt(table, index);
  return { symbol, underlying, root, expiration, side, strike, settlement };
}

/**
 * A store's reader and service, for the project's own code over it (the command line, the endpoint pages,
 * benches, tests): internals, kept off the public `Store` and not exported from the package root.
 */
export type StoreInternals = { readonly reader: StoreReader; readonly api: Api };

let internalsOf: (store: Store) => StoreInternals;

/** The reader and service of an opened store (see {@link StoreInternals}). */
export function storeInternals(store: Store): StoreInternals {
  return internalsOf(store);
}

/** An opened store: read-only, safe beside other readers and one writer. */
export class Store {
  /** Option chains, quotes, lookup, expirations and strikes, as typed results. */
  readonly options: OptionFunctions;
  /** Stock candles, bulk candles, quotes and prices, as typed results. */
  readonly stocks: StockFunctions;
  /** Market status by date, as a typed result. */
  readonly markets: MarketFunctions;

  readonly #reader: StoreReader;
  readonly #api: Api;
  /** Set by `close`: every later call throws. */
  #closed = false;

  static {
    internalsOf = (store) => ({ reader: store.#reader, api: store.#api });
  }

  private constructor(
    reader: StoreReader,
    api: Api,
    private readonly cache: StoreCache,
    private readonly clock: Clock,
    private readonly token: string | undefined,
    private readonly follower: Follower,
  ) {
    this.#reader = reader;
    this.#api = api;
    const ask: Ask = (question, options) => this.ask(question, options);
    this.options = optionFunctions(ask);
    this.stocks = stockFunctions(ask);
    this.markets = marketFunctions(ask);
  }

  /** Opens the store in `dir` read-only. */
  static async open(dir: string, options: OpenOptions = {}): Promise<Store> {
    const {
      now,
      accounts,
      ledgerFile,
      token,
      greeks,
      sessionCacheBytes,
      follow,
      limits,
      responseCacheBytes,
      ...readerOptions
    } = options;
    const clock = clockFor(now);
    const reader = await StoreReader.open(dir, readerOptions);
    try {
      const book =
        accounts === undefined || accounts instanceof AccountBook
          ? accounts
          : await AccountBook.load(accounts);
      const cache = new StoreCache(
        () => reader.dataVersion,
        sessionCacheBytes === undefined ? {} : { sessionCacheBytes },
      );
      const api = new Api({
        sql: reader.sql,
        cache,
        endpoints: ENDPOINTS,
        clock,
        ...(book === undefined ? {} : { accounts: book }),
        ...(ledgerFile === undefined ? {} : { ledgerFile }),
        ...(greeks === undefined ? {} : { greeks: parseGreeks(greeks) }),
        ...(limits === undefined ? {} : { limits }),
        ...(responseCacheBytes === undefined ? {} : { responseCacheBytes }),
      });
      const follower = new Follower(reader, ReaderLease.take(reader.dir, reader.manifest), follow === true);
      return new Store(reader, api, cache, clock, token, follower);
    } catch (error) {
      reader.close();
      throw error;
    }
  }

  /** The data version (content hash) this store answers from. */
  get dataVersion(): string {
    return this.#reader.dataVersion;
  }

  /** Answers `GET <path?query>` exactly as the service would: status, headers, body text, credits. */
  request(target: string, options?: RequestOptions): Promise<ApiResponse> {
    // The service answers every request, a failure as its 500; a closed store is the caller's mistake.
    if (this.#closed) return Promise.reject(storeClosedError());
    return this.follower.during(() => this.#api.request(target, options));
  }

  /** What the store holds: data version, tables, underlyings, sessions, provenance. */
  summary(): Promise<StoreSummary> {
    if (this.#closed) return Promise.reject(storeClosedError());
    return summarizeStore(this.#reader);
  }

  /**
   * Announces a session loop over `from`…`to` (Eastern dates): the first option request inside the period
   * reads the rest of it ahead in one scan per underlying. A backtest runner calls it for its period;
   * answers are the same with or without it.
   */
  announceSessionLoop(from: string, to: string): void {
    this.#checkOpen();
    announceSessionLoop(this.cache, from, to);
  }

  /** The stock splits the store holds, in ex-date order: on `exDate` one share became `ratio` shares. */
  async splits(): Promise<Split[]> {
    this.#checkOpen();
    return this.#reader.sql.all<Split>(
      `SELECT symbol, CAST(ex_date AS VARCHAR) AS "exDate", CAST(ratio AS DOUBLE) AS ratio
       FROM splits ORDER BY ex_date, symbol`,
    );
  }

  /**
   * The terms of listed option contracts (underlying, root, expiration, side, strike, AM/PM settlement),
   * for the symbols the store lists; others are left out. Terms do not change over a contract's life.
   */
  async contracts(symbols: readonly string[]): Promise<ContractTerms[]> {
    this.#checkOpen();
    const found: ContractTerms[] = [];
    for (const symbol of [...new Set(symbols)].sort()) {
      const parsed = tryParseOccSymbol(symbol);
      if (parsed === undefined) continue;
      // Each underlying's contracts are read once per data version (a run asks again and again): the
      // table of the underlying the store files the root under, which the option reads keep already.
      const underlying = await underlyingOfContract(this.#reader.sql, this.cache, symbol, parsed.root);
      const table =
        underlying === undefined ? undefined : await contractTable(this.#reader.sql, this.cache, underlying);
      let terms = table === undefined ? undefined : termsAt(table, indexOfContract(table, symbol));
      if (terms === undefined && underlying === undefined) {
        // A root listed under more than one underlying (or none): the contract's own row says.
        [terms] = await this.#reader.sql.all<ContractTerms>(
          `${CONTRACT_TERMS_SQL} WHERE option_symbol = $symbol`,
          { symbol },
        );
      }
      if (terms !== undefined) found.push(terms);
    }
    return found;
  }

  /** Moves to the newest committed version of the store; returns whether it changed. */
  refresh(): Promise<boolean> {
    if (this.#closed) return Promise.reject(storeClosedError());
    return this.follower.refresh();
  }

  /**
   * Releases the store's DuckDB, its open files, its reader lease and what it keeps in memory (its caches).
   * Every later call throws a `StoreError` (`the store is closed`), through views made before too;
   * closing again does nothing.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.follower.close();
    void this.#api.close();
    this.#reader.close();
  }

  /**
   * The backtest face at decision instant T: the same functions, every answer judged against what was
   * known at T by the policy (`strict` by default: a value known after T throws `LookAheadError`).
   */
  at(instant: number | Date | string, options: ViewOptions = {}): PointInTimeView {
    this.#checkOpen();
    const T = readInstant(instant, this.clock);
    if (T === undefined) throw invalidInstant(instant);
    return new PointInTimeView(
      { api: this.#api, dataVersion: this.dataVersion, account: this.account(this.token) },
      T,
      parsePolicy(options.policy),
      options.greeks === undefined ? undefined : parseGreeks(options.greeks),
    );
  }

  #checkOpen(): void {
    if (this.#closed) throw storeClosedError();
  }

  private account(token: string | undefined): Account {
    const account = this.#api.authenticate(token);
    if (account === undefined) {
      throw new MarketDataError(401, 'Unauthorized. Open the store with a token of its accounts file.');
    }
    return account;
  }

  private async ask<C extends Columns>(
    question: Parameters<Ask>[0],
    options: CallOptions = {},
  ): Promise<QueryResult<C>> {
    const nowSeconds = this.#api.readNow(options.now);
    if (nowSeconds === undefined) throw invalidInstant(options.now);
    const account = this.account(options.token ?? this.token);
    const endpoint = this.#api.endpoint(question.service, Object.keys(question.path));
    try {
      const evaluation = await this.follower.during(() =>
        this.#api.evaluate(endpoint, question.path, toQuery(question.params), account, nowSeconds),
      );
      return toResult<C>(evaluation.result, {
        asOfSeconds: nowSeconds,
        dataVersion: this.dataVersion,
        mode: evaluation.mode,
        status: evaluation.status,
        cachedHit: evaluation.cachedHit,
        service: question.service,
      });
    } catch (error) {
      const none = noDataOf(error);
      if (none === undefined) throw libraryError(error);
      // Only a dated request is refused as no data (a closed date): it runs historical, or eod if asked.
      const mode = question.params.mode === 'eod' ? 'eod' : 'historical';
      const context = { asOfSeconds: nowSeconds, dataVersion: this.dataVersion, mode, status: 200 } as const;
      return toResult<C>(none, { ...context, cachedHit: false, service: question.service });
    }
  }
}

/** The Greeks source an option names, refusing anything else. */
export function parseGreeks(value: unknown): GreeksSource {
  if (value === 'vendor' || value === 'computed') return value;
  throw new UsageError(`greeks must be 'vendor' or 'computed', not ${JSON.stringify(value)}`);
}

/** Opens a store for reading (see `Store`). */
export function openStore(dir: string, options?: OpenOptions): Promise<Store> {
  return Store.open(dir, options);
}

function clockFor(now: OpenOptions['now']): Clock {
  if (now === undefined) return systemClock;
  const seconds = readInstant(now, systemClock);
  if (seconds === undefined) throw invalidInstant(now);
  return fixedClock(seconds);
}

/** The error for a clock instant that cannot be read. */
function invalidInstant(value: unknown): UsageError {
  return new UsageError(
    `Invalid instant ${JSON.stringify(value) ?? String(value)}: give epoch seconds, a Date, or a date and time such as 2020-03-16T15:45:00-04:00.`,
  );
}
