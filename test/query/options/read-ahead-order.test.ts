/**
 * A loop's block is read without an ORDER BY, in the files' order: each file sorted by session, symbol
 * and quote time, a large partition's files named by their hashes (so listed in no session order). These
 * check that the rows still come out in session, contract, quote-time order, whatever order the files
 * came in (the sample's files happen to come in session order, so its differential tests do not).
 */
import { describe, expect, it } from 'vitest';
import {
  concatenated,
  inSessionOrder,
  interestColumns,
  QUOTE_COLUMNS,
  type QuoteColumns,
} from '../../../src/query/options/block-columns.js';
import { numbered } from '../../../src/query/options/block-contracts.js';
import { inSymbolOrder } from '../../../src/query/options/contract-table.js';
import { unquotedSince } from '../../../src/query/options/session-pair.js';

const NAMES = QUOTE_COLUMNS;

/** Columns from [contract, day, quote_time] rows; every other column carries the row's tag (its bid). */
function quotes(rows: readonly [number, number, number][]): QuoteColumns {
  const columns = Object.fromEntries(
    NAMES.map((name) => [name, new Float64Array(rows.length)]),
  ) as QuoteColumns;
  rows.forEach(([contract, day, time], i) => {
    columns.contract[i] = contract;
    columns.day[i] = day;
    columns.quote_time[i] = time;
    for (const name of NAMES.slice(3)) columns[name][i] = contract * 1_000_000 + day * 1000 + time;
  });
  return columns;
}

const triples = (columns: QuoteColumns) =>
  Array.from(columns.day, (day, i) => [columns.contract[i], day, columns.quote_time[i]]);

describe('a block read in the files order', () => {
  // Two files: sessions 10–11 and 12; each sorted by session, contract, quote time.
  const early: [number, number, number][] = [
    [0, 10, 1],
    [0, 10, 2],
    [3, 10, 1],
    [1, 11, 5],
    [2, 11, 1],
  ];
  const late: [number, number, number][] = [
    [0, 12, 1],
    [4, 12, 1],
    [4, 12, 3],
  ];
  const sorted = [...early, ...late].map(([c, d, t]) => [c, d, t]);

  it('keeps rows already in order as they are', () => {
    const read = quotes([...early, ...late]);
    expect(inSessionOrder(read)).toBe(read);
  });

  it('puts files listed out of session order back in order, every column moved with its row', () => {
    const ordered = inSessionOrder(quotes([...late, ...early]));
    expect(triples(ordered)).toEqual(sorted);
    for (const name of NAMES.slice(3)) {
      expect(Array.from(ordered[name])).toEqual(sorted.map(([c, d, t]) => c! * 1_000_000 + d! * 1000 + t!));
    }
  });

  it('sorts rows out of order within a session', () => {
    const shuffled = [late[2]!, early[4]!, early[1]!, late[0]!, early[3]!, early[0]!, late[1]!, early[2]!];
    expect(triples(inSessionOrder(quotes(shuffled)))).toEqual(sorted);
  });

  it("puts a block's parts one after another, and hands over the one part with rows as it is", () => {
    const none = quotes([]);
    const first = quotes(early);
    const second = quotes(late);
    // A block whose carried rows are none: its rows are not copied behind them.
    expect(concatenated([none, first], NAMES)).toBe(first);
    expect(concatenated([first, none], NAMES)).toBe(first);
    expect(concatenated([none, none], NAMES)).toBe(none);
    const both = concatenated([first, none, second], NAMES);
    expect(triples(both)).toEqual(sorted);
    expect(Array.from(both.bid)).toEqual(sorted.map(([c, d, t]) => c! * 1_000_000 + d! * 1000 + t!));
  });

  it("groups open interest by contract, each contract's rows in settled order, whatever order they came in", () => {
    // [contract, settled day, open interest (NaN: NULL), published]; contract 1 has rows from two files
    // listed in the wrong order, and a later settlement published before an earlier one.
    const rows = [
      [1, 12, 300, 1200],
      [0, 10, 50, 1000],
      [1, 10, 100, 1100],
      [1, 11, Number.NaN, 1050],
      [2, 11, 7, 1100],
    ];
    const column = (k: number) => Float64Array.from(rows, (row) => row[k]!);
    const interest = interestColumns(
      { contract: column(0), settled: column(1), openInterest: column(2), publishedAt: column(3) },
      4,
    );
    expect(Array.from(interest.offsets)).toEqual([0, 1, 4, 5, 5]);
    expect(Array.from(interest.settledDay)).toEqual([10, 10, 11, 12, 11]);
    expect(Array.from(interest.openInterest)).toEqual([50, 100, Number.NaN, 300, 7]);
    expect(Array.from(interest.publishedAt)).toEqual([1000, 1100, 1050, 1200, 1100]);
    // Contract 1's publications go back (1100, then 1050): it is searched row by row, the others by halves.
    expect(Array.from(interest.rising)).toEqual([1, 0, 1, 1]);
  });
});

describe('a contract table read in the files order', () => {
  it('leaves symbols already in order as they are', () => {
    const symbols = ['SPY190118C00250000', 'SPY190118P00250000', 'SPY190215C00250000'];
    const columns: (Float64Array | (string | null)[])[] = [symbols, Float64Array.of(1, 2, 3)];
    inSymbolOrder(columns);
    expect(columns[0]).toBe(symbols);
  });

  it('sorts rows out of symbol order, every column moved with its symbol', () => {
    const columns: (Float64Array | (string | null)[])[] = [
      ['SPY190215C00250000', 'SPY190118C00250000', 'SPY190118P00250000'],
      ['SPY', 'SPY', 'SPY7'],
      Float64Array.of(3, 1, 2),
    ];
    inSymbolOrder(columns);
    expect(columns[0]).toEqual(['SPY190118C00250000', 'SPY190118P00250000', 'SPY190215C00250000']);
    expect(columns[1]).toEqual(['SPY', 'SPY7', 'SPY']);
    expect(Array.from(columns[2] as Float64Array)).toEqual([1, 2, 3]);
  });
});

describe('the look back a two-session block would need', () => {
  // Contracts 0–3 by their symbols' hashes, first traded on days 5, 2, 9 and 12; the block starts on day 10.
  const known = {
    keys: { hashOf: Float64Array.of(101, 102, 103, 104) },
    firstTradedDay: Float64Array.of(5, 2, 9, 12),
  };

  it('starts at the earliest first traded session of the contracts not quoted on its first session', () => {
    // 102 (day 2) is quoted; of 101 (day 5) and 103 (day 9), day 5 is the earliest. 104 trades after.
    expect(unquotedSince(known, Float64Array.of(102, 102, 104), 10)).toBe('1970-01-06');
    expect(unquotedSince(known, Float64Array.of(101, 102), 10)).toBe('1970-01-10');
  });

  it('needs none when every contract traded before is quoted, or when rows are named by symbols', () => {
    expect(unquotedSince(known, Float64Array.of(101, 102, 103), 10)).toBeUndefined();
    expect(unquotedSince({ ...known, keys: undefined }, new Float64Array(0), 10)).toBeUndefined();
  });
});

describe('numbering a read’s rows by contract', () => {
  // Contracts 0–2 in symbol order, with their symbols' hashes; a row of another root's contract (hash 99,
  // symbol Z) is left out and the rows after it move up.
  const contracts = ['A', 'B', 'C'].map((option_symbol) => ({ option_symbol }));
  const hashOf = Float64Array.of(11, 22, 33);
  const byHash = new Map([...hashOf].map((hash, id) => [hash, id]));
  const known = (keys: boolean) =>
    ({
      contracts,
      keys: keys ? { get: (key: number) => byHash.get(key), hashOf } : undefined,
    }) as unknown as Parameters<typeof numbered>[1];
  const names = ['contract', 'tag'] as const;
  const expected = { contract: [0, 0, 1, 2, 2], tag: [1, 2, 4, 5, 6] };

  it('numbers rows named by hashes, dropping the ones of contracts it does not hold', () => {
    const out = numbered(
      [Float64Array.of(11, 11, 99, 22, 33, 33), Float64Array.of(1, 2, 3, 4, 5, 6)],
      known(true),
      names,
    );
    expect({ contract: [...out.contract], tag: [...out.tag] }).toEqual(expected);
  });

  it('numbers rows named by symbols the same way (when two contracts share a hash)', () => {
    const out = numbered(
      [['A', 'A', 'Z', 'B', 'C', 'C'], Float64Array.of(1, 2, 3, 4, 5, 6)],
      known(false),
      names,
    );
    expect({ contract: [...out.contract], tag: [...out.tag] }).toEqual(expected);
  });
});
