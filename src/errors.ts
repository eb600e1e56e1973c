/**
 * One error type per failure family. Each carries a discriminating `code`, and `cause` whenever another
 * error led to it.
 */

/** The body the service sends with an error status: `{"s":"error","errmsg":…}` or a `no_data` variant. */
export type ErrorBody = { s: 'error' | 'no_data'; errmsg?: string; [key: string]: unknown };

/** A request the service would refuse: carries the HTTP status and the exact body the service sends. */
export class MarketDataError extends Error {
  readonly code = 'market_data' as const;
  readonly status: number;
  readonly body: ErrorBody;

  constructor(status: number, errmsg: string, options?: { body?: ErrorBody; cause?: unknown }) {
    super(errmsg, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MarketDataError';
    this.status = status;
    this.body = options?.body ?? { s: 'error', errmsg };
  }

  /** The `errmsg` the service would send (empty for a markerless 404). */
  get errmsg(): string {
    return typeof this.body.errmsg === 'string' ? this.body.errmsg : '';
  }
}

/** The two 400 messages the specification fixes word for word. */
export const FIXED_MESSAGES = {
  invalidOptionSymbol: 'Invalid option symbol. Use valid OCC symbology for the option symbol.',
  invalidDate: 'Invalid date. The date parameter is used for historical queries only.',
} as const;

/** A value not known at the decision instant T, as the look-ahead policies name it. */
export type LookAheadFieldInfo = {
  readonly field: string;
  readonly knownAt: number;
  readonly optionSymbol?: string;
  readonly count?: number;
};

/** A value asked for at decision instant T that was not yet known at T (backtest face, `strict` policy). */
export class LookAheadError extends Error {
  readonly code = 'look_ahead' as const;
  /** The decision instant T (epoch seconds). */
  readonly asOf: number;
  readonly fields: readonly LookAheadFieldInfo[];

  constructor(asOf: number, fields: readonly LookAheadFieldInfo[]) {
    const list = fields.map(
      (f) =>
        `${f.field}${f.optionSymbol === undefined ? '' : ` of ${f.optionSymbol}`} (known at ${new Date(f.knownAt * 1000).toISOString()})`,
    );
    super(`look-ahead at ${new Date(asOf * 1000).toISOString()}: ${list.join(', ')}`);
    this.name = 'LookAheadError';
    this.asOf = asOf;
    this.fields = fields;
  }
}

/**
 * A value the caller gave that cannot be read: a date, an OCC symbol, lookup text. Thrown by the pure
 * modules (`market-time/`, `occ/`); the service answers it with a 400 carrying the message. It extends
 * RangeError so that callers that catch a bad value as a RangeError keep working.
 */
export class InvalidInputError extends RangeError {
  readonly code = 'invalid_input' as const;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'InvalidInputError';
  }
}

/** A row or file an ingest refused; names the file and the 1-based line. */
export class IngestError extends Error {
  readonly code = 'ingest' as const;
  readonly file: string;
  readonly line: number | undefined;
  readonly reason: string;

  constructor(file: string, line: number | undefined, reason: string, options?: { cause?: unknown }) {
    super(
      `${file}${line === undefined ? '' : `:${line}`}: ${reason}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'IngestError';
    this.file = file;
    this.line = line;
    this.reason = reason;
  }
}

/** A failure of the store itself (I/O, manifest, DuckDB); carries the SQL when a statement failed. */
export class StoreError extends Error {
  readonly code = 'store' as const;
  readonly sql: string | undefined;

  constructor(message: string, options?: { sql?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'StoreError';
    this.sql = options?.sql;
  }
}

/**
 * What every use of a closed store throws (`Store.close`): its DuckDB is closed, its caches are let go,
 * and its files are not opened again.
 */
export function storeClosedError(sql?: string): StoreError {
  return new StoreError('the store is closed', sql === undefined ? undefined : { sql });
}

/** Wrong use of the library or CLI by the caller (bad option, missing file), not a service answer. */
export class UsageError extends Error {
  readonly code = 'usage' as const;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UsageError';
  }
}

/** Every error type above: what the faces map to a status (`service/errors.ts`) or an exit status. */
const ERROR_TYPES = [
  MarketDataError,
  LookAheadError,
  InvalidInputError,
  IngestError,
  StoreError,
  UsageError,
] as const;

/** An error of one of the project's own types. */
export type PitchainError = InstanceType<(typeof ERROR_TYPES)[number]>;

/** Whether an error is one of the project's own (anything else reaching a face is a defect). */
export function isPitchainError(error: unknown): error is PitchainError {
  return ERROR_TYPES.some((type) => error instanceof type);
}

/**
 * The one table from error type to the command line's exit status, as `service/errors.ts` gives the
 * service's: 2 for what the caller gave (the message says how to fix it), 1 for a refusal or a failure of
 * the data or the store. A type added above without an exit status here is a type error.
 */
export const EXIT_STATUS = {
  usage: 2,
  invalid_input: 2,
  market_data: 1,
  look_ahead: 1,
  ingest: 1,
  store: 1,
} as const satisfies Record<PitchainError['code'], number>;

/** The exit status of anything else: a defect (EX_SOFTWARE), printed with its stack. */
export const EXIT_INTERNAL = 70;
