/** A progress bar with its rate on a terminal; silent when stderr is not one (CI, pipes). */
import cliProgress from 'cli-progress';

/** `note`: a short text shown after the count, e.g. the credits a mirror has spent. */
export type Progress = { update(done: number, total?: number, note?: string): void; stop(): void };

/**
 * The bar's format: with a total, the bar, percentage and `done/total`; without one yet, the count alone
 * (a total of 0 would show as 100% done before anything started).
 */
export function progressFormat(label: string, unit: string, total: number, noted = false): string {
  // A rate of rows says how fast an ingest goes; one of steps of unequal length says nothing.
  const rate = `${unit === 'rows' ? '{rate} rows/s | ' : ''}${noted ? '{note} | ' : ''}{duration_formatted}`;
  return total > 0
    ? `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | ${rate}`
    : `${label} | {value} ${unit} | ${rate}`;
}

/** Starts a progress bar labelled `label`, counting `unit` (rows unless told), on stderr if it is a terminal. */
export function startProgress(label: string, total = 0, unit = 'rows'): Progress {
  if (!process.stderr.isTTY) return { update() {}, stop() {} };
  const started = Date.now();
  let noted = false;
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: (options, params, payload) =>
        cliProgress.Format.Formatter(
          { ...options, format: progressFormat(label, unit, params.total, noted) },
          params,
          payload,
        ),
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { rate: 0, note: '' });
  return {
    update(done, newTotal, note) {
      if (newTotal !== undefined && newTotal !== bar.getTotal()) bar.setTotal(Math.max(newTotal, done));
      const seconds = (Date.now() - started) / 1000;
      if (note !== undefined) noted = true;
      bar.update(done, {
        rate: seconds > 0 ? Math.round(done / seconds).toLocaleString('en-US') : 0,
        ...(note === undefined ? {} : { note }),
      });
    },
    stop() {
      bar.stop();
    },
  };
}
