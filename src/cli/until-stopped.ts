/**
 * How a serving command ends: SIGTERM or SIGINT (Ctrl-C) stop accepting, let the requests in flight finish
 * and exit, cutting what is left after the grace; SIGHUP reopens the request log (rotation). A server
 * started through a wrapper that exits without passing the signal on (npx, npm start under some shells)
 * notices that its parent is gone and stops the same way rather than serve on as an orphan.
 */
import type { RunningServer } from '../http/index.js';

/** How often the parent process is looked for. */
const PARENT_CHECK_MS = 1_000;
/** After the grace, this long is left to close the log and the store before the process exits anyway. */
const CLOSE_MS = 2_000;
/**
 * The parent this process was started by, read when the CLI loads rather than when the server is up: under
 * load a wrapper can get SIGTERM and exit between the server printing its address and `untilStopped`
 * running, and a parent read then is already the reaper, so the orphan would never notice it was one.
 */
const STARTING_PARENT = process.ppid;

/** Resolves once the server has stopped on a signal and `close` has released what it holds. */
export function untilStopped(
  server: RunningServer,
  options: {
    readonly graceMs: number;
    readonly close?: () => Promise<void>;
    readonly onHangup?: () => void;
  },
): Promise<void> {
  return new Promise<void>((resolve) => {
    const hangup = () => options.onHangup?.();
    // Only under npm (npx, npm start, npm run): a server put in the background on purpose (nohup, a
    // service manager) outlives the shell that started it.
    const parent = STARTING_PARENT;
    const orphaned =
      process.env['npm_execpath'] === undefined
        ? undefined
        : setInterval(() => {
            if (process.ppid !== parent) stop();
          }, PARENT_CHECK_MS);
    orphaned?.unref();
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.off('SIGHUP', hangup);
      clearInterval(orphaned);
      const deadline = setTimeout(() => process.exit(process.exitCode ?? 0), options.graceMs + CLOSE_MS);
      deadline.unref();
      void server
        .close(options.graceMs)
        .then(() => options.close?.())
        .catch(() => undefined)
        .then(() => resolve());
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    process.on('SIGHUP', hangup);
  });
}
