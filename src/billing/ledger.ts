/**
 * The credit ledger: per-account usage in the account's window, the rate-limit headers every metered
 * response carries, the request log (ray id, path, status, credits), the concurrency cap and the
 * one-device rule. Kept in memory by the API instance; optionally appended to a JSON-lines file.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { etWallToSeconds, toEtDate } from '../market-time/index.js';
import type { Account } from './accounts.js';

export type LogEntry = {
  readonly ray: string;
  readonly logId: number;
  readonly account: string;
  readonly path: string;
  readonly status: number;
  readonly credits: number;
  readonly atSeconds: number;
};

/** More than this many requests in flight for one account is a 429. */
export const MAX_CONCURRENT = 50;
const BLOCK_SECONDS = 300;

type Usage = { windowEnd: number; used: number };

export class Ledger {
  private readonly usage = new Map<string, Usage>();
  private readonly inFlight = new Map<string, number>();
  private readonly devices = new Map<string, { ip: string; seenAt: number; blockedUntil: number }>();
  private readonly entries: LogEntry[] = [];
  private nextLogId = 1;
  private total = 0;
  /** The log file, opened for appending on the first entry and kept open (one write per entry). */
  private file: Promise<FileHandle> | undefined;

  constructor(private readonly logFile?: string) {}

  /** Closes the log file, once the entries being written are written. */
  async close(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await file?.then((handle) => handle.close()).catch(() => undefined);
  }

  /** Credits consumed by all accounts since this ledger started. */
  get totalCredits(): number {
    return this.total;
  }

  /** The request log, oldest first. */
  get log(): readonly LogEntry[] {
    return this.entries;
  }

  /** Credits left in the account's current window at T (may be negative). */
  remaining(account: Account, nowSeconds: number): number {
    return account.credits.limit - this.window(account, nowSeconds).used;
  }

  /** Epoch seconds at which the account's window resets. */
  resetSeconds(account: Account, nowSeconds: number): number {
    return this.window(account, nowSeconds).windowEnd;
  }

  /** Starts a request; returns false when the account already has the maximum in flight. */
  enter(account: Account): boolean {
    const n = this.inFlight.get(account.id) ?? 0;
    if (n >= MAX_CONCURRENT) return false;
    this.inFlight.set(account.id, n + 1);
    return true;
  }

  /** Ends a request started with `enter`. */
  leave(account: Account): void {
    this.inFlight.set(account.id, Math.max(0, (this.inFlight.get(account.id) ?? 1) - 1));
  }

  /**
   * The one-device rule: a token seen from a second IP address within 5 minutes is blocked for 5 minutes.
   * Returns the IP the account is bound to when this request must be refused.
   */
  checkDevice(account: Account, ip: string | undefined, nowSeconds: number): string | undefined {
    if (ip === undefined) return undefined;
    const seen = this.devices.get(account.id);
    if (seen !== undefined && nowSeconds < seen.blockedUntil) return seen.ip;
    if (seen !== undefined && seen.ip !== ip && nowSeconds - seen.seenAt < BLOCK_SECONDS) {
      seen.blockedUntil = nowSeconds + BLOCK_SECONDS;
      return seen.ip;
    }
    this.devices.set(account.id, { ip, seenAt: nowSeconds, blockedUntil: 0 });
    return undefined;
  }

  /** Records a finished request and its credits; returns its log entry. */
  async record(
    account: Account,
    path: string,
    status: number,
    credits: number,
    nowSeconds: number,
  ): Promise<LogEntry> {
    const usage = this.window(account, nowSeconds);
    usage.used += credits;
    this.total += credits;
    const entry: LogEntry = {
      ray: `${randomBytes(8).toString('hex')}-LCL`,
      logId: this.nextLogId++,
      account: account.id,
      path,
      status,
      credits,
      atSeconds: nowSeconds,
    };
    this.entries.push(entry);
    if (this.entries.length > 10_000) this.entries.splice(0, this.entries.length - 10_000);
    if (this.logFile !== undefined) await this.append(this.logFile, `${JSON.stringify(entry)}\n`);
    return entry;
  }

  /**
   * Appends one line. An append-mode write of one short line lands whole even beside other writers; a file
   * that cannot be opened is tried again on the next entry (the caller answers this one with the error).
   */
  private async append(file: string, line: string): Promise<void> {
    this.file ??= fs.open(file, 'a');
    const opening = this.file;
    let handle: FileHandle;
    try {
      handle = await opening;
    } catch (error) {
      if (this.file === opening) this.file = undefined;
      throw error;
    }
    await handle.write(line);
  }

  /** The four rate-limit headers for a response that consumed `consumed` credits. */
  headers(account: Account, nowSeconds: number, consumed: number): Record<string, string> {
    return {
      'X-Api-Ratelimit-Limit': String(account.credits.limit),
      'X-Api-Ratelimit-Remaining': String(this.remaining(account, nowSeconds)),
      'X-Api-Ratelimit-Reset': String(this.resetSeconds(account, nowSeconds)),
      'X-Api-Ratelimit-Consumed': String(consumed),
    };
  }

  private window(account: Account, nowSeconds: number): Usage {
    let usage = this.usage.get(account.id);
    if (
      usage === undefined ||
      nowSeconds >= usage.windowEnd ||
      nowSeconds < usage.windowEnd - periodSeconds(account)
    ) {
      usage = { windowEnd: windowEnd(account, nowSeconds), used: 0 };
      this.usage.set(account.id, usage);
    }
    return usage;
  }
}

function periodSeconds(account: Account): number {
  return account.credits.period === 'minute' ? 60 : 86_400 + 3_600;
}

/** Daily windows reset at 09:30 ET; minute windows at the next whole minute. */
function windowEnd(account: Account, nowSeconds: number): number {
  if (account.credits.period === 'minute') return Math.floor(nowSeconds / 60) * 60 + 60;
  const today = toEtDate(nowSeconds);
  const reset = etWallToSeconds(today, '09:30');
  if (nowSeconds < reset) return reset;
  const tomorrow = new Date(Date.parse(`${today}T12:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  return etWallToSeconds(tomorrow, '09:30');
}
