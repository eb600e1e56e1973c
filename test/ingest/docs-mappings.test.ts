/**
 * The ingest docs against the code, both ways: docs/ingest-mappings.md documents every key of the `csv`
 * and `candles` mapping schemas and no key they lack, every preset and `time` keyword, and only valid
 * example mappings; docs/vendor-formats.md and the README name every ingest format and no other.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerIngest } from '../../src/cli/ingest.js';
import {
  CANDLE_PRESETS,
  CandlesMappingSchema,
  parseCandlesMapping,
  TIME_KEYWORDS,
} from '../../src/ingest/formats/candles.js';
import { OptionMappingSchema, parseOptionMapping } from '../../src/ingest/formats/csv-mapping.js';
import { ingestFormats } from '../../src/ingest/formats/index.js';
import { REPO_ROOT } from '../helpers/paths.js';

const PAGE = readFileSync(`${REPO_ROOT}docs/ingest-mappings.md`, 'utf8');

/** The body of each fenced block whose info string is `json <kind>`. */
function examples(kind: 'csv' | 'candles'): unknown[] {
  return [...PAGE.matchAll(/^```json (\w+)\n([\s\S]*?)^```$/gm)]
    .filter((match) => match[1] === kind)
    .map((match) => JSON.parse(match[2]!) as unknown);
}

/** The text of a page's section `## heading` (up to the next `## `). */
function section(heading: string, page = PAGE): string {
  const start = page.indexOf(`## ${heading}`);
  expect(start).toBeGreaterThanOrEqual(0);
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end === -1 ? undefined : end);
}

/** The table rows of a text, as their cells. */
function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

/** The code spans of a text: `a`, `b` → a, b. */
function spans(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
}

/** The names in the first column of a section's table(s). */
function keyColumn(text: string): string[] {
  return rows(text).flatMap((cells) => spans(cells[0]!));
}

const FORMATS = ingestFormats().map((format) => format.name);

describe('docs/ingest-mappings.md', () => {
  it('documents every key of the csv mapping in its csv section', () => {
    const text = section('`csv`');
    expect(Object.keys(OptionMappingSchema.shape).filter((key) => !text.includes(`\`${key}\``))).toEqual([]);
  });

  it('documents every key, column and preset of the candles mapping in its candles section', () => {
    const text = section('`candles`');
    const keys = [
      ...Object.keys(CandlesMappingSchema.shape),
      ...Object.keys(CandlesMappingSchema.shape.columns.shape),
      ...Object.keys(CANDLE_PRESETS),
    ];
    expect(keys.filter((key) => !text.includes(`\`${key}\``))).toEqual([]);
  });

  it('documents no mapping key the schemas do not have', () => {
    const csvKeys = Object.keys(OptionMappingSchema.shape);
    expect(keyColumn(section('`csv`')).filter((key) => !csvKeys.includes(key))).toEqual([]);
    const candleKeys = Object.keys(CandlesMappingSchema.shape);
    expect(keyColumn(section('`candles`')).filter((key) => !candleKeys.includes(key))).toEqual([]);
  });

  it('names exactly the presets, time keywords and enumerated values the schemas accept', () => {
    const candles = section('`candles`');
    const preset = rows(candles).find((cells) => cells[0] === '`preset`')!;
    expect(spans(preset[1]!).sort()).toEqual(Object.keys(CANDLE_PRESETS).sort());
    const times = candles
      .slice(candles.indexOf('`time` is one of:'))
      .split('\n\n')[1]!
      .split('\n')
      .filter((line) => line.startsWith('- `'))
      .flatMap((line) => spans(line.slice(0, line.indexOf(':'))));
    expect(times.sort()).toEqual([...TIME_KEYWORDS].sort());
    const csv = rows(section('`csv`'));
    const cell = (key: string, column: number) => csv.find((cells) => cells[0] === `\`${key}\``)![column]!;
    for (const value of OptionMappingSchema.shape.volumeTime.unwrap().options) {
      expect(cell('volumeTime', 1)).toContain(`"${value}"`);
    }
    const settled = OptionMappingSchema.shape.openInterest.unwrap().options[1].shape.settled.unwrap().options;
    for (const value of settled) expect(cell('openInterest', 2)).toContain(`"${value}"`);
  });

  it('gives only valid example mappings', () => {
    const csv = examples('csv');
    const candles = examples('candles');
    expect(csv.length).toBeGreaterThanOrEqual(4);
    expect(candles.length).toBeGreaterThanOrEqual(4);
    for (const mapping of csv) expect(() => parseOptionMapping(mapping)).not.toThrow();
    for (const mapping of candles) expect(() => parseCandlesMapping(mapping)).not.toThrow();
  });

  it('prints the lean-minute preset as the code has it', () => {
    const [printed] = examples('candles');
    const { preset: _, ...fromPreset } = parseCandlesMapping({ preset: 'lean-minute' });
    expect(parseCandlesMapping(printed)).toEqual(fromPreset);
  });

  it('is linked from the README and from pitchain ingest --help, beside the vendor formats page', () => {
    const readme = readFileSync(`${REPO_ROOT}README.md`, 'utf8');
    const program = new Command();
    registerIngest(program);
    let help = '';
    const ingest = program.commands.find((command) => command.name() === 'ingest')!;
    ingest.configureOutput({ writeOut: (text) => (help += text) });
    ingest.outputHelp();
    for (const page of ['docs/ingest-mappings.md', 'docs/vendor-formats.md']) {
      expect(existsSync(`${REPO_ROOT}${page}`)).toBe(true);
      expect(readme).toContain(`](${page})`);
      expect(help).toContain(page);
    }
  });
});

describe('docs/vendor-formats.md and the README', () => {
  it('name every ingest format, and no other, in their format tables', () => {
    const vendor = readFileSync(`${REPO_ROOT}docs/vendor-formats.md`, 'utf8');
    const table = keyColumn(section('Every format', vendor));
    expect([...table].sort()).toEqual([...FORMATS].sort());
    const readme = readFileSync(`${REPO_ROOT}README.md`, 'utf8');
    const start = readme.search(/^\| format +\|/m);
    expect(start).toBeGreaterThanOrEqual(0);
    const readmeTable = readme.slice(start).split('\n\n')[0]!;
    expect(keyColumn(readmeTable).sort()).toEqual([...FORMATS].sort());
  });
});
