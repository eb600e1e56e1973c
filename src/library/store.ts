/**
 * The library face: `openStore(dir)` gives typed endpoint functions (`store.options.chain(…)` →
 * `QueryResult`), `store.request(path)` (the service's exact status, headers and body), and `store.at(T)`
 * (the backtest face). All of them are answered by the same endpoints over the same store and cache.
 */
import { type Account, AccountBook } from '../billing/accounts.js';
import { MarketDataError, UsageError } from '../errors.js';
import { type Clock, fixedClock, systemClock } from '../market-time/index.js';
import { parsePolicy } from '../pit/policy.js';
import { ENDPOINTS } from '../query/endpoints/index.js';
import { Api, type ApiResponse, type RequestOptions, readInstant } from '../service/service.js';
import { StoreCache } from '../store/cache.js';
import { type OpenStoreOptions as ReaderOptions, StoreReader } from '../store/store.js';
import { type StoreSummary, summarizeStore } from '../store/summary.js';
import { libraryError, toResult } from './answer.js';
import { type Ask, type CallOptions, marketFunctions, optionFunctions, stockFunctions } from './face.js';
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
};

/** An opened store: read-only, safe beside other readers and one writer. */
export class Store {
  /** Option chains, quotes, lookup, expirations and strikes, as typed results. */
  readonly options: ReturnType<typeof optionFunctions>;
  /** Stock candles, bulk candles, quotes and prices, as typed results. */
  readonly stocks: ReturnType<typeof stockFunctions>;
  /** Market status by date, as a typed result. */
  readonly markets: ReturnType<typeof marketFunctions>;

  private constructor(
    readonly reader: StoreReader,
    readonly api: Api,
    private readonly clock: Clock,
    private readonly token: string | undefined,
  ) {
    const ask: Ask = (question, options) => this.ask(question, options);
    this.options = optionFunctions(ask);
    this.stocks = stockFunctions(ask);
    this.markets = marketFunctions(ask);
  }

  /** Opens the store in `dir` read-only. */
  static async open(dir: string, options: OpenOptions = {}): Promise<Store> {
    const { now, accounts, ledgerFile, token, ...readerOptions } = options;
    const clock = clockFor(now);
    const reader = await StoreReader.open(dir, readerOptions);
    try {
      const book =
        accounts === undefined || accounts instanceof AccountBook
          ? accounts
          : await AccountBook.load(accounts);
      const api = new Api({
        sql: reader.sql,
        cache: new StoreCache(() => reader.dataVersion),
        endpoints: ENDPOINTS,
        clock,
        ...(book === undefined ? {} : { accounts: book }),
        ...(ledgerFile === undefined ? {} : { ledgerFile }),
      });
      return new Store(reader, api, clock, token);
    } catch (error) {
      reader.close();
      throw error;
    }
  }

  /** The data version (content hash) this store answers from. */
  get dataVersion(): string {
    return this.reader.dataVersion;
  }

  /** Answers `GET <path?query>` exactly as the service would: status, headers, body text, credits. */
  request(target: string, options?: RequestOptions): Promise<ApiResponse> {
    return this.api.request(target, options);
  }

  /** What the store holds: data version, tables, underlyings, sessions, provenance. */
  summary(): Promise<StoreSummary> {
    return summarizeStore(this.reader);
  }

  /** Moves to the newest committed version of the store; returns whether it changed. */
  refresh(): Promise<boolean> {
    return this.reader.refresh();
  }

  /** Releases the store's DuckDB. */
  close(): void {
    void this.api.close();
    this.reader.close();
  }

  /**
   * The backtest face at decision instant T: the same functions, every answer judged against what was
   * known at T by the policy (`strict` by default: a value known after T throws `LookAheadError`).
   */
  at(instant: number | Date | string, options: ViewOptions = {}): PointInTimeView {
    const T = readInstant(instant, this.clock);
    if (T === undefined) throw invalidInstant(instant);
    return new PointInTimeView(
      { api: this.api, dataVersion: this.dataVersion, account: this.account(this.token) },
      T,
      parsePolicy(options.policy),
    );
  }

  private account(token: string | undefined): Account {
    const account = this.api.authenticate(token);
    if (account === undefined) {
      throw new MarketDataError(401, 'Unauthorized. Open the store with a token of its accounts file.');
    }
    return account;
  }

  private async ask<C extends Columns>(
    question: Parameters<Ask>[0],
    options: CallOptions = {},
  ): Promise<QueryResult<C>> {
    const nowSeconds = this.api.readNow(options.now);
    if (nowSeconds === undefined) throw invalidInstant(options.now);
    const account = this.account(options.token ?? this.token);
    const endpoint = this.api.endpoint(question.service, Object.keys(question.path));
    try {
      const evaluation = await this.api.evaluate(
        endpoint,
        question.path,
        toQuery(question.params),
        account,
        nowSeconds,
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
      throw libraryError(error);
    }
  }
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
