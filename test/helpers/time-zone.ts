import { afterAll } from 'vitest';

/**
 * Sets the process's time zone for the calling test file from now on (called at its top level, so that
 * its module-level code sees the zone too), and puts the previous one back after the file's tests: a
 * file run in a worker shared with others (see vitest.config.ts) must not leave its zone to the next.
 */
export function pinTimeZone(zone: string): void {
  const before = process.env['TZ'];
  process.env['TZ'] = zone;
  afterAll(() => {
    if (before === undefined) delete process.env['TZ'];
    else process.env['TZ'] = before;
  });
}
