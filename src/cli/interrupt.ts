/** Ctrl-C during a write: stop the transaction, remove what it wrote, say so, and exit 130. */
import type { WriteTransaction } from '../store/writer.js';

/** The exit status of a process ended by SIGINT, as shells report it. */
export const INTERRUPTED_EXIT = 130;

/** What a command writing through a transaction does with Ctrl-C (see `guardInterrupts`). */
export type InterruptGuard = {
  /** Ends an interrupted command (nothing committed) with its message and status; rethrows anything else. */
  settle(error: unknown): Promise<void>;
  /** Stops handling SIGINT, and reports an interrupt that came once the commit could only complete. */
  done(): void;
};

/**
 * Handles SIGINT while a command writes through `tx`: the first Ctrl-C interrupts the transaction, which
 * then ends without publishing anything and removes the files it wrote (as the next writer would), and
 * the command says what happened and exits 130. A Ctrl-C while the manifest is being replaced lets that
 * finish. A second Ctrl-C exits at once; the next writer removes what is left.
 */
export function guardInterrupts(tx: WriteTransaction): InterruptGuard {
  let signals = 0;
  const onSigint = () => {
    if (signals++ > 0) process.exit(INTERRUPTED_EXIT);
    tx.interrupt();
  };
  process.on('SIGINT', onSigint);
  return {
    async settle(error) {
      if (!tx.interrupted) throw error;
      await tx.abort();
      const store = tx.creating ? 'no store was created' : 'the store is as it was';
      process.stderr.write(`\ninterrupted: nothing was committed; ${store}\n`);
      process.exitCode = INTERRUPTED_EXIT;
    },
    done() {
      process.off('SIGINT', onSigint);
      if (tx.interruptedLate) {
        process.stderr.write('interrupted: the commit had already finished, and stands\n');
        process.exitCode = INTERRUPTED_EXIT;
      }
    },
  };
}
