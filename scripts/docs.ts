/**
 * `npm run docs`: writes the generated endpoint pages into `docs/endpoints/` (and removes pages no endpoint
 * has any more). `npm run docs -- --check` writes nothing and exits 1 when the committed pages differ.
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENDPOINT_DOCS_DIR, endpointPages } from './docs/endpoint-pages.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const check = process.argv.includes('--check');
const pages = await endpointPages(root);
const committed = (await readdir(join(root, ENDPOINT_DOCS_DIR)).catch(() => [] as string[])).map(
  (name) => `${ENDPOINT_DOCS_DIR}/${name}`,
);
const stale = committed.filter((file) => !pages.has(file));
const changed: string[] = [];
for (const [file, text] of pages) {
  const before = await readFile(join(root, file), 'utf8').catch(() => undefined);
  if (before === text) continue;
  changed.push(file);
  if (!check) {
    await mkdir(dirname(join(root, file)), { recursive: true });
    await writeFile(join(root, file), text);
  }
}
if (!check) for (const file of stale) await rm(join(root, file));
for (const file of changed) process.stdout.write(`${check ? 'differs' : 'wrote'}: ${file}\n`);
for (const file of stale) process.stdout.write(`${check ? 'not generated' : 'removed'}: ${file}\n`);
if (check && changed.length + stale.length > 0) {
  process.stderr.write('The endpoint pages differ from what the code generates: run npm run docs.\n');
  process.exitCode = 1;
}
