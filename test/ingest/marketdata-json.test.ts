import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../src/errors.js';
import { formatNamed } from '../../src/ingest/formats/index.js';
import { marketDataJsonFormat } from '../../src/ingest/formats/marketdata-json.js';
import { stageFiles } from '../../src/ingest/ingest.js';
import { SqlSession } from '../../src/store/sql.js';
import { sharedPath, withData } from '../helpers/shared-data.js';

const CHAIN = sharedPath('spec/examples/options_chain.json');
const QUOTES = sharedPath('spec/examples/options_quotes.json');
const CANDLES = 'spec/examples/stocks_candles.json';
/** The documented example bodies, read as saved responses. */
const docs = withData(['spec/examples/options_chain.json', 'spec/examples/options_quotes.json']);
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/ingest/${name}`, import.meta.url));
const at = (iso: string) => Date.parse(iso) / 1000;

async function withSql<T>(run: (sql: SqlSession) => Promise<T>): Promise<T> {
  const sql = await SqlSession.open();
  try {
    return await run(sql);
  } finally {
    sql.close();
  }
}

describe('marketdata-json (saved response bodies)', () => {
  it('is the registry entry marketdata-json', () => {
    expect(formatNamed('marketdata-json')).toBe(marketDataJsonFormat);
  });

  docs.it(
    'reads an option quotes body: q = updated, session = its ET date, OI settled the session before',
    async () => {
      await withSql(async (sql) => {
        await stageFiles(sql, [QUOTES], 'marketdata-json');
        expect(await sql.all('SELECT * EXCLUDE (_reject) FROM option_quotes')).toEqual([
          {
            underlying: 'AAPL',
            option_symbol: 'AAPL271217C00250000',
            session_date: '2022-10-13',
            quote_time: 1665673292,
            bid: 5.15,
            ask: 5.25,
            bid_size: 994,
            ask_size: 57,
            last: 5.25,
            volume: 977,
            volume_time: 1665673292,
            underlying_price: 136.12,
            iv: 0.3468,
            delta: 0.347,
            gamma: 0.015,
            theta: -0.05,
            vega: 0.264,
            _line: 1,
          },
        ]);
        expect(await sql.all('SELECT * EXCLUDE (_reject) FROM open_interest')).toEqual([
          {
            underlying: 'AAPL',
            option_symbol: 'AAPL271217C00250000',
            settled_session: '2022-10-12',
            published_at: at('2022-10-13T09:30:00-04:00'),
            open_interest: 61289,
            _line: 1,
          },
        ]);
      });
    },
  );

  docs.it('refuses the documentation chain, whose side array is longer than the others', async () => {
    await withSql(async (sql) => {
      await expect(stageFiles(sql, [CHAIN], 'marketdata-json')).rejects.toThrow(
        new IngestError(CHAIN, undefined, 'arrays of unequal length: optionSymbol has 92 items, side has 96'),
      );
    });
  });

  docs.it('with skipInvalid, stages the chain without the odd array and reports it', async () => {
    await withSql(async (sql) => {
      const result = await stageFiles(sql, [CHAIN], 'marketdata-json', { skipInvalid: true });
      expect(result.rejects).toEqual([
        {
          file: CHAIN,
          line: undefined,
          reason: 'arrays of unequal length: optionSymbol has 92 items, side has 96; ignored side',
        },
      ]);
      // updated is a Sunday (2023-05-21 17:01 ET): the snapshot shows the Friday session
      expect(
        await sql.all(
          `SELECT count(*) AS n, min(_line) AS first, max(_line) AS last, min(session_date) AS session,
                  count(DISTINCT session_date) AS sessions, min(quote_time) AS q, count(DISTINCT quote_time) AS qs
           FROM option_quotes`,
        ),
      ).toEqual([{ n: 92, first: 1, last: 92, session: '2023-05-19', sessions: 1, q: 1684702875, qs: 1 }]);
      expect(
        await sql.all(
          `SELECT option_symbol, bid, ask, last, volume FROM option_quotes WHERE _line IN (1, 92) ORDER BY _line`,
        ),
      ).toEqual([
        { option_symbol: 'AAPL230616C00060000', bid: 114.1, ask: 116.9, last: 115, volume: 0 },
        { option_symbol: 'AAPL230616P00300000', bid: 123.05, ask: 126.6, last: 151.1, volume: 0 },
      ]);
      expect(await sql.value('SELECT count(*) FROM open_interest')).toBe(92);
    });
  });

  it('rejects bad rows by their 1-based position in the arrays', async () => {
    await withSql(async (sql) => {
      const file = fixture('md_quotes_bad.json');
      const result = await stageFiles(sql, [file], 'marketdata-json', { skipInvalid: true });
      expect(result.rejects).toEqual([
        { file, line: 2, reason: 'wrong type: bid "abc" is not a number' },
        { file, line: 3, reason: 'side "call" disagrees with OCC symbol AAPL240419P00170000' },
        { file, line: 4, reason: 'invalid OCC symbol: AAPL2404' },
      ]);
      // 2024-03-16 is a Saturday: the row belongs to Friday's session, OI to Thursday's settlement
      expect(
        await sql.all(
          `SELECT q._line, q.option_symbol, q.session_date, o.settled_session, o.published_at
           FROM option_quotes q JOIN open_interest o USING (_line)`,
        ),
      ).toEqual([
        {
          _line: 1,
          option_symbol: 'AAPL240419C00170000',
          session_date: '2024-03-15',
          settled_session: '2024-03-14',
          published_at: at('2024-03-15T09:30:00-04:00'),
        },
      ]);
    });
  });

  withData([CANDLES]).it('refuses error bodies and bodies that are not option data', async () => {
    await withSql(async (sql) => {
      await expect(stageFiles(sql, [fixture('md_error.json')], 'marketdata-json')).rejects.toThrow(
        new IngestError(fixture('md_error.json'), undefined, 'error body: Invalid token.'),
      );
      const candles = sharedPath(CANDLES);
      await expect(stageFiles(sql, [candles], 'marketdata-json')).rejects.toThrow(
        new IngestError(candles, undefined, 'no optionSymbol array (not an option chain or quotes body)'),
      );
    });
  });
});
