/** What a mirror run is asked (`MirrorOptions`), tells while it runs, and reports when it ends. */
import type { Client } from '../client/index.js';
import type { DataQuality } from '../ingest/quality.js';

/** What `runMirror` copies, from where, into which store, within what budget. */
export type MirrorOptions = {
  readonly client: Client;
  readonly store: string;
  readonly underlyings: readonly string[];
  /** First and last session, `YYYY-MM-DD` (Eastern). */
  readonly from: string;
  readonly to: string;
  /** Stop before the credits spent (estimate included) would exceed this. */
  readonly budget?: number;
  /** Estimate only: nothing is fetched beyond the cheap endpoints, nothing written. */
  readonly dryRun?: boolean;
  /** Skip the minute bars. */
  readonly noIntraday?: boolean;
  /** Requests of the mirror in flight at once (default 8; the client caps every caller at 50). */
  readonly concurrency?: number;
  /** The most answers staged per commit (default 50): a commit takes what arrived while the last one ran. */
  readonly commitEvery?: number;
  /** Stops the run as a budget would: what arrived is committed. */
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: MirrorProgress) => void;
  /** Called with the estimate (dry run or budget) before anything but the cheap endpoints is fetched. */
  readonly onEstimate?: (estimate: MirrorEstimate, sessions: { missing: number; total: number }) => void;
};

export type MirrorProgress = {
  readonly sessionsDone: number;
  readonly sessions: number;
  readonly credits: number;
};

/** Credits a run is expected to cost, by kind of request, for what the store does not hold yet. */
export type MirrorEstimate = {
  readonly rows: readonly { readonly what: string; readonly requests: number; readonly credits: number }[];
  readonly credits: number;
  /** Credits the estimate itself spent (strikes and a minute-bar probe per underlying). */
  readonly spent: number;
  /** Set when the budget did not cover the estimate's own requests: the figures cover only part. */
  readonly partial?: true;
};

export type MirrorReport = {
  /** Sessions in the range, and those whose chains (every underlying) the store holds after the run. */
  readonly sessions: number;
  readonly sessionsDone: number;
  /** Sessions this run completed (their last missing chain arrived). */
  readonly sessionsMirrored: number;
  /** Requests the run sent for data, and those it skipped as already in the store. */
  readonly fetched: number;
  readonly skipped: number;
  /** Credits the service reported for every request of the run (`X-Api-Ratelimit-Consumed`, summed). */
  readonly credits: number;
  readonly estimate: MirrorEstimate | undefined;
  /** Why the run ended early, if it did; `failure` holds the error. */
  readonly stopped: 'budget' | 'failure' | 'interrupt' | undefined;
  readonly failure: unknown;
  /** The store's data version after the run (undefined when nothing was ever committed). */
  readonly dataVersion: string | undefined;
  /** The data-quality summary of the range's option rows in the store, once the run wrote something. */
  readonly quality: DataQuality | undefined;
  readonly seconds: number;
};
