/**
 * docs/point-in-time.md and its timeline picture against the code: the field families of
 * src/pit/known-at.ts, the modes and the delay of src/pit/as-of.ts, the look-ahead policies of
 * src/pit/policy.ts, and the session instants the picture marks, read from the calendar.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  formatInstant,
  indexOptionCloseSeconds,
  sessionCloseSeconds,
  sessionOpenSeconds,
} from '../../src/market-time/index.js';
import { DELAY_SECONDS } from '../../src/pit/as-of.js';
import { OPTION_FIELD_KNOWN_AT } from '../../src/pit/known-at.js';
import { parsePolicy } from '../../src/pit/policy.js';
import { parseMode } from '../../src/service/modes.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { pinTimeZone } from '../helpers/time-zone.js';

pinTimeZone('Asia/Kolkata');

const PAGE = readFileSync(`${REPO_ROOT}docs/point-in-time.md`, 'utf8');
const SVG = readFileSync(`${REPO_ROOT}docs/point-in-time.svg`, 'utf8');

/** The cells of the table rows under `## heading`. */
function rows(heading: string): string[][] {
  const start = PAGE.indexOf(`\n## ${heading}\n`);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const end = PAGE.indexOf('\n## ', start + 1);
  return PAGE.slice(start, end < 0 ? undefined : end)
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

const spans = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);

const DAY = '2020-03-16';
const EARLY = '2019-11-29'; // the day after Thanksgiving closes at 13:00

/** ET wall time `HH:MM` of an instant. */
const wall = (seconds: number) => String(formatInstant(seconds, 'timestamp')).slice(11, 16);

describe('docs/point-in-time.md', () => {
  it('puts every option field in the known-at family src/pit/known-at.ts gives it', () => {
    const table = rows('When each field becomes known').map(([family, fields]) => [
      spans(family!)[0],
      spans(fields!).sort(),
    ]);
    const families = [...new Set(Object.values(OPTION_FIELD_KNOWN_AT))];
    const expected = families.map((family) => [
      family,
      Object.entries(OPTION_FIELD_KNOWN_AT)
        .filter(([, f]) => f === family)
        .map(([field]) => field)
        .sort(),
    ]);
    expect(table.sort()).toEqual(expected.sort());
  });

  it('lists the modes the service reads, with the delay of delayed', () => {
    const modes = rows('Current requests and modes').map(([mode]) => spans(mode!)[0]!);
    expect(modes).toEqual(['live', 'delayed', 'eod', 'historical', 'cached']);
    expect(modes.map((mode) => parseMode(mode))).toEqual(modes);
    const delayed = rows('Current requests and modes').find(([mode]) => mode === '`delayed`')![1]!;
    expect(delayed).toContain(`T − ${DELAY_SECONDS / 60} min`);
    const eod = rows('Current requests and modes').find(([mode]) => mode === '`eod`')![1]!;
    expect(eod).toContain(
      `(${wall(indexOptionCloseSeconds(DAY))} ET, ${wall(indexOptionCloseSeconds(EARLY))} on early closes)`,
    );
  });

  it('lists the look-ahead policies, strict first as the default', () => {
    const policies = rows('Look-ahead policies of the backtest face').map(([policy, what]) => [
      spans(policy!)[0]!,
      what!,
    ]);
    expect(policies.map(([policy]) => parsePolicy(policy))).toEqual(['strict', 'mask', 'flag']);
    expect(parsePolicy(undefined)).toBe('strict');
    expect(policies[0]![1]).toMatch(/^the default/);
  });

  it('shows the timeline picture, whose session instants are the calendar’s', () => {
    expect(PAGE).toContain('](point-in-time.svg)');
    expect(SVG.trimStart().startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(SVG.trimEnd().endsWith('</svg>')).toBe(true);
    expect(SVG.match(/<text\b/g)?.length).toBe(SVG.match(/<\/text>/g)?.length);
    const labels = [...SVG.matchAll(/text-anchor="end">([^<]+)</g)].map((match) => match[1]);
    expect(labels).toEqual([
      wall(sessionOpenSeconds(DAY)),
      'q',
      '15:45',
      wall(sessionCloseSeconds(DAY)),
      wall(indexOptionCloseSeconds(DAY)),
      '00:00 D+1',
      `${wall(sessionOpenSeconds('2020-03-17'))} D+1`,
    ]);
    expect(SVG).toContain(`Close (${wall(sessionCloseSeconds(EARLY))} on early-close days)`);
    expect(SVG).toContain(`Index options close (${wall(indexOptionCloseSeconds(EARLY))} early)`);
  });
});
