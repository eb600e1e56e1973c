/**
 * Tokens never leave the server: the accounts file is read with a byte-order mark, a token given twice is
 * refused naming its lines but not itself, `/headers/` masks every credential-bearing header keeping the
 * scheme as sent (a short secret shows nothing of itself), and an error that echoes a parameter does not
 * echo a token written into it.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountBook, accountId } from '../../src/billing/accounts.js';
import { openStore, type Store } from '../../src/library/store.js';

const NOW = '2020-03-16T15:45:00-04:00';
const TOKEN = 'a-long-secret-token-0123456789';

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pitchain-secrets-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** Writes `text` as the accounts file `name` and returns the message `AccountBook.load` refuses it with. */
async function refusal(name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  await fs.writeFile(file, text);
  const error = await AccountBook.load(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return (error as Error).message;
}

describe('the accounts file', () => {
  it('is read with a byte-order mark', async () => {
    const file = path.join(dir, 'bom.json');
    await fs.writeFile(file, `\uFEFF${JSON.stringify({ [TOKEN]: { plan: 'trader' } })}`);
    const book = await AccountBook.load(file);
    expect(book.find(TOKEN)?.plan).toBe('trader');
    expect(book.find(`${TOKEN}x`)).toBeUndefined();
  });

  it('refuses a token given twice, naming both lines and never the token', async () => {
    const message = await refusal(
      'twice.json',
      `{\n  "${TOKEN}": { "plan": "trader" },\n  "other-token-9876543210": { "plan": "free" },\n  "${TOKEN}": { "plan": "free" }\n}\n`,
    );
    expect(message).toMatch(/line 4: this token is also given on line 2/);
    expect(message).not.toContain(TOKEN);
  });

  it('says which line holds a bad account, and not its token', async () => {
    const message = await refusal('bad.json', `{\n  "${TOKEN}": { "plan": "platinum" }\n}\n`);
    expect(message).toMatch(/line 2: plan:/);
    expect(message).not.toContain(TOKEN);
    const broken = await refusal('bad.json', `{\n  "${TOKEN}": { plan: "free" }\n}\n`);
    expect(broken).toMatch(/not valid JSON at line 2/);
    expect(broken).not.toContain(TOKEN);
  });

  it('names an account by its id, else by one derived from its token that shows nothing of it', async () => {
    const file = path.join(dir, 'ids.json');
    await fs.writeFile(
      file,
      JSON.stringify({
        [TOKEN]: { id: 'desk-7', plan: 'trader' },
        'other-token-9876543210': { plan: 'free' },
      }),
    );
    const book = await AccountBook.load(file);
    expect(book.find(TOKEN)?.id).toBe('desk-7');
    const derived = book.find('other-token-9876543210')!.id;
    expect(derived).toMatch(/^account-[0-9a-f]{12}$/);
    expect(derived).toBe(accountId('other-token-9876543210'));
    expect(accountId(TOKEN)).not.toBe(derived);
  });

  it('refuses two accounts of one id, and an id that is not a plain name, never showing a token', async () => {
    const same = await refusal(
      'same-id.json',
      JSON.stringify({
        [TOKEN]: { id: 'desk', plan: 'trader' },
        'other-token-9876543210': { id: 'desk', plan: 'free' },
      }),
    );
    expect(same).toContain(`accounts file ${path.join(dir, 'same-id.json')}: two accounts are named desk`);
    expect(same).not.toContain(TOKEN);
    const bad = await refusal('same-id.json', `{\n  "${TOKEN}": { "id": "../etc", "plan": "free" }\n}\n`);
    expect(bad).toMatch(/line 2: id: an id is 1 to 64 letters/);
    expect(bad).not.toContain(TOKEN);
  });

  it('finds a token among 200,000 accounts', () => {
    const accounts: Record<string, { plan: 'free'; userType: 'nonpro'; opra: boolean }> = {};
    for (let i = 0; i < 200_000; i++)
      accounts[`token-${i}-0123456789`] = { plan: 'free', userType: 'nonpro', opra: false };
    const book = new AccountBook(accounts);
    expect(book.size).toBe(200_000);
    expect(book.find('token-199999-0123456789')?.id).toBe(accountId('token-199999-0123456789'));
    expect(book.find('token-200000-0123456789')).toBeUndefined();
  });
});

describe('what a response shows of credentials', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore('data/sample', { now: NOW, threads: 1 });
  }, 60_000);
  afterAll(() => store.close());

  it('masks every credential-bearing header in /headers/, keeping the scheme as sent', async () => {
    const response = await store.request('/headers/', {
      headers: {
        Authorization: 'Basic dXNlcjpwYXNzd29yZDEyMzQ1Njc4',
        'Proxy-Authorization': 'Bearer abc',
        Cookie: 'session=0123456789abcdef0123',
        'X-Api-Key': 'key-0123456789abcdefgh',
        'X-Auth-Token': 'tok',
        Accept: 'application/json',
      },
    });
    const echoed = JSON.parse(response.body) as Record<string, string>;
    expect(echoed['authorization']).toBe(`Basic ${'*'.repeat(24)}Njc4`);
    expect(echoed['proxy-authorization']).toBe('Bearer ****');
    expect(echoed['cookie']).not.toContain('0123456789abcdef');
    expect(echoed['x-api-key']).toBe(`${'*'.repeat(18)}efgh`);
    expect(echoed['x-auth-token']).toBe('****');
    expect(echoed['accept']).toBe('application/json');
  });

  it('does not echo a token written into a bad parameter value', async () => {
    const response = await store.request(`/v1/stocks/candles/D/SPY/?dateformat=unix?token=${TOKEN}`);
    expect(response.status).toBe(400);
    expect(response.body).not.toContain(TOKEN);
    expect(JSON.parse(response.body).errmsg).toContain("'dateformat'");
  });
});
