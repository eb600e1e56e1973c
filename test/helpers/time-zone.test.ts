import { describe, expect, it } from 'vitest';
import { pinTimeZone } from './time-zone.js';

const host = process.env['TZ'];

describe('a file that pins its time zone', () => {
  pinTimeZone('Asia/Tokyo');

  it('runs in that zone', () => {
    expect(process.env['TZ']).toBe('Asia/Tokyo');
    expect(new Date(0).getTimezoneOffset()).toBe(-540);
  });
});

describe('what runs after it in the same worker', () => {
  it('finds the zone it had before', () => {
    expect(process.env['TZ']).toBe(host);
  });
});
