import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AccountBook } from '../../src/billing/accounts.js';
import { FIXED_MESSAGES, MarketDataError } from '../../src/errors.js';
import type { AsOf, Billing, Endpoint } from '../../src/query/types.js';
import { Api, MAX_REQUEST_LINE } from '../../src/service/service.js';
import { SqlSession } from '../../src/store/sql.js';

// 2024-03-15 (a Friday) 12:00 ET = 16:00Z.
const NOON = Date.parse('2024-03-15T16:00:00Z') / 1000;

/** An endpoint that echoes what the pipeline resolved, with rows enough to exercise paging and billing. */
const rows: Endpoint = {
  service: '/v1/test/rows/',
  pattern: '/v1/test/rows/:symbol/',
  family: 'options',
  cacheable: true,
  dated: true,
  // The parameters `run` reads: the response cache keys an answer by them.
  schema: () =>
    z.object({
      n: z.string().optional(),
      explode: z.string().optional(),
      empty: z.string().optional(),
      billing: z.string().optional(),
    }),
  async run(ctx) {
    if (ctx.query['explode'] !== undefined) throw new Error('boom');
    if (ctx.query['empty'] !== undefined) {
      return ctx.query['empty'] === 'unknown'
        ? { kind: 'no_data', errmsg: 'Symbol not found.' }
        : { kind: 'no_data', nextTime: null, prevTime: 1710532800 };
    }
    const n = Number(ctx.query['n'] ?? 2);
    const index = Array.from({ length: n }, (_, i) => i);
    return {
      kind: 'ok',
      rowKey: 'symbol',
      billing: (ctx.query['billing'] ?? 'per-row') as Billing,
      dataAsOfSeconds: ctx.asOf.kind === 'current' ? ctx.asOf.cutoffSeconds : null,
      fields: [
        {
          key: 'symbol',
          human: 'Symbol',
          kind: 'string',
          values: index.map((i) => `${ctx.path['symbol']}${i}`),
        },
        { key: 'bid', human: 'Bid', kind: 'number', values: index.map((i) => i + 0.5) },
        { key: 'updated', human: 'Date', kind: 'instant', values: index.map(() => 1710532800) },
        { key: 'day', human: 'Day', kind: 'date', values: index.map(() => '2024-03-15') },
        { key: 'asOf', human: 'As Of', kind: 'string', values: index.map(() => JSON.stringify(ctx.asOf)) },
        { key: 'mode', human: 'Mode', kind: 'string', values: index.map(() => ctx.mode) },
      ],
    };
  },
};

let sql: SqlSession;
let api: Api;
beforeAll(async () => {
  sql = await SqlSession.open();
  api = new Api({ sql, endpoints: [rows] });
});
afterAll(() => sql.close());

const json = (body: string) => JSON.parse(body) as Record<string, unknown>;
const asOfOf = (body: string) => JSON.parse((json(body)['asOf'] as string[])[0]!) as AsOf;

describe('output formats and universal parameters', () => {
  it('answers columnar JSON with s first, unix instants and YYYY-MM-DD dates by default', async () => {
    const res = await api.request('/v1/test/rows/AAPL/?n=2', { now: NOON });
    expect(res.status).toBe(200);
    expect(res.headers['Content-Type']).toBe('application/json');
    const body = json(res.body);
    expect(Object.keys(body)).toEqual(['s', 'symbol', 'bid', 'updated', 'day', 'asOf', 'mode']);
    expect(body).toMatchObject({
      s: 'ok',
      symbol: ['AAPL0', 'AAPL1'],
      bid: [0.5, 1.5],
      updated: [1710532800, 1710532800],
      day: ['2024-03-15', '2024-03-15'],
    });
  });

  it('formats every date field by dateformat', async () => {
    const stamp = json((await api.request('/v1/test/rows/A/?n=1&dateformat=timestamp', { now: NOON })).body);
    expect([stamp['updated'], stamp['day']]).toEqual([
      ['2024-03-15T16:00:00-04:00'],
      ['2024-03-15T00:00:00-04:00'],
    ]);
    const unix = json((await api.request('/v1/test/rows/A/?n=1&dateformat=unix', { now: NOON })).body);
    expect([unix['updated'], unix['day']]).toEqual([[1710532800], [1710475200]]);
    const sheet = json(
      (await api.request('/v1/test/rows/A/?n=1&dateformat=spreadsheet', { now: NOON })).body,
    );
    expect([sheet['updated'], sheet['day']]).toEqual([[45366.66667], [45366]]);
  });

  it('keeps only the named columns in the order asked and drops s; human keys drop s too', async () => {
    expect(json((await api.request('/v1/test/rows/A/?n=1&columns=bid,symbol', { now: NOON })).body)).toEqual({
      bid: [0.5],
      symbol: ['A0'],
    });
    expect(
      Object.keys(json((await api.request('/v1/test/rows/A/?n=1&human=true', { now: NOON })).body)),
    ).toEqual(['Symbol', 'Bid', 'Date', 'Day', 'As Of', 'Mode']);
    expect(
      json((await api.request('/v1/test/rows/A/?n=1&human=true&columns=bid', { now: NOON })).body),
    ).toEqual({
      Bid: [0.5],
    });
  });

  it('pages with limit and offset, and refuses limits over 50,000 or not numbers', async () => {
    const page = json(
      (await api.request('/v1/test/rows/A/?n=5&limit=2&offset=3&columns=symbol', { now: NOON })).body,
    );
    expect(page).toEqual({ symbol: ['A3', 'A4'] });
    const tooMany = await api.request('/v1/test/rows/A/?limit=50001', { now: NOON });
    expect([tooMany.status, json(tooMany.body)['s']]).toEqual([400, 'error']);
    expect((await api.request('/v1/test/rows/A/?limit=ten', { now: NOON })).status).toBe(400);
    expect((await api.request('/v1/test/rows/A/?dateformat=weird', { now: NOON })).status).toBe(400);
  });

  it('writes CSV without s, with CRLF, optional header row, and the service no-data and error bodies', async () => {
    const csv = await api.request('/v1/test/rows/A/?n=2&format=csv&columns=symbol,bid,updated', {
      now: NOON,
    });
    expect([csv.status, csv.headers['Content-Type'], csv.body]).toEqual([
      200,
      'text/csv',
      'symbol,bid,updated\r\nA0,0.5,1710532800\r\nA1,1.5,1710532800\r\n',
    ]);
    const bare = await api.request('/v1/test/rows/A/?n=1&format=csv&headers=false&columns=symbol', {
      now: NOON,
    });
    expect(bare.body).toBe('A0\r\n');
    const empty = await api.request('/v1/test/rows/A/?empty=1&format=csv', { now: NOON });
    expect([empty.status, empty.body]).toEqual([200, '0\r\n""\r\n']);
    const unknown = await api.request('/v1/test/rows/A/?empty=unknown&format=csv', { now: NOON });
    expect([unknown.status, unknown.body]).toEqual([404, 's,errmsg\r\nno_data,Symbol not found.\r\n']);
  });

  it('answers no_data as a 404 with nextTime and prevTime, and reads the last of repeated keys', async () => {
    const empty = await api.request('/v1/test/rows/A/?empty=1', { now: NOON });
    expect([empty.status, json(empty.body)]).toEqual([
      404,
      { s: 'no_data', nextTime: null, prevTime: 1710532800 },
    ]);
    const repeated = json((await api.request('/v1/test/rows/A/?n=1&n=3&columns=symbol', { now: NOON })).body);
    expect(repeated).toEqual({ symbol: ['A0', 'A1', 'A2'] });
  });
});

describe('credits', () => {
  it('bills historical rows per 1,000, per row, per symbol with quote data, and reports them in headers', async () => {
    const credits = async (query: string) =>
      (await api.request(`/v1/test/rows/A/?${query}`, { now: NOON })).credits;
    expect(await credits('n=5000&billing=per-1000-rows&columns=symbol')).toBe(5);
    expect(await credits('n=5001&billing=per-1000-rows&columns=symbol')).toBe(6);
    expect(await credits('n=1&billing=per-1000-rows')).toBe(1);
    expect(await credits('n=7&billing=per-row&date=2024-03-14')).toBe(7);
    expect(await credits('n=7&billing=per-symbol-with-quote&date=2024-03-14')).toBe(7);
    expect(await credits('n=7&billing=per-symbol-with-quote&columns=symbol,updated&date=2024-03-14')).toBe(1);
    expect(await credits('empty=1')).toBe(0);
    expect(await credits('limit=oops')).toBe(0);
    const res = await api.request('/v1/test/rows/A/?n=3&date=2024-03-14', { now: NOON });
    expect(res.headers['X-Api-Ratelimit-Consumed']).toBe('3');
    expect(Number(res.headers['X-Api-Ratelimit-Remaining'])).toBeGreaterThan(0);
    expect(res.headers['X-Api-Ratelimit-Reset']).toBe(String(Date.parse('2024-03-16T13:30:00Z') / 1000));
    expect(res.headers['CF-Ray']).toMatch(/^[0-9a-f]{16}-LCL$/);
  });

  it('refuses with 429 once the window is spent and resets at 09:30 ET', async () => {
    const book = new AccountBook({
      t: { plan: 'starter', userType: 'nonpro', opra: true, credits: { limit: 3, period: 'day' } },
    });
    const small = new Api({ sql, endpoints: [rows], accounts: book });
    const ask = (now: number) => small.request('/v1/test/rows/A/?n=2&date=2024-03-14', { now, token: 't' });
    expect((await ask(NOON)).status).toBe(200);
    expect((await ask(NOON)).status).toBe(200);
    const refused = await ask(NOON);
    expect([refused.status, json(refused.body)['errmsg']]).toEqual([
      429,
      'API credit limit reached for current window.',
    ]);
    expect((await ask(Date.parse('2024-03-16T13:30:00Z') / 1000)).status).toBe(200);
  });
});

describe('modes, entitlements and date at clock T', () => {
  const book = new AccountBook({
    free: { plan: 'free', userType: 'nonpro', opra: false },
    nopra: { plan: 'trader', userType: 'nonpro', opra: false },
    pro: { plan: 'trader', userType: 'pro', opra: true },
    paid: { plan: 'trader', userType: 'nonpro', opra: true },
  });
  let accounts: Api;
  beforeAll(() => {
    accounts = new Api({ sql, endpoints: [rows], accounts: book });
  });

  it('gives paid accounts live data at T, caps it by entitlement, and serves free accounts historical', async () => {
    const asOf = async (token: string, query = '') =>
      asOfOf((await accounts.request(`/v1/test/rows/A/?n=1${query}`, { now: NOON, token })).body);
    expect(await asOf('paid')).toEqual({
      kind: 'current',
      cutoffSeconds: NOON,
      eodOnly: false,
      maxSession: null,
    });
    expect(await asOf('nopra')).toEqual({
      kind: 'current',
      cutoffSeconds: NOON - 900,
      eodOnly: false,
      maxSession: null,
    });
    const historical = {
      kind: 'current',
      // The end of the session's ET day: a snapshot taken after its close still belongs to it (§3.1).
      cutoffSeconds: Date.parse('2024-03-15T03:59:59Z') / 1000,
      eodOnly: true,
      maxSession: '2024-03-14',
    };
    expect(await asOf('pro')).toEqual(historical);
    expect(await asOf('free')).toEqual(historical);
    expect(await asOf('paid', '&mode=historical')).toEqual(historical);
    expect(await asOf('paid', '&mode=eod')).toEqual({ ...historical, maxSession: '2024-03-14' });
    // Before the open on Friday the latest fully closed session is Wednesday.
    const early = asOfOf(
      (await accounts.request('/v1/test/rows/A/?n=1', { now: NOON - 4 * 3600, token: 'free' })).body,
    );
    expect(early).toMatchObject({ maxSession: '2024-03-13' });
  });

  it('refuses live, delayed, eod and cached to free accounts with 402', async () => {
    for (const mode of ['live', 'delayed', 'eod', 'cached', 'stale']) {
      const res = await accounts.request(`/v1/test/rows/A/?mode=${mode}`, { now: NOON, token: 'free' });
      expect([mode, res.status, res.credits]).toEqual([mode, 402, 0]);
    }
  });

  it('takes date only for a past session, with mode omitted, historical or eod', async () => {
    const ask = (query: string) => api.request(`/v1/test/rows/A/?n=1&${query}`, { now: NOON });
    expect(asOfOf((await ask('date=2024-03-14')).body)).toEqual({ kind: 'dated', session: '2024-03-14' });
    expect(asOfOf((await ask('date=3/14/2024&mode=eod')).body)).toEqual({
      kind: 'dated',
      session: '2024-03-14',
    });
    for (const query of ['date=2024-03-15', 'date=2024-03-18', 'date=2024-03-14&mode=live', 'date=today']) {
      const res = await ask(query);
      expect([query, res.status, json(res.body)]).toEqual([
        query,
        400,
        { s: 'error', errmsg: FIXED_MESSAGES.invalidDate },
      ]);
    }
    const holiday = await ask('date=2024-02-19');
    expect([holiday.status, json(holiday.body)]).toEqual([
      404,
      { s: 'no_data', errmsg: 'Market closed on this date.' },
    ]);
    expect((await ask('date=someday')).status).toBe(400);
  });

  it('serves mode=cached from answers cached by live requests: 203 and 1 credit on a hit, 204 and 0 on a miss', async () => {
    const fresh = new Api({ sql, endpoints: [rows] });
    const miss = await fresh.request('/v1/test/rows/Z/?n=4&mode=cached', { now: NOON });
    expect([miss.status, miss.body, miss.credits, miss.headers['Content-Type']]).toEqual([
      204,
      '',
      0,
      undefined,
    ]);
    expect((await fresh.request('/v1/test/rows/Z/?n=4', { now: NOON })).status).toBe(200);
    const repeat = await fresh.request('/v1/test/rows/Z/?n=4', { now: NOON });
    expect([repeat.status, repeat.credits]).toEqual([203, 4]);
    const hit = await fresh.request('/v1/test/rows/Z/?n=4&mode=cache&format=csv&columns=symbol', {
      now: NOON + 120,
    });
    expect([hit.status, hit.credits, hit.body]).toEqual([203, 1, 'symbol\r\nZ0\r\nZ1\r\nZ2\r\nZ3\r\n']);
    expect(
      (await fresh.request('/v1/test/rows/Z/?n=4&mode=cached&maxage=5min', { now: NOON + 120 })).status,
    ).toBe(203);
    const stale = await fresh.request('/v1/test/rows/Z/?n=4&mode=cached&maxage=1min', { now: NOON + 120 });
    expect([stale.status, stale.credits]).toEqual([204, 0]);
    expect((await fresh.request('/v1/test/rows/Z/?n=4&mode=cached&maxage=soon', { now: NOON })).status).toBe(
      400,
    );
  });
});

describe('authentication, limits and failures', () => {
  const book = new AccountBook({ secret1234: { plan: 'trader', userType: 'nonpro', opra: true } });
  let guarded: Api;
  beforeAll(() => {
    guarded = new Api({ sql, endpoints: [rows], accounts: book });
  });

  it('authenticates by Bearer header or token parameter, and answers 401 otherwise', async () => {
    const ok = [
      await guarded.request('/v1/test/rows/A/', {
        now: NOON,
        headers: { Authorization: 'Bearer secret1234' },
      }),
      await guarded.request('/v1/test/rows/A/?n=1&token=secret1234', { now: NOON }),
      await guarded.request('/v1/test/rows/A/?token=secret1234&n=3', { now: NOON }),
    ];
    expect(ok.map((r) => r.status)).toEqual([200, 200, 200]);
    const refused = [
      await guarded.request('/v1/test/rows/A/', { now: NOON }),
      await guarded.request('/v1/test/rows/A/?token=wrong', { now: NOON }),
      await guarded.request('/v1/test/rows/A/', {
        now: NOON,
        headers: { Authorisation: 'Bearer secret1234' },
      }),
      await guarded.request('/v1/test/rows/A/&token=secret1234', { now: NOON }),
    ];
    expect(refused.map((r) => [r.status, json(r.body)['s']])).toEqual(Array(4).fill([401, 'error']));
  });

  it('answers a malformed URL with 400 and an unknown path with 404, never a 5xx for bad input', async () => {
    expect((await api.request('/v1/test/rows/A/&n=1', { now: NOON })).status).toBe(400);
    expect((await api.request('/v1/test/rows/A/?n=1?format=csv', { now: NOON })).status).toBe(400);
    expect((await api.request('/v1/test/rows/%E0%A4%A/', { now: NOON })).status).toBe(400);
    expect((await api.request('/v2/nothing/', { now: NOON })).status).toBe(404);
    const boom = await api.request('/v1/test/rows/A/?explode=1', { now: NOON });
    expect([boom.status, json(boom.body)]).toEqual([500, { s: 'error', errmsg: 'Internal error.' }]);
  });

  it('refuses a request line over 4,094 bytes with the web server HTML 400, unbilled and unlogged', async () => {
    const fixed = 'GET /v1/test/rows/A/?n=1&pad= HTTP/1.1'.length;
    const fits = `/v1/test/rows/A/?n=1&pad=${'x'.repeat(MAX_REQUEST_LINE - fixed)}`;
    const logged = api.ledger.log.length;
    // 203 when an earlier `n=1` answer is cached: `pad` is no parameter of the endpoint's.
    expect([200, 203]).toContain((await api.request(fits, { now: NOON })).status);
    const over = await api.request(`${fits}x`, { now: NOON });
    expect([over.status, over.credits, over.headers['Content-Type']]).toEqual([400, 0, 'text/html']);
    expect(over.body).toBe(
      '<html><head><title>Bad Request</title></head><body><h1><p>Bad Request</p></h1>Request Line is too large (4095 > 4094)</body></html>',
    );
    expect(api.ledger.log.length).toBe(logged + 1);
  });

  it('echoes headers with the token redacted, and reports the account on /user/', async () => {
    const echo = await guarded.request('/headers/', {
      now: NOON,
      headers: { Authorization: 'Bearer secret1234', 'User-Agent': 'x' },
    });
    // A token under 16 characters shows nothing of itself; longer ones their last four.
    expect(json(echo.body)).toEqual({ authorization: 'Bearer ****', 'user-agent': 'x' });
    const user = await guarded.request('/user/', { now: NOON, token: 'secret1234' });
    expect(json(user.body)).toMatchObject({
      'x-ratelimit-requests-limit': 100000,
      'x-options-data-permissions': 'realtime',
    });
    expect(user.headers['X-Api-Ratelimit-Limit']).toBe('100000');
  });

  it('keeps MarketDataError bodies intact', () => {
    expect(new MarketDataError(404, 'x', { body: { s: 'no_data' } }).errmsg).toBe('');
  });
});
