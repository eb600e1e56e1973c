/**
 * How big the heavy tests run. `npm test` runs them at a quick size, seeded like the full one, so a
 * contributor's run stays within minutes; CI sets `PITCHAIN_TEST_SIZE=full` (see .ci/run).
 */
export const TEST_SIZE_ENV = 'PITCHAIN_TEST_SIZE';

/** `full` under PITCHAIN_TEST_SIZE=full, else `quick`. */
export function testSize(full: number, quick: number, env: NodeJS.ProcessEnv = process.env): number {
  return env[TEST_SIZE_ENV] === 'full' ? full : quick;
}
