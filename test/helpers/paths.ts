import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The shared folder that CI places beside the checkout (real market data and the specification). */
export const SHARED_DIR = fileURLToPath(new URL('../../../shared/', import.meta.url));

/** A file of the shared market data, e.g. `sharedData('options/hod_SPXW_2018-01-02_to_2018-02-28.csv')`. */
export function sharedData(relative: string): string {
  return `${SHARED_DIR}data/${relative}`;
}
