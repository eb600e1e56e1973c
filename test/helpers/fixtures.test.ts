/**
 * `npm run fixtures` (scripts/fixtures.ts): the pinned hashes hold for every shared file on this machine,
 * and a file fetched or copied is written only when it is the pinned one. The network is replaced by a
 * function serving fixed bytes; everything else (hashing, zip and Markdown extraction, files) is real.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchFixtures, sha256, zipEntry } from '../../scripts/fixtures.js';
import { SHARED_FILES, type SharedFile } from './shared-files.js';

/** A zip archive of the given entries, each deflated or stored, as `zip` writes one. */
function zipOf(entries: ReadonlyArray<{ name: string; text: string; deflate: boolean }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, text, deflate } of entries) {
    const raw = Buffer.from(text);
    const data = deflate ? deflateRawSync(raw) : raw;
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(deflate ? 8 : 0, 8);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(raw.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(deflate ? 8 : 0, 10);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(raw.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const BARS = '34200000,1,2,0.5,1.5,100\n34260000,1.5,2,1,1,200\n';
const BODY = '{\n  "s": "ok",\n  "status": ["open"]\n}\n';
const PAGE = `# Status\n\n\`\`\`js\nfetch(url)\n\`\`\`\n\n## Response Example\n\n\`\`\`json\n${BODY}\`\`\`\n`;
const CSV = 'date,close\n2020-01-02,1\n';

const FILES: Record<string, SharedFile> = {
  'data/a.csv': { sha256: sha256(Buffer.from(CSV)), origin: { url: 'https://example.test/a.csv' } },
  'data/minute/b.csv': {
    sha256: sha256(Buffer.from(BARS)),
    origin: { url: 'https://example.test/b.zip', zipEntry: 'b.csv' },
  },
  'spec/examples/c.json': {
    sha256: sha256(Buffer.from(BODY)),
    origin: { url: 'https://example.test/c.mdx', fencedJson: 0 },
  },
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitchain-fixtures-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const served = (bodies: Record<string, string | Buffer>) => async (url: string) => {
  const body = bodies[url];
  if (body === undefined) throw new Error(`GET ${url}: 404 Not Found`);
  return new Uint8Array(Buffer.from(body));
};
const nothingFound = () => undefined;

describe('npm run fixtures', () => {
  it('finds every committed shared file, and every shared file on this machine has its pinned hash', async () => {
    const results = await fetchFixtures({ check: true });
    expect(results.map((r) => r.file).sort()).toEqual(Object.keys(SHARED_FILES).sort());
    expect(results.filter((r) => r.outcome === 'mismatch')).toEqual([]);
    const committed = Object.keys(SHARED_FILES).filter((file) => SHARED_FILES[file]?.committed === true);
    expect(committed.length).toBeGreaterThan(0);
    for (const file of committed) {
      expect(results.find((r) => r.file === file)).toMatchObject({ outcome: 'present' });
    }
  });

  it('downloads a file, a zip entry and a Markdown json block, each written only once its hash is checked', async () => {
    const into = join(dir, 'downloaded');
    const download = served({
      'https://example.test/a.csv': CSV,
      'https://example.test/b.zip': zipOf([
        { name: 'other.csv', text: 'x', deflate: false },
        { name: 'b.csv', text: BARS, deflate: true },
      ]),
      'https://example.test/c.mdx': PAGE,
    });
    const results = await fetchFixtures({ files: FILES, find: nothingFound, into, download });
    expect(results.map((r) => [r.file, r.outcome])).toEqual([
      ['data/a.csv', 'downloaded'],
      ['data/minute/b.csv', 'downloaded'],
      ['spec/examples/c.json', 'downloaded'],
    ]);
    expect(readFileSync(join(into, 'data/a.csv'), 'utf8')).toBe(CSV);
    expect(readFileSync(join(into, 'data/minute/b.csv'), 'utf8')).toBe(BARS);
    expect(readFileSync(join(into, 'spec/examples/c.json'), 'utf8')).toBe(BODY);
  });

  it('refuses a download that is not the pinned file, and reports one that fails, writing neither', async () => {
    const into = join(dir, 'refused');
    const download = served({ 'https://example.test/a.csv': 'date,close\n2020-01-02,2\n' });
    const results = await fetchFixtures({ files: FILES, find: nothingFound, into, download });
    expect(results[0]).toMatchObject({ outcome: 'mismatch' });
    expect(results[0]?.detail).toContain(`not the pinned ${FILES['data/a.csv']?.sha256}`);
    expect(results[1]).toEqual({
      file: 'data/minute/b.csv',
      outcome: 'failed',
      detail: 'GET https://example.test/b.zip: 404 Not Found',
    });
    expect(existsSync(into)).toBe(false);
  });

  it('copies from a folder named with --from, checking each file, and only checks a file found already', async () => {
    const from = join(dir, 'shared');
    await mkdir(join(from, 'data'), { recursive: true });
    await writeFile(join(from, 'data/a.csv'), CSV);
    await writeFile(join(from, 'data/minute'), 'not a folder');
    const into = join(dir, 'copied');
    const found = join(dir, 'found.json');
    await writeFile(found, '{"s": "error"}\n');
    const results = await fetchFixtures({
      files: FILES,
      find: (file) => (file === 'spec/examples/c.json' ? found : undefined),
      into,
      from,
    });
    expect(results.map((r) => [r.file, r.outcome])).toEqual([
      ['data/a.csv', 'copied'],
      ['data/minute/b.csv', 'missing'],
      ['spec/examples/c.json', 'mismatch'],
    ]);
    expect(readFileSync(join(into, 'data/a.csv'), 'utf8')).toBe(CSV);
    expect(existsSync(join(into, 'spec'))).toBe(false);
  });

  it('reads stored and deflated zip entries and names a missing one', () => {
    const zip = zipOf([
      { name: 'stored.csv', text: 'a,b\n', deflate: false },
      { name: 'deflated.csv', text: BARS.repeat(50), deflate: true },
    ]);
    expect(Buffer.from(zipEntry(zip, 'stored.csv')).toString()).toBe('a,b\n');
    expect(Buffer.from(zipEntry(zip, 'deflated.csv')).toString()).toBe(BARS.repeat(50));
    expect(() => zipEntry(zip, 'nope.csv')).toThrow('no entry nope.csv in the zip archive');
    expect(() => zipEntry(Buffer.from('plain text'), 'x')).toThrow('not a zip archive');
  });
});
