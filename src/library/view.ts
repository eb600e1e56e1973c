/**
 * The backtest face (semantics §4): `store.at(T, { policy })` — the endpoint functions bound to decision
 * instant T, every answer judged field by field against what was known at T. `strict` refuses a request
 * whose answer holds a value known after T (`LookAheadError`), `mask` nulls such values and lists them,
 * `flag` keeps and lists them. A dated request for T's own session (or a later one) is judged by known-at
 * instead of being refused as "not a past date". Every request is written to the view's audit.
 */
import type { Account } from '../billing/accounts.js';
import { LookAheadError } from '../errors.js';
import { isSession } from '../market-time/index.js';
import type { AsOf } from '../pit/as-of.js';
import { knownAtByFamily, OPTION_FIELD_KNOWN_AT } from '../pit/known-at.js';
import { type JudgedColumn, judge, type LookAheadField, type LookAheadPolicy } from '../pit/policy.js';
import { isOptionAnswer, type OptionAnswer } from '../query/endpoints/option-answer.js';
import { MARKET_CLOSED } from '../query/no-data.js';
import type { AnswerKnownAt, OptionRecord } from '../query/options/records.js';
import { parseDateParam } from '../query/params.js';
import type { Answer, EndpointResult, GreeksSource, Mode } from '../query/types.js';
import type { Api } from '../service/service.js';
import { libraryError, toResult } from './answer.js';
import {
  type Ask,
  type MarketFunctions,
  marketFunctions,
  type OptionFunctions,
  optionFunctions,
  type Question,
  type StockFunctions,
  stockFunctions,
} from './face.js';
import { toQuery } from './params.js';
import type { Columns, QueryResult } from './result.js';

/** How a view judges what it serves. */
export type ViewOptions = {
  /** What to do with values known after T: `strict` (default) refuses, `mask` nulls, `flag` keeps. */
  readonly policy?: LookAheadPolicy;
  /**
   * `computed`: IV and Greeks computed point-in-time from each quote (a forward implied by put–call
   * parity, European or American model by the contract's style), in place of the vendor's; `vendor`
   * (default): the store's own figures, as the service serves them.
   */
  readonly greeks?: GreeksSource;
};

/** One request of a view, as its audit keeps it. */
export type AuditEntry = {
  /** The request as the service would be asked it. */
  readonly target: string;
  /** The decision instant T (epoch seconds). */
  readonly asOf: number;
  /** The latest known-at instant of the values served (null: none; a refused request served none). */
  readonly dataAsOf: number | null;
  /** The values known after T that the answer held (refused, masked or flagged by the policy). */
  readonly lookAhead: readonly LookAheadField[];
  /** Whether the policy refused the request. */
  readonly refused: boolean;
  /** The credits the service would bill for the request (0 when refused: nothing was served). */
  readonly credits: number;
};

/** The audit of a view: how many requests, how many held look-ahead, and each entry. */
export type Audit = {
  readonly requests: number;
  readonly lookAheadReads: number;
  /** The credits the same requests would have cost on the service. */
  readonly credits: number;
  readonly entries: readonly AuditEntry[];
};

/** What a view needs of its store. */
export type ViewHost = {
  readonly api: Api;
  readonly dataVersion: string;
  readonly account: Account;
};

/** The endpoint functions at decision instant T, judged by a look-ahead policy. */
export class PointInTimeView {
  /** Option chains, quotes, lookup, expirations and strikes as known at T. */
  readonly options: OptionFunctions;
  /** Stock candles, bulk candles, quotes and prices as known at T. */
  readonly stocks: StockFunctions;
  /** Market status as known at T. */
  readonly markets: MarketFunctions;
  private readonly entries: AuditEntry[] = [];

  constructor(
    private readonly host: ViewHost,
    /** The decision instant T (epoch seconds). */
    readonly asOfSeconds: number,
    /** The look-ahead policy. */
    readonly policy: LookAheadPolicy,
    /** Where option answers' IV and Greeks come from; the store's setting when undefined. */
    private readonly greeks?: GreeksSource,
  ) {
    const ask: Ask = (question) => this.ask(question);
    this.options = optionFunctions(ask);
    this.stocks = stockFunctions(ask);
    this.markets = marketFunctions(ask);
  }

  /** What this view was asked, and what of it was not known at T. */
  audit(): Audit {
    return {
      requests: this.entries.length,
      lookAheadReads: this.entries.filter((entry) => entry.lookAhead.length > 0).length,
      credits: this.entries.reduce((sum, entry) => sum + entry.credits, 0),
      entries: [...this.entries],
    };
  }

  private async ask<C extends Columns>(question: Question): Promise<QueryResult<C>> {
    const { api } = this.host;
    const T = this.asOfSeconds;
    const query = toQuery(question.params);
    const endpoint = api.endpoint(question.service, Object.keys(question.path));
    let result: EndpointResult | undefined;
    let status: 200 | 203 | 204 = 200;
    let cachedHit = false;
    let mode: Mode;
    let asOf: AsOf | undefined;
    try {
      const date = query['date'];
      if (endpoint.dated && date !== undefined && date !== '') {
        // Judged by known-at, not refused: the backtest face may ask for T's own session.
        asOf = { kind: 'dated', session: parseDateParam(date, T) };
        mode = 'historical';
        result = isSession(asOf.session)
          ? await api.answerAt(endpoint, question.path, query, asOf, mode, T, this.greeks)
          : MARKET_CLOSED;
      } else {
        const evaluation = await api.evaluate(
          endpoint,
          question.path,
          query,
          this.host.account,
          T,
          this.greeks,
        );
        ({ result, status, cachedHit, mode, asOf } = evaluation);
      }
    } catch (error) {
      throw libraryError(error);
    }
    const lookAhead: LookAheadField[] = [];
    let replaced: ReadonlyMap<string, readonly unknown[]> | undefined;
    if (result?.kind === 'ok') {
      try {
        const symbols = isOptionAnswer(result) ? symbolsOf(result) : undefined;
        const verdict = judge(T, this.policy, judgedColumns(result), symbols);
        lookAhead.push(...verdict.lookAhead);
        replaced = verdict.columns;
      } catch (error) {
        if (error instanceof LookAheadError) {
          this.entries.push(
            auditEntry(question, query, {
              asOf: T,
              dataAsOf: null,
              lookAhead: error.fields as LookAheadField[],
              refused: true,
              credits: 0,
            }),
          );
        }
        throw error;
      }
    }
    void asOf;
    const typed = toResult<C>(result, {
      asOfSeconds: T,
      dataVersion: this.host.dataVersion,
      mode,
      status,
      cachedHit,
      service: question.service,
      lookAhead,
      ...(replaced === undefined ? {} : { replaced }),
      // Masked values are not served: what is served was known by T.
      ...(this.policy === 'mask' && lookAhead.length > 0 && result?.kind === 'ok'
        ? { dataAsOf: result.dataAsOfSeconds === null ? null : Math.min(result.dataAsOfSeconds, T) }
        : {}),
    });
    this.entries.push(
      auditEntry(question, query, {
        asOf: T,
        dataAsOf: typed.meta.dataAsOf,
        lookAhead,
        refused: false,
        credits: typed.meta.credits,
      }),
    );
    return typed;
  }
}

/**
 * The columns of an answer with the known-at instant of every value: per field family for option rows
 * (a withheld volume counts as served, known at its stamp), the answer's latest known-at for the rest.
 */
function judgedColumns(answer: Answer): JudgedColumn[] {
  if (isOptionAnswer(answer)) {
    // One column per known-at family, shared by the fields of the family: the answer's own when it came
    // with them (a current chain made from columns), else its records'.
    const { families, volumeOrWithheld } = answer.knownAtColumns ?? knownAtOfRecords(answer.optionRecords);
    return answer.fields.map((field) => {
      const key = field.key as keyof typeof OPTION_FIELD_KNOWN_AT;
      if (!Object.hasOwn(OPTION_FIELD_KNOWN_AT, key))
        return { field: field.key, values: field.values, knownAt: [] };
      const family = OPTION_FIELD_KNOWN_AT[key];
      const values = key === 'volume' ? volumeOrWithheld : field.values;
      return { field: field.key, values, knownAt: families[family], latest: families.latest[family] };
    });
  }
  const latest = answer.dataAsOfSeconds;
  return answer.fields.map((field) => ({
    field: field.key,
    values: field.values,
    knownAt: new Array<number | null>(field.values.length).fill(latest),
    latest,
  }));
}

/** The known-at columns of option records (a withheld volume counts as served, known at its stamp). */
function knownAtOfRecords(records: readonly OptionRecord[]): AnswerKnownAt {
  return {
    families: knownAtByFamily(records),
    volumeOrWithheld: records.map((record) => record.volume ?? record.withheldVolume),
  };
}

/** An option answer's symbols, row by row: its `optionSymbol` field (its records' order). */
function symbolsOf(answer: OptionAnswer): readonly string[] {
  const field = answer.fields.find((f) => f.key === 'optionSymbol');
  return field === undefined
    ? answer.optionRecords.map((record) => record.optionSymbol)
    : (field.values as readonly string[]);
}

/**
 * An audit entry, its `target` made when first read: most audits are never read, and a loop asks at every
 * minute (printing the query took 3 % of an intraday minute's answer).
 */
function auditEntry(
  question: Question,
  query: Readonly<Record<string, string>>,
  entry: Omit<AuditEntry, 'target'>,
): AuditEntry {
  let target: string | undefined;
  return {
    get target() {
      target ??= targetOf(question, query);
      return target;
    },
    ...entry,
  };
}

/** The request a question amounts to, for the audit: path and query as the service would be asked. */
function targetOf(question: Question, query: Readonly<Record<string, string>>): string {
  const segments = Object.values(question.path)
    .map((value) => `${value}/`)
    .join('');
  const text = new URLSearchParams(query).toString();
  return `${question.service}${segments}${text === '' ? '' : `?${text}`}`;
}
