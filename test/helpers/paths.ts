import { cp } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The sample store the tests copy. */
export const SAMPLE_STORE = join(REPO_ROOT, 'data/sample');

/**
 * Copies the sample store to `to`, without its `leases/`: other test processes reading the sample take
 * and drop leases there while it is copied (a lease removed mid-copy failed the copy), and a copy needs
 * none of them.
 */
export function copySampleStore(to: string): Promise<void> {
  const leases = join(SAMPLE_STORE, 'leases');
  return cp(SAMPLE_STORE, to, {
    recursive: true,
    filter: (source) => source !== leases && !source.startsWith(`${leases}${sep}`),
  });
}
