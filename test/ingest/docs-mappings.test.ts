/**
 * docs/ingest-mappings.md against the code: every key of the `csv` and `candles` mapping schemas is
 * documented, and every example mapping in the page is valid.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerIngest } from '../../src/cli/ingest.js';
import {
  CANDLE_PRESETS,
  CandlesMappingSchema,
  parseCandlesMapping,
} from '../../src/ingest/formats/candles.js';
import { OptionMappingSchema, parseOptionMapping } from '../../src/ingest/formats/csv-mapping.js';
import { REPO_ROOT } from '../helpers/paths.js';

const PAGE = readFileSync(`${REPO_ROOT}docs/ingest-mappings.md`, 'utf8');

/** The body of each fenced block whose info string is `json <kind>`. */
function examples(kind: 'csv' | 'candles'): unknown[] {
  return [...PAGE.matchAll(/^```json (\w+)\n([\s\S]*?)^```$/gm)]
    .filter((match) => match[1] === kind)
    .map((match) => JSON.parse(match[2]!) as unknown);
}

/** The text of the page's section `## heading` (up to the next `## `). */
function section(heading: string): string {
  const start = PAGE.indexOf(`## ${heading}`);
  expect(start).toBeGreaterThanOrEqual(0);
  const end = PAGE.indexOf('\n## ', start + 1);
  return PAGE.slice(start, end === -1 ? undefined : end);
}

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
