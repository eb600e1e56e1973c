/**
 * The credit ledger: per-account usage in the account's window, the rate-limit headers every metered
 * response carries, the request log (ray id, path, status, credits), the concurrency cap and the
 * one-device rule. Kept in memory by the API instance; optionally appended to a JSON-lines file.
 *
 * The file is the ledger's memory across restarts and must survive the disk: only whole lines are in it
 * (a torn last line, from a crash or a full disk, is cut when the file is opened or a write fails); a
 * request is charged only once its line is written (else `LogUnavailableError`, answered 503 without
 * credits); the file is reopened after `reopen()` (SIGHUP) or when it was moved or deleted (rotation);
 * log ids continue past the highest in the file and past the clock, so they are unique across restarts;
 * and on start each account's usage in its current window is read back from it.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
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

/**
 * The request log could not be written: the request is refused without credits (the service answers
 * 503 with `Retry-After`), since a metered answer nobody can account for is never sent.
 */
export class LogUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the request log cannot be written', { cause });
    this.name = 'LogUnavailableError';
  }
}

/** More than this many requests in flight for one account is a 429. */
export const MAX_CONCURRENT = 50;
const BLOCK_SECONDS = 300;
/** Entries of the request log kept in memory (`log`); the file keeps them all. */
const LOG_IN_MEMORY = 10_000;

/** Random bytes drawn a batch at a time: one draw per ray id cost a system call per request. */
const RAY_BATCH = 512;
let rayPool = Buffer.alloc(0);
let rayAt = 0;

/** A fresh random ray id (16 hex digits). */
function rayId(): string {
  if (rayAt + 8 > rayPool.length) {
    rayPool = randomBytes(8 * RAY_BATCH);
    rayAt = 0;
  }
  rayAt += 8;
  return rayPool.toString('hex', rayAt - 8, rayAt);
}

/** How often, at most, the log's path is checked for a replaced file (rotation without SIGHUP). */
const REPLACED_CHECK_MS = 1_000;

type Usage = { windowEnd: number; used: number };
type Open = { handle: FileHandle; ino: number; dev: number; size: number; checkedAt: number };

export class Ledger {
  private readonly usage = new Map<string, Usage>();
  private readonly inFlight = new Map<string, number>();
  private readonly devices = new Map<string, { ip: string; seenAt: number; blockedUntil: number }>();
  private readonly entries: LogEntry[] = [];
  private nextLogId = 1;
  private total = 0;
  /** The open log file; undefined until the first entry and after `reopen()`. */
  private open: Open | undefined;
  /** Writes run one after another: a failed one is cut back before the next starts. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Credits charged in earlier runs, by account, until the account's window is first asked for. */
  private restored = new Map<string, [atSeconds: number, credits: number][]>();
  private failing = false;
  /** Resolves once an earlier run's ids and usage are read back from the log file. */
  readonly ready: Promise<void>;

  constructor(private readonly logFile?: string) {
    this.ready = logFile === undefined ? Promise.resolve() : this.restore(logFile);
  }

  /** Whether the last write to the request log failed (`/status/` says degraded until one succeeds). */
  get degraded(): boolean {
    return this.failing;
  }

  /** Closes the log file, once the entries being written are written (in turn with the writes). */
  close(): Promise<void> {
    const closing = this.queue.then(async () => {
      const open = this.open;
      this.open = undefined;
      await open?.handle.close().catch(() => undefined);
    });
    this.queue = closing.catch(() => undefined);
    return closing;
  }

  /** Closes the log file so the next entry opens it again by name (after a rotation: SIGHUP). */
  reopen(): Promise<void> {
    return this.close();
  }

  /** Credits consumed by all accounts since this ledger started. */
  get totalCredits(): number {
    return this.total;
  }

  /** The request log, oldest first: its last {@link LOG_IN_MEMORY} entries. */
  get log(): readonly LogEntry[] {
    return this.entries.length > LOG_IN_MEMORY ? this.entries.slice(-LOG_IN_MEMORY) : this.entries;
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

  /**
   * Records a finished request and charges its credits once its line is written; returns its log entry.
   * Throws `LogUnavailableError`, charging nothing, when the log file cannot be written.
   */
  async record(
    account: Account,
    path: string,
    status: number,
    credits: number,
    nowSeconds: number,
  ): Promise<LogEntry> {
    await this.ready;
    const entry: LogEntry = {
      ray: `${rayId()}-LCL`,
      logId: this.nextLogId++,
      account: account.id,
      path,
      status,
      credits,
      atSeconds: nowSeconds,
    };
    if (this.logFile !== undefined) await this.append(this.logFile, `${JSON.stringify(entry)}\n`);
    this.window(account, nowSeconds).used += credits;
    this.total += credits;
    this.entries.push(entry);
    // Cut in one go once twice the kept number: cutting one entry a request moves the whole array each time.
    if (this.entries.length >= 2 * LOG_IN_MEMORY) this.entries.splice(0, this.entries.length - LOG_IN_MEMORY);
    return entry;
  }

  /** Appends one whole line, after the writes before it; a failed write leaves no part of its line. */
  private append(file: string, line: string): Promise<void> {
    const write = this.queue.then(() => this.write(file, Buffer.from(line)));
    this.queue = write.catch(() => undefined);
    return write.then(
      () => {
        this.failing = false;
      },
      (cause: unknown) => {
        this.failing = true;
        throw new LogUnavailableError(cause);
      },
    );
  }

  private async write(file: string, line: Buffer): Promise<void> {
    const open = await this.opened(file);
    try {
      const { bytesWritten } = await open.handle.write(line, 0, line.length, null);
      if (bytesWritten !== line.length) throw new Error(`short write (${bytesWritten} of ${line.length})`);
      open.size += line.length;
    } catch (error) {
      // Cut what part of the line reached the file; if even that fails, the next open cuts it.
      await open.handle.truncate(open.size).catch(async () => {
        if (this.open === open) this.open = undefined;
        await open.handle.close().catch(() => undefined);
      });
      throw error;
    }
  }

  /** The open log file, opened (or reopened, when its path now names another file) with its torn tail cut. */
  private async opened(file: string): Promise<Open> {
    let open = this.open;
    if (open !== undefined && Date.now() - open.checkedAt >= REPLACED_CHECK_MS) {
      open.checkedAt = Date.now();
      const now = await fs.stat(file).catch(() => undefined);
      if (now === undefined || now.ino !== open.ino || now.dev !== open.dev) {
        this.open = undefined;
        await open.handle.close().catch(() => undefined);
        open = undefined;
      }
    }
    if (open !== undefined) return open;
    const handle = await fs.open(file, 'a+');
    try {
      const stat = await handle.stat();
      const size = stat.isFile() ? await cutTornTail(handle, stat.size) : 0;
      open = { handle, ino: stat.ino, dev: stat.dev, size, checkedAt: Date.now() };
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
    this.open = open;
    return open;
  }

  /** Reads an earlier run's log: the next id, and the credits each account was charged. */
  private async restore(file: string): Promise<void> {
    let lastId = 0;
    try {
      // Only a regular file is read back (a log sent to a device or a pipe has nothing to give).
      if (!(await fs.stat(file)).isFile()) throw new Error('not a regular file');
      const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
      for await (const line of lines) {
        let entry: Partial<LogEntry>;
        try {
          entry = JSON.parse(line) as Partial<LogEntry>;
        } catch {
          continue; // a torn line: cut when the file is opened for writing
        }
        if (typeof entry.logId === 'number' && entry.logId > lastId) lastId = entry.logId;
        if (
          typeof entry.account === 'string' &&
          typeof entry.credits === 'number' &&
          entry.credits > 0 &&
          typeof entry.atSeconds === 'number'
        ) {
          const list = this.restored.get(entry.account) ?? [];
          list.push([entry.atSeconds, entry.credits]);
          this.restored.set(entry.account, list);
        }
      }
    } catch {
      // No log yet (or unreadable: writing it will say so).
    }
    // Past the earlier run's ids, and past the clock: a rotated-away log still gives a fresh range.
    this.nextLogId = Math.max(lastId + 1, Date.now());
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
      const end = windowEnd(account, nowSeconds);
      usage = { windowEnd: end, used: 0 };
      // Credits an earlier run charged in this same window still count.
      for (const [at, credits] of this.restored.get(account.id) ?? []) {
        if (at <= nowSeconds && windowEnd(account, at) === end) usage.used += credits;
      }
      this.usage.set(account.id, usage);
    }
    return usage;
  }
}

/** Cuts a last line that has no end (a crash or a full disk mid-write); returns the size kept. */
async function cutTornTail(handle: FileHandle, size: number): Promise<number> {
  if (size === 0) return 0;
  const chunk = Buffer.alloc(Math.min(size, 64 * 1024));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const { bytesRead } = await handle.read(chunk, 0, end - start, start);
    const at = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (at >= 0) {
      const kept = start + at + 1;
      if (kept !== size) await handle.truncate(kept);
      return kept;
    }
    end = start;
  }
  await handle.truncate(0);
  return 0;
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
