/** Ctrl-C during a write: stop the transaction, remove what it wrote, say so, and exit 130. */
import type { WriteTransaction } from '../store/writer.js';

/** The exit status of a process ended by SIGINT, as shells report it. */
export const INTERRUPTED_EXIT = 130;

/**
 * Runs `work` on `tx` with SIGINT handled: the first Ctrl-C interrupts the transaction, which then ends
 * without publishing anything and removes the files it wrote (as the next writer would), and the command
 * says what happened and exits 130. A Ctrl-C while the manifest is being replaced lets that finish. A
 * second Ctrl-C exits at once; the next writer removes what is left.
 */
export async function interruptible(tx: WriteTransaction, work: () => Promise<void>): Promise<void> {
  let signals = 0;
  const onSigint = () => {
    if (signals++ > 0) process.exit(INTERRUPTED_EXIT);
    tx.interrupt();
  };
  process.on('SIGINT', onSigint);
  try {
    await work();
    if (tx.interruptedLate) {
      process.stderr.write('interrupted: the commit had already finished, and stands\n');
      process.exitCode = INTERRUPTED_EXIT;
    }
  } catch (error) {
    if (!tx.interrupted) throw error;
    await tx.abort();
    const store = tx.creating ? 'no store was created' : 'the store is as it was';
    process.stderr.write(`\ninterrupted: nothing was committed; ${store}\n`);
    process.exitCode = INTERRUPTED_EXIT;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
