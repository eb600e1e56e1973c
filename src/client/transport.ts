/**
 * How the client talks to the service (api-reference §8, §10): a Bearer token, at most 50 requests in
 * flight, retries with exponential backoff only for statuses above 500 and for network failures (a
 * `Retry-After` the service sends wins over the backoff), never for a 4xx, and the credits read from the
 * `X-Api-Ratelimit-*` headers of every answer.
 */
import { errorForStatus, NetworkError, RateLimitError } from './errors.js';

/** The credit state the service last reported, and what this client has spent in all. */
export type Credits = {
  /** Credits of the window (`X-Api-Ratelimit-Limit`); undefined until an answer says. */
  readonly limit: number | undefined;
  readonly remaining: number | undefined;
  /** When the window resets (epoch seconds). */
  readonly reset: number | undefined;
  /** Credits the last answer consumed. */
  readonly consumed: number;
  /** Credits every answer to this client consumed, summed (`X-Api-Ratelimit-Consumed`). */
  readonly spent: number;
  /** Requests answered (any status). */
  readonly requests: number;
};

/** One answer, as `onResponse` sees it. */
export type ResponseEvent = {
  readonly target: string;
  readonly status: number;
  readonly consumed: number;
  readonly attempt: number;
};

/** A raw answer the caller reads (200, 203, 204 or 404); every other status was thrown as a typed error. */
export type RawResponse = {
  readonly target: string;
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly consumed: number;
};

export type TransportOptions = {
  readonly baseUrl: string;
  readonly token: string | undefined;
  readonly maxRetries: number;
  readonly retryInitialWaitMs: number;
  readonly retryMaxWaitMs: number;
  /** Longest wait a `Retry-After` may impose before the client gives up waiting on it. */
  readonly retryAfterMaxMs: number;
  readonly maxInFlight: number;
  /** How long one attempt may take, answer read included, before it counts as a network failure. */
  readonly timeoutMs: number;
  readonly userAgent: string;
  readonly fetch: typeof fetch;
  readonly wait: (ms: number) => Promise<void>;
  readonly onResponse: ((event: ResponseEvent) => void) | undefined;
};

/** The request line the service measures against its 4,094-byte limit. */
export function requestLineBytes(url: string): number {
  const parsed = new URL(url);
  // A parsed URL's path and query are percent-encoded ASCII: one byte per character.
  return `GET ${parsed.pathname}${parsed.search} HTTP/1.1`.length;
}

/** The service's limit on the request line (L1). */
export const MAX_REQUEST_LINE_BYTES = 4094;

export class Transport {
  private active = 0;
  private readonly queue: (() => void)[] = [];
  private state: Credits = {
    limit: undefined,
    remaining: undefined,
    reset: undefined,
    consumed: 0,
    spent: 0,
    requests: 0,
  };

  constructor(readonly options: TransportOptions) {}

  get credits(): Credits {
    return this.state;
  }

  /** The full URL of a target (`/v1/…/?…`) under the base URL. */
  url(target: string): string {
    return `${this.options.baseUrl.replace(/\/+$/, '')}${target}`;
  }

  /** Sends `GET target`, retrying as the service's rules allow; answers 200, 203, 204 and 404, throws the rest. */
  async get(target: string, token = this.options.token): Promise<RawResponse> {
    this.refuseWhenSpent();
    const { maxRetries } = this.options;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      let text: string;
      await this.acquire();
      try {
        response = await this.options.fetch(this.url(target), {
          headers: this.headers(token),
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
        text = await response.text();
      } catch (cause) {
        if (attempt < maxRetries) {
          await this.options.wait(this.backoff(attempt));
          continue;
        }
        throw new NetworkError(`GET ${target}: ${describeFailure(cause)} (after ${attempt + 1} attempts)`, {
          cause,
        });
      } finally {
        this.release();
      }
      const consumed = this.record(response);
      this.options.onResponse?.({ target, status: response.status, consumed, attempt });
      const retryAfter = retryAfterMs(response.headers.get('retry-after'));
      const status = response.status;
      if (status > 500 && attempt < maxRetries) {
        const waitMs =
          retryAfter === undefined
            ? this.backoff(attempt)
            : Math.min(retryAfter, this.options.retryAfterMaxMs);
        await this.options.wait(waitMs);
        continue;
      }
      if (status === 200 || status === 203 || status === 204 || status === 404) {
        return { target, status, headers: response.headers, text, consumed };
      }
      throw errorForStatus(status, text, {
        ...rayIdOf(response.headers),
        ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter / 1000 }),
      });
    }
  }

  private headers(token: string | undefined): Record<string, string> {
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': this.options.userAgent,
    };
    if (token !== undefined && token !== '') headers['Authorization'] = `Bearer ${token}`;
    return headers;
  }

  /** Exponential backoff: initial · 2^attempt, capped. */
  private backoff(attempt: number): number {
    return Math.min(this.options.retryInitialWaitMs * 2 ** attempt, this.options.retryMaxWaitMs);
  }

  /**
   * Refuses to send once the service has said no credit remains in a metered window that has not reset
   * (limit 0 is the service's unmetered marker), as the official SDKs do: the answer would be a 429.
   */
  private refuseWhenSpent(): void {
    const { limit, remaining, reset } = this.state;
    if (limit === undefined || remaining === undefined || limit === 0 || remaining > 0) return;
    if (reset !== undefined && reset * 1000 <= Date.now()) return;
    throw new RateLimitError(
      429,
      'API credit limit reached for current window (no credit remains; not sent).',
      { s: 'error', errmsg: 'API credit limit reached for current window.' },
      reset === undefined ? {} : { retryAfterSeconds: Math.max(0, reset - Date.now() / 1000) },
    );
  }

  private record(response: Response): number {
    const read = (name: string): number | undefined => {
      const value = response.headers.get(`x-api-ratelimit-${name}`);
      if (value === null || value.trim() === '') return undefined;
      const number = Number(value);
      return Number.isFinite(number) ? number : undefined;
    };
    const consumed = read('consumed') ?? 0;
    const limit = read('limit');
    const remaining = read('remaining');
    const reset = read('reset');
    this.state = {
      limit: limit ?? this.state.limit,
      remaining: remaining ?? this.state.remaining,
      reset: reset ?? this.state.reset,
      consumed,
      spent: this.state.spent + consumed,
      requests: this.state.requests + 1,
    };
    return consumed;
  }

  private acquire(): Promise<void> {
    if (this.active < this.options.maxInFlight) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  private release(): void {
    const next = this.queue.shift();
    if (next === undefined) this.active--;
    else next(); // the slot passes straight to the next request
  }
}

/** The answer's ray id (`cf-ray`, else `x-request-id`) as an error's context, or nothing when it has none. */
export function rayIdOf(headers: Headers): { rayId?: string } {
  const rayId = headers.get('cf-ray') ?? headers.get('x-request-id');
  return rayId === null ? {} : { rayId };
}

/** A `Retry-After` value (seconds, or an HTTP date) in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function describeFailure(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = (cause as { cause?: unknown }).cause;
  const code = inner instanceof Error ? ((inner as { code?: string }).code ?? inner.message) : undefined;
  return code === undefined ? cause.message : `${cause.message} (${code})`;
}
