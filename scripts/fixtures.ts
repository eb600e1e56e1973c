/**
 * `npm run fixtures`: makes every shared file the tests and benchmarks read available, each checked
 * against its pinned sha256 (the list, with origins, is `test/helpers/shared-files.ts`).
 *
 *   npm run fixtures                  fetch what is missing from its pinned upstream URL
 *   npm run fixtures -- --from DIR    copy what is missing from DIR (the shared layout) instead
 *   npm run fixtures -- --check       fetch nothing; exit 1 if a file is missing or not the pinned one
 *
 * A file already found (committed, in PITCHAIN_SHARED or ../shared, or fetched before) is only checked.
 * What is fetched goes to test/fixtures/downloaded/, which git ignores.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inflateRawSync } from 'node:zlib';
import {
  DOWNLOADED_DIR,
  findShared,
  type Origin,
  SHARED_FILES,
  type SharedFile,
} from '../test/helpers/shared-files.js';

export type Download = (url: string) => Promise<Uint8Array>;

export type FixtureResult = {
  readonly file: string;
  readonly outcome: 'present' | 'copied' | 'downloaded' | 'missing' | 'mismatch' | 'failed';
  readonly detail?: string;
};

export type FixtureOptions = {
  /** The files to make available (default: every shared file). */
  readonly files?: Readonly<Record<string, SharedFile>>;
  /** Where a file is found already, if anywhere (default: the tests' own lookup). */
  readonly find?: (file: string) => string | undefined;
  /** Where fetched files go (default test/fixtures/downloaded). */
  readonly into?: string;
  /** Copy missing files from this folder (the shared layout) rather than download them. */
  readonly from?: string;
  /** Check only: fetch nothing. */
  readonly check?: boolean;
  readonly download?: Download;
};

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Makes each file available and says what happened to it; never throws for one file's failure. */
export async function fetchFixtures(options: FixtureOptions = {}): Promise<FixtureResult[]> {
  const files = options.files ?? SHARED_FILES;
  const find = options.find ?? ((file: string) => findShared(file));
  const into = options.into ?? DOWNLOADED_DIR;
  const results: FixtureResult[] = [];
  for (const [file, spec] of Object.entries(files)) {
    results.push(await makeAvailable(file, spec, { ...options, find, into }));
  }
  return results;
}

async function makeAvailable(
  file: string,
  spec: SharedFile,
  options: FixtureOptions & { find: (file: string) => string | undefined; into: string },
): Promise<FixtureResult> {
  const found = options.find(file);
  if (found !== undefined) return verified(file, spec, await readFile(found), found, 'present');
  if (options.check === true) return { file, outcome: 'missing' };
  try {
    if (options.from !== undefined) {
      const source = join(options.from, file);
      if (!existsSync(source)) return { file, outcome: 'missing', detail: `not in ${options.from}` };
      const bytes = await readFile(source);
      const result = verified(file, spec, bytes, source, 'copied');
      if (result.outcome === 'copied') await writeAtomically(join(options.into, file), bytes);
      return result;
    }
    if (spec.origin === undefined)
      return { file, outcome: 'missing', detail: 'committed, but not in the checkout' };
    const bytes = extract(spec.origin, await (options.download ?? httpGet)(spec.origin.url));
    const result = verified(file, spec, bytes, spec.origin.url, 'downloaded');
    if (result.outcome === 'downloaded') await writeAtomically(join(options.into, file), bytes);
    return result;
  } catch (error) {
    return { file, outcome: 'failed', detail: error instanceof Error ? error.message : String(error) };
  }
}

function verified(
  file: string,
  spec: SharedFile,
  bytes: Uint8Array,
  source: string,
  outcome: 'present' | 'copied' | 'downloaded',
): FixtureResult {
  const actual = sha256(bytes);
  if (actual === spec.sha256) return { file, outcome, detail: source };
  return {
    file,
    outcome: 'mismatch',
    detail: `${source} has sha256 ${actual}, not the pinned ${spec.sha256}`,
  };
}

/** The bytes a file is made of, out of what its origin URL served. */
export function extract(origin: Origin, bytes: Uint8Array): Uint8Array {
  if ('zipEntry' in origin) return zipEntry(bytes, origin.zipEntry);
  if ('fencedJson' in origin) return fencedJson(bytes, origin.fencedJson);
  return bytes;
}

/** The text of the n-th ```json fenced block of a Markdown page, up to and including its last newline. */
export function fencedJson(page: Uint8Array, n: number): Uint8Array {
  const blocks = [
    ...Buffer.from(page)
      .toString('utf8')
      .matchAll(/^```json\n([\s\S]*?)^```/gm),
  ];
  const block = blocks[n];
  if (block === undefined) throw new Error(`the page has ${blocks.length} json blocks, not ${n + 1}`);
  return Buffer.from(block[1] as string, 'utf8');
}

/** One entry of a zip archive (stored or deflated), found through its central directory. */
export function zipEntry(zip: Uint8Array, name: string): Uint8Array {
  const buffer = Buffer.from(zip);
  const end = buffer.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('not a zip archive (no end of central directory)');
  const count = buffer.readUInt16LE(end + 10);
  let at = buffer.readUInt32LE(end + 16);
  for (let i = 0; i < count; i++) {
    if (buffer.readUInt32LE(at) !== 0x02014b50) throw new Error('damaged zip central directory');
    const method = buffer.readUInt16LE(at + 10);
    const size = buffer.readUInt32LE(at + 20);
    const nameLength = buffer.readUInt16LE(at + 28);
    const skip = nameLength + buffer.readUInt16LE(at + 30) + buffer.readUInt16LE(at + 32);
    const local = buffer.readUInt32LE(at + 42);
    if (buffer.toString('utf8', at + 46, at + 46 + nameLength) === name) {
      const start = local + 30 + buffer.readUInt16LE(local + 26) + buffer.readUInt16LE(local + 28);
      const data = buffer.subarray(start, start + size);
      if (method === 0) return data;
      if (method === 8) return inflateRawSync(data);
      throw new Error(`zip entry ${name} uses compression method ${method}`);
    }
    at += 46 + skip;
  }
  throw new Error(`no entry ${name} in the zip archive`);
}

async function httpGet(url: string): Promise<Uint8Array> {
  const response = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${response.statusText}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function writeAtomically(path: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.partial`;
  await writeFile(partial, bytes);
  await rename(partial, path);
}

async function main(argv: readonly string[]): Promise<number> {
  const fromAt = argv.indexOf('--from');
  const from = fromAt >= 0 ? argv[fromAt + 1] : undefined;
  if (fromAt >= 0 && from === undefined) {
    process.stderr.write('--from needs a folder, e.g. npm run fixtures -- --from ../shared\n');
    return 2;
  }
  const results = await fetchFixtures({
    check: argv.includes('--check'),
    ...(from === undefined ? {} : { from }),
  });
  let failed = 0;
  for (const { file, outcome, detail } of results) {
    if (!['present', 'copied', 'downloaded'].includes(outcome)) failed++;
    process.stdout.write(`${outcome.padEnd(10)} ${file}${detail === undefined ? '' : `  (${detail})`}\n`);
  }
  process.stdout.write(
    failed === 0
      ? `all ${results.length} shared files are here\n`
      : `${failed} of ${results.length} are not\n`,
  );
  return failed === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
