/** A progress bar with rows/s on a terminal; silent when stderr is not one (CI, pipes). */
import cliProgress from 'cli-progress';

export type Progress = { update(done: number, total?: number): void; stop(): void };

/** Starts a progress bar labelled `label` on stderr if it is a terminal. */
export function startProgress(label: string, total = 0): Progress {
  if (!process.stderr.isTTY) return { update() {}, stop() {} };
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${label} [{bar}] {percentage}% | {value}/{total} rows | {rate} rows/s | {duration_formatted}`,
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { rate: 0 });
  return {
    update(done, newTotal) {
      if (newTotal !== undefined && newTotal !== bar.getTotal()) bar.setTotal(Math.max(newTotal, done));
      const seconds = (Date.now() - started) / 1000;
      bar.update(done, { rate: seconds > 0 ? Math.round(done / seconds).toLocaleString('en-US') : 0 });
    },
    stop() {
      bar.stop();
    },
  };
}
