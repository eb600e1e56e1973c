import { fileURLToPath } from 'node:url';
import { sharedPath } from './shared-files.js';

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A file of the shared market data, e.g. `sharedData('options/hod_SPXW_2018-01-02_to_2018-02-28.csv')`,
 * wherever `shared-files.ts` finds it. Not gated: a test that needs a file not committed goes through
 * `withData` in `shared-data.ts`, which skips it when the file is not on this machine.
 */
export function sharedData(relative: string): string {
  return sharedPath(`data/${relative}`);
}
