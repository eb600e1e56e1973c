/**
 * Bounded work per request: how many rows an endpoint may return before paging, how many bytes an answer
 * may have, and how long a request may take; and the time slicing that lets a heavy answer be printed a
 * piece at a time while small requests keep being answered.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { REFUSALS } from './errors.js';

/** The limits of one service (every field may be set with `pitchain serve --max-…`). */
export type ServiceLimits = {
  /** Rows an endpoint's answer may hold before `limit`/`offset` page it (413 beyond). */
  readonly maxRows: number;
  /** Bytes of one answer's body (413 beyond). */
  readonly maxAnswerBytes: number;
  /** Seconds from a request's start until it is refused (524, the service's gateway timeout). */
  readonly maxSeconds: number;
};

/**
 * The defaults: a server in a 512 MB budget answering 64 connections. A page holds at most 50,000 rows
 * (`limit`); 1,000,000 rows before paging covers a year of minute candles ten times over; 32 MB is over
 * four times the largest answer of the sample's widest chain and keeps a few concurrent heavy answers in
 * budget; 100 s is the service's own gateway timeout.
 */
export const DEFAULT_LIMITS: ServiceLimits = {
  maxRows: 1_000_000,
  maxAnswerBytes: 32 * 1024 * 1024,
  maxSeconds: 100,
};

/** The longest a request holds the event loop between yields, in milliseconds. */
export const SLICE_MS = 4;

/** One request's time budget: it yields to other requests every {@link SLICE_MS} and stops at its deadline. */
export class Budget {
  private sliceStart = performance.now();
  private readonly deadline: number;

  constructor(private readonly limits: ServiceLimits) {
    this.deadline = this.sliceStart + limits.maxSeconds * 1000;
  }

  /** Throws the 524 refusal once the request is past its deadline. */
  check(): void {
    if (performance.now() > this.deadline) throw REFUSALS.timedOut(this.limits.maxSeconds);
  }

  /** Lets other requests run if this one has held the event loop for a slice; then checks the deadline. */
  async pause(): Promise<void> {
    if (performance.now() - this.sliceStart < SLICE_MS) return;
    await nextTurn();
    this.sliceStart = performance.now();
    this.check();
  }

  /** Refuses an answer of more rows than the limit (before it is paged). */
  checkRows(rows: number): void {
    if (rows > this.limits.maxRows)
      throw REFUSALS.tooLarge(`${rows} rows, more than this server's ${this.limits.maxRows}`);
  }

  /**
   * Joins an answer's pieces into its body, yielding between pieces, refusing it (413) as soon as it
   * grows past the byte limit so that no more of it is built.
   */
  async join(pieces: Iterable<string | Buffer>): Promise<string> {
    // Kept as text: the body is then one more copy of it, not two (bytes, then text).
    const parts: string[] = [];
    let bytes = 0;
    for (const piece of pieces) {
      const text = typeof piece === 'string' ? piece : piece.toString('utf8');
      bytes += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.length;
      if (bytes > this.limits.maxAnswerBytes) {
        throw REFUSALS.tooLarge(`an answer of more than ${this.limits.maxAnswerBytes} bytes`);
      }
      parts.push(text);
      await this.pause();
    }
    return parts.join('');
  }
}

/** Reads a limit given as text (a CLI flag); a non-positive or unreadable value is undefined. */
export function readLimit(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)\s*(k|m|g)?b?$/i.exec(text.trim());
  if (match === null) return undefined;
  const scale = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]?.toLowerCase() ?? ''] ?? 1;
  const value = Math.floor(Number(match[1]) * scale);
  return value > 0 && Number.isFinite(value) ? value : undefined;
}
