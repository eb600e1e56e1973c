/**
 * Ingest refuses what cannot be true, with the file and line: a negative underlying price or strike, a
 * quote dated after the ingest, a bid above its ask by more than a cent, and files whose text no reader can
 * split (a directory, CR-only or mixed line endings, an unterminated quote). A refused file leaves the
 * store as it was.
 */
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestError } from '../../src/errors.js';
import { type StageFilesOptions, stageFiles } from '../../src/ingest/ingest.js';
import { SqlSession } from '../../src/store/sql.js';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { REPO_ROOT } from '../helpers/paths.js';

const FIXTURE = path.join(REPO_ROOT, 'test/fixtures/ingest/hod_l2_rejects.csv');
const [HEADER, ROW] = readFileSync(FIXTURE, 'utf8').split('\r\n') as [string, string];
/** The ingest's instant in these tests: a pinned clock, long after the fixture's 2018 sessions. */
const NOW = new Date('2026-11-26T17:00:00Z');

/** The fixture's good row with some cells replaced (by header position), as another strike. */
function row(changes: Record<number, string> = {}, strike = 2700): string {
  const cells = ROW.split(',');
  for (const [i, value] of Object.entries(changes)) cells[Number(i)] = value;
  const symbol = `SPXW180131C0${strike}000`;
  cells[3] = symbol;
  cells[19] = symbol;
  cells[8] = String(strike);
  return cells.join(',');
}

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-refusals-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function write(name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  await fs.writeFile(file, text);
  return file;
}

/** What staging `file` as hod throws (or undefined when it stages). */
async function refusal(file: string, options: StageFilesOptions = {}): Promise<unknown> {
  const sql = await SqlSession.open();
  try {
    await stageFiles(sql, [file], 'hod', { greeksUnits: 'none', now: NOW, ...options });
    return undefined;
  } catch (error) {
    return error;
  } finally {
    sql.close();
  }
}

describe('ingest refuses values that cannot be true', () => {
  it('a negative underlying price, naming the line', async () => {
    const file = await write('negative.csv', `${HEADER}\r\n${row()}\r\n${row({ 1: '-5' }, 2705)}\r\n`);
    expect(await refusal(file)).toEqual(new IngestError(file, 3, 'negative value: underlying_price -5.0000'));
  });

  it('a quote dated after the ingest (the clock pinned), and not the same quote ingested later', async () => {
    const future = row({ 6: '01/31/2027', 7: '01/04/2027' }).replaceAll('SPXW180131', 'SPXW270131');
    const file = await write('future.csv', `${HEADER}\r\n${future}\r\n`);
    expect(await refusal(file)).toEqual(
      new IngestError(
        file,
        2,
        'quote dated after the ingest: session 2027-01-04 is later than 2026-11-26T17:00:00.000Z',
      ),
    );
    expect(await refusal(file, { now: new Date('2027-01-04T21:00:00Z') })).toBeUndefined();
    // On the session itself, before its 16:00 ET quote time: still the future.
    expect(await refusal(file, { now: new Date('2027-01-04T20:59:00Z') })).toBeInstanceOf(IngestError);
  });

  it('a bid above its ask by more than a cent; crossed by a cent is kept (and counted as crossed)', async () => {
    const cent = await write('cent.csv', `${HEADER}\r\n${row({ 10: '18.61', 11: '18.60' })}\r\n`);
    expect(await refusal(cent)).toBeUndefined();
    const wide = await write('wide.csv', `${HEADER}\r\n${row({ 10: '18.62', 11: '18.60' })}\r\n`);
    expect(await refusal(wide)).toEqual(new IngestError(wide, 2, 'crossed quote: bid 18.62 > ask 18.60'));
  });
});

describe('ingest names the file and line of text no reader can split', () => {
  it('a directory', async () => {
    const folder = path.join(dir, 'folder');
    await fs.mkdir(folder, { recursive: true });
    expect(await refusal(folder)).toEqual(
      new IngestError(
        folder,
        undefined,
        `is a directory, not a file: name the files in it (e.g. ${folder}/*.csv)`,
      ),
    );
  });

  it('CR-only line endings (not a duplicate column)', async () => {
    const file = await write('cr.csv', `${HEADER}\r${row()}\r`);
    expect(await refusal(file)).toEqual(
      new IngestError(
        file,
        1,
        'line ends with a carriage return alone (old Mac line endings): convert the file to LF or CRLF',
      ),
    );
  });

  it('CRLF and LF mixed (not a raw reader error), with the Greek units detected or not', async () => {
    const file = await write('mixed.csv', `${HEADER}\r\n${row()}\r\n${row({}, 2705)}\n${row({}, 2710)}\r\n`);
    const expected = new IngestError(
      file,
      3,
      'line ends with LF where the lines before end with CRLF (mixed line endings): convert the file to one',
    );
    expect(await refusal(file)).toEqual(expected);
    expect(await refusal(file, { greeksUnits: 'auto' })).toEqual(expected);
  });

  it('an unterminated quote, not a failure to establish Greek units', async () => {
    const open = row({ 4: '"abc' }, 2705);
    const file = await write('unterminated.csv', `${HEADER}\r\n${row()}\r\n${open}\r\n${row({}, 2710)}\r\n`);
    const expected = new IngestError(
      file,
      3,
      'unterminated quote: a quoted field opened on this line never closes',
    );
    expect(await refusal(file, { greeksUnits: 'auto' })).toEqual(expected);
  });
});

describe('pitchain ingest', () => {
  const cli = (...args: string[]) => runCli(args, { timeoutMs: 120_000 });
  beforeAll(ensureBuilt, 180_000);

  it('refuses a directory with exit 1 and file: reason, no stack', async () => {
    const folder = path.join(dir, 'cli-folder');
    await fs.mkdir(folder, { recursive: true });
    const result = await cli('ingest', '--store', path.join(dir, 'cli-store'), '--format', 'hod', folder);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `pitchain: ${folder}: is a directory, not a file: name the files in it (e.g. ${folder}/*.csv)\n`,
    );
  });

  it('leaves the store as it was when a row is refused', async () => {
    const store = path.join(dir, 'kept');
    const good = await write('good.csv', `${HEADER}\r\n${row()}\r\n`);
    const first = await cli('ingest', '--store', store, '--format', 'hod', '--greeks-units', 'none', good);
    expect(first.code, first.stderr).toBe(0);
    const before = await fs.readFile(path.join(store, 'manifest.json'), 'utf8');
    const bad = await write('bad.csv', `${HEADER}\r\n${row({ 1: '-5' }, 2705)}\r\n`);
    const second = await cli('ingest', '--store', store, '--format', 'hod', '--greeks-units', 'none', bad);
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(`pitchain: ${bad}:2: negative value: underlying_price -5.0000\n`);
    expect(await fs.readFile(path.join(store, 'manifest.json'), 'utf8')).toBe(before);
  });
});
