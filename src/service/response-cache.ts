/**
 * The response cache (semantics §5): live and delayed answers keyed by endpoint, path and the endpoint's
 * parsed parameters, with the snapshot instant they hold. `mode=cached` reads it; a repeated live request
 * at the same cutoff is served from it (203). Dated answers are kept in it too, under keys of their own
 * (`Api.evaluate`): a repeat is the same 200. It is bounded in bytes (least recently used first out) and
 * belongs to one data version: when the store moves on, every entry is dropped.
 */

import { isOptionAnswer } from '../query/endpoints/option-answer.js';
import { OPTION_RECORD_BYTES } from '../query/options/records.js';
import { clockedSafeParser, paramNames } from '../query/params.js';
import type { Answer, Endpoint } from '../query/types.js';

export type CacheEntry = {
  readonly answer: Answer;
  readonly snapshotSeconds: number;
  readonly cutoffSeconds: number;
};

/** A kept answer as printed for one set of output options, with what its credits are counted from. */
export type RenderedAnswer = {
  readonly body: string;
  readonly contentType: string;
  readonly rows: number;
  readonly keys: readonly string[];
};

type Kept = {
  entry: CacheEntry;
  bytes: number;
  rendered?: Map<string, RenderedAnswer>;
  /** Rows whose records the answer had not made when counted (see `settle`). */
  pendingRecords: number;
};

/** The default budget: an eighth of a 512 MB server. */
export const DEFAULT_RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;

/** An answer larger than this share of the budget is not kept (it would push out everything else). */
const LARGEST_SHARE = 0.25;

/** The most keys of dated answers asked once that are remembered (see `ResponseCache.admit`). */
const ASKED_ONCE_KEYS = 10_000;

/**
 * The service's responses for one data version, bounded in bytes. Each answer also keeps its printed
 * bodies, one per output options asked (a repeated request is then sent without printing it again);
 * they count against the same bytes and go with their answer.
 */
export class ResponseCache {
  private readonly entries = new Map<string, Kept>();
  /** Keys of answers asked once and not kept (see `admit`). */
  private readonly askedOnce = new Set<string>();
  private bytes = 0;
  private version: string;

  constructor(
    private readonly dataVersion: () => string,
    readonly capacityBytes: number = DEFAULT_RESPONSE_CACHE_BYTES,
  ) {
    this.version = dataVersion();
  }

  /**
   * The cache key of a request: service, path parameters and the endpoint's own parameters as its schema
   * parses them at T (unknown parameters dropped, values canonical), order-independent. Undefined when the
   * parameters do not parse: the endpoint refuses them, and a refusal is never kept.
   */
  static key(
    endpoint: Endpoint,
    path: Readonly<Record<string, string>>,
    query: Readonly<Record<string, string>>,
    nowSeconds: number,
  ): string | undefined {
    const parser = keyParserOf(endpoint);
    if (parser === undefined) return undefined;
    const data = parser.parse(query, nowSeconds);
    if (data === undefined) return undefined;
    const parsed: Record<string, unknown> = { ...data };
    // A parameter the endpoint reads outside its schema (`date` of a dated endpoint) keeps its raw value.
    const reads = parser.reads;
    for (const [k, v] of Object.entries(query)) if (reads.has(k) && !(k in parsed)) parsed[k] = v;
    const sorted = (o: Readonly<Record<string, unknown>>) =>
      Object.keys(o)
        .filter((k) => o[k] !== undefined)
        .sort()
        .map((k) => [k, o[k]]);
    return JSON.stringify([endpoint.service, sorted(path), sorted(parsed)]);
  }

  /** Bytes the kept answers take (an estimate of their size in memory). */
  get sizeBytes(): number {
    this.sync();
    return this.bytes;
  }

  /** Number of kept answers. */
  get size(): number {
    this.sync();
    return this.entries.size;
  }

  get(key: string): CacheEntry | undefined {
    this.sync();
    const found = this.entries.get(key);
    if (found === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, found);
    this.settle(found);
    return found.entry;
  }

  /**
   * Whether an answer just computed for `key` is to be kept, for an answer only a repeat of the same
   * request can use (a dated one): not the first time its key is asked, only when it is asked again. A
   * server's traffic over many sessions asks most of them once, and every answer kept is more for the
   * collector to walk (a full cache made each such request a fifth slower); a repeated request is kept
   * from its second time on. The keys asked once are forgotten, all at once, past `ASKED_ONCE_KEYS`.
   */
  admit(key: string): boolean {
    this.sync();
    if (this.askedOnce.delete(key)) return true;
    if (this.askedOnce.size >= ASKED_ONCE_KEYS) this.askedOnce.clear();
    this.askedOnce.add(key);
    return false;
  }

  set(key: string, entry: CacheEntry): void {
    this.sync();
    const bytes = estimateBytes(key, entry.answer);
    this.remove(key);
    if (bytes > this.capacityBytes * LARGEST_SHARE) return;
    this.entries.set(key, { entry, bytes, pendingRecords: pendingRecordsOf(entry.answer) });
    this.bytes += bytes;
    this.evict();
  }

  /** The body printed for `output` of the answer kept under `key`, if that answer is still the one kept. */
  rendered(key: string, answer: Answer, output: string): RenderedAnswer | undefined {
    this.sync();
    const found = this.entries.get(key);
    return found?.entry.answer === answer ? found.rendered?.get(output) : undefined;
  }

  /** Keeps the body printed for `output` beside the answer kept under `key` (nothing if it is gone). */
  keepRendered(key: string, answer: Answer, output: string, rendered: RenderedAnswer): void {
    this.sync();
    const found = this.entries.get(key);
    if (found === undefined || found.entry.answer !== answer || found.rendered?.has(output)) return;
    const bytes = printedBytes(answer, output, rendered.body);
    if (found.bytes + bytes > this.capacityBytes * LARGEST_SHARE) return;
    found.rendered ??= new Map();
    found.rendered.set(output, rendered);
    found.bytes += bytes;
    this.bytes += bytes;
    this.evict();
  }

  /**
   * Counts the records a kept answer has made since it was counted (a columnar chain's, made when a
   * library call reads the answer it was handed): at its next use, the first moment the cache sees them.
   */
  private settle(found: Kept): void {
    if (found.pendingRecords === 0 || !isOptionAnswer(found.entry.answer)) return;
    if (found.entry.answer.heldBytes !== undefined) return;
    const bytes = found.pendingRecords * OPTION_RECORD_BYTES;
    found.pendingRecords = 0;
    found.bytes += bytes;
    this.bytes += bytes;
    this.evict();
  }

  /** Drops the least recently used answers until the kept ones fit. */
  private evict(): void {
    for (const oldest of this.entries.keys()) {
      if (this.bytes <= this.capacityBytes) break;
      this.remove(oldest);
    }
  }

  private remove(key: string): void {
    const found = this.entries.get(key);
    if (found === undefined) return;
    this.entries.delete(key);
    this.bytes -= found.bytes;
  }

  private sync(): void {
    const version = this.dataVersion();
    if (version === this.version) return;
    this.version = version;
    this.clear();
  }

  /** Drops every kept answer (a data version moving on, a store closing). */
  clear(): void {
    this.entries.clear();
    this.askedOnce.clear();
    this.bytes = 0;
  }
}

/**
 * Values measured per field to estimate its size (a field's values are alike). Every answer kept is
 * measured (a minute loop's each minute): a 148-row chain took 5.3 µs at 64 a field, 0.7–1.2 at 8.
 */
const SAMPLE = 8;

/**
 * An estimate of an answer's size in memory: each field's values, measured on a sample, and an option
 * answer's records behind them (left out, the cache held 2.4–2.8 times the bytes it counted). An option
 * answer's fields other than texts hold one number, boolean or null a row (`OPTION_FIELDS`): they count
 * 8 bytes a row unread, so that a columnar answer's number columns (`ColumnField`) are not made into
 * arrays to be counted, and a minute loop's answer is not walked field by field (measured in a minute
 * loop: 40 µs of a 0.4 ms minute, its values read far from where the endpoint left them).
 */
export function estimateBytes(key: string, answer: Answer): number {
  let bytes = 256 + key.length * 2;
  const option = isOptionAnswer(answer);
  const rows = answer.fields[0]?.values.length ?? 0;
  // One record a row; an answer whose records are still to be made holds the rows to make them from
  // instead, counted as such when known (its records are counted once made: `settle`).
  if (option) bytes += answer.heldBytes ?? rows * OPTION_RECORD_BYTES;
  for (const field of answer.fields) {
    if (field.json !== undefined && field.json.rows !== null) bytes += field.json.rows.byteLength;
    if (option && field.kind !== 'string') {
      bytes += 64 + 8 * rows;
      continue;
    }
    const values = field.values;
    const n = Math.min(values.length, SAMPLE);
    let sampled = 0;
    for (let i = 0; i < n; i++) sampled += valueBytes(values[i]);
    bytes += 64 + (n === 0 ? 0 : (sampled / n) * values.length);
  }
  if (answer.rawBody !== undefined) bytes += JSON.stringify(answer.rawBody).length * 2;
  return Math.ceil(bytes);
}

/** The rows of a kept answer whose records are still to be made. */
function pendingRecordsOf(answer: Answer): number {
  if (!isOptionAnswer(answer) || answer.heldBytes === undefined) return 0;
  return answer.fields[0]?.values.length ?? 0;
}

/**
 * What a printed body kept beside its answer counts: the body (one byte a character for the JSON and CSV
 * the service prints, two otherwise) and, when the answer's fields keep their JSON text (`JsonColumn`),
 * that text too, about the body again.
 */
function printedBytes(answer: Answer, output: string, body: string): number {
  const copies = answer.fields.some((field) => field.json !== undefined) ? 2 : 1;
  return 128 + output.length * 2 + copies * body.length * (isLatin1(body) ? 1 : 2);
}

/** Whether V8 can hold the text one byte a character (checked on a sample: an estimate, as above). */
function isLatin1(text: string): boolean {
  const step = Math.max(1, Math.floor(text.length / 256));
  for (let i = 0; i < text.length; i += step) if (text.charCodeAt(i) > 0xff) return false;
  return true;
}

function valueBytes(value: unknown): number {
  if (typeof value === 'string') return 16 + value.length * 2;
  if (Array.isArray(value)) return 16 + value.reduce((sum: number, v) => sum + valueBytes(v), 0);
  return 8;
}

/** An endpoint's parameters as its cache key reads them: its schema, built once, parsed at each request's T. */
type KeyParser = {
  readonly parse: (query: Readonly<Record<string, string>>, nowSeconds: number) => object | undefined;
  readonly reads: ReadonlySet<string>;
};

// Building a zod schema costs far more than parsing with it: one per endpoint, parsed as the endpoints
// parse theirs (`clockedSafeParser`).
const keyParsers = new WeakMap<Endpoint, KeyParser | undefined>();

function keyParserOf(endpoint: Endpoint): KeyParser | undefined {
  if (keyParsers.has(endpoint)) return keyParsers.get(endpoint);
  let parser: KeyParser | undefined;
  try {
    const parse = clockedSafeParser(endpoint.schema);
    parser = {
      parse(query, nowSeconds) {
        try {
          const result = parse({ ...query }, nowSeconds);
          return result.success ? (result.data as object) : undefined;
        } catch {
          return undefined;
        }
      },
      // The schema's keys, and `date` when the endpoint reads it.
      reads: new Set(paramNames(endpoint)),
    };
  } catch {
    parser = undefined;
  }
  keyParsers.set(endpoint, parser);
  return parser;
}
