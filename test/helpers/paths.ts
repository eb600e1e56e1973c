import { fileURLToPath } from 'node:url';
import { SHARED_FILES, sharedFolder, sharedPath } from './shared-files.js';

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A file of the shared market data, e.g. `sharedData('options/hod_SPXW_2018-01-02_to_2018-02-28.csv')`,
 * wherever `shared-files.ts` finds it (a file it does not list: in the shared folder). Not gated: a test
 * that needs a file not committed goes through `withData` in `shared-data.ts`, which skips it when the
 * file is not on this machine.
 */
export function sharedData(relative: string): string {
  const file = `data/${relative}`;
  if (file in SHARED_FILES) return sharedPath(file);
  return `${sharedFolder() ?? fileURLToPath(new URL('../../../shared', import.meta.url))}/${file}`;
}
