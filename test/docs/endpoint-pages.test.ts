/**
 * docs/endpoints/ is what the code generates (`npm run docs`): parameters from each endpoint's zod schema,
 * fields from the answers the endpoints give, known-at families from src/pit/known-at.ts, credits from
 * src/billing/credits.ts, and example responses run against data/sample at a pinned clock. A change to
 * any of them without regenerating the pages fails here.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DocsDriftError,
  ENDPOINT_DOCS_DIR,
  endpointPages,
  pageName,
} from '../../scripts/docs/endpoint-pages.js';
import { ENDPOINT_TEXTS, type PageText } from '../../scripts/docs/endpoint-texts.js';
import { fixedClock } from '../../src/market-time/index.js';
import { OPTION_FIELD_KNOWN_AT } from '../../src/pit/known-at.js';
import { ENDPOINTS } from '../../src/query/endpoints/index.js';
import { OPTION_COLUMNS } from '../../src/query/options/columns.js';
import { paramNames, paramShapes } from '../../src/query/params.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { pinTimeZone } from '../helpers/time-zone.js';

// Far from New York: nothing on the pages may depend on the host's zone.
pinTimeZone('Australia/Lord_Howe');

let pages: Map<string, string>;
beforeAll(async () => {
  pages = await endpointPages(REPO_ROOT);
}, 120_000);

const page = (service: string) => pages.get(`${ENDPOINT_DOCS_DIR}/${pageName(service)}`) ?? '';

/** The rows of the table under a page's `## heading`, other than its header. */
function tableRows(text: string, heading: string): string[] {
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) return [];
  const end = text.indexOf('\n## ', start + 1);
  return text
    .slice(start, end < 0 ? undefined : end)
    .split('\n')
    .filter((line) => line.startsWith('| `'));
}

/** The first cell of every row of a page's `## heading` table. */
function firstColumn(text: string, heading: string): string[] {
  return tableRows(text, heading).map((line) => /^\| `([^`]+)`/.exec(line)![1]!);
}

describe('docs/endpoints', () => {
  it('is committed exactly as the code generates it (run npm run docs after a change)', async () => {
    const committed = (await readdir(join(REPO_ROOT, ENDPOINT_DOCS_DIR))).map(
      (name) => `${ENDPOINT_DOCS_DIR}/${name}`,
    );
    expect(committed.sort()).toEqual([...pages.keys()].sort());
    for (const [file, text] of pages) {
      const onDisk = await readFile(join(REPO_ROOT, file), 'utf8');
      expect(onDisk, `${file} differs from what the code generates: run npm run docs`).toBe(text);
    }
  });

  it('has a page for every service the router answers and for /status/, /headers/ and /user/', () => {
    const services = [
      ...new Set(ENDPOINTS.map((endpoint) => endpoint.service)),
      '/status/',
      '/headers/',
      '/user/',
    ];
    expect(services.filter((service) => page(service) === '')).toEqual([]);
    const index = pages.get(`${ENDPOINT_DOCS_DIR}/README.md`)!;
    expect(services.filter((service) => !index.includes(`](${pageName(service)})`))).toEqual([]);
  });

  it('lists exactly the parameters each endpoint schema reads, each with a shape', () => {
    for (const service of new Set(ENDPOINTS.map((endpoint) => endpoint.service))) {
      const endpoints = ENDPOINTS.filter((endpoint) => endpoint.service === service);
      const schemaKeys = endpoints.flatMap((endpoint) => Object.keys(endpoint.schema(fixedClock(0)).shape));
      const listed = firstColumn(page(service), 'Parameters');
      expect(
        schemaKeys.filter((key) => !listed.includes(key)),
        service,
      ).toEqual([]);
      const accepted = new Set(endpoints.flatMap(paramNames));
      expect(
        listed.filter((key) => !accepted.has(key)),
        service,
      ).toEqual([]);
      for (const endpoint of endpoints) {
        for (const [key, schema] of Object.entries(endpoint.schema(fixedClock(0)).shape)) {
          const inner = (schema as { unwrap?: () => unknown }).unwrap?.() ?? schema;
          expect(paramShapes.has(inner as Parameters<typeof paramShapes.has>[0]), `${service} ${key}`).toBe(
            true,
          );
        }
      }
    }
  });

  it('gives every option field its type and the known-at family of src/pit/known-at.ts', () => {
    for (const service of ['/v1/options/chain/', '/v1/options/quotes/']) {
      const text = page(service);
      expect(firstColumn(text, 'Fields')).toEqual(OPTION_COLUMNS.map((column) => column.key));
      for (const column of OPTION_COLUMNS) {
        const row = tableRows(text, 'Fields').find((line) => line.startsWith(`| \`${column.key}\` `))!;
        const family = OPTION_FIELD_KNOWN_AT[column.key];
        expect(row.split('|').map((cell) => cell.trim())[2], column.key).toBe(column.kind);
        expect(row, column.key).toContain(`| \`${family}\`: `);
      }
    }
  });

  it('shows example responses the sample store really gives at the pinned clock', () => {
    const chain = page('/v1/options/chain/');
    // The 15:45 snapshot's quote time, and the historical answer's null Greeks.
    expect(chain).toContain('"updated": [1584387900,1584387900]');
    expect(chain).toContain('"delta": [null,null]');
    expect(chain).toMatch(/X-Api-Ratelimit-Consumed: 2\n/);
  });

  it('refuses texts that miss a parameter or field of the code, or name one it lacks', async () => {
    const chain = ENDPOINT_TEXTS['/v1/options/chain/']!;
    const { strikeLimit: _limit, ...params } = chain.params;
    const { vega: _vega, ...fields } = chain.fields;
    const broken: PageText = {
      ...chain,
      params: { ...params, strikeLimt: { meaning: 'a typo' } },
      fields: { ...fields, rho: { unit: 'USD', meaning: 'not served' } },
    };
    const error = await endpointPages(REPO_ROOT, { ...ENDPOINT_TEXTS, '/v1/options/chain/': broken }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DocsDriftError);
    expect((error as DocsDriftError).problems).toEqual([
      '/v1/options/chain/ parameters: the code has strikeLimit, the texts do not',
      '/v1/options/chain/ parameters: the texts have strikeLimt, the code does not',
      '/v1/options/chain/ fields: the code has vega, the texts do not',
      '/v1/options/chain/ fields: the texts have rho, the code does not',
    ]);
  }, 120_000);
});
