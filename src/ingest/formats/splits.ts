/**
 * `lean-factors`: splits from a QuantConnect Lean factor file (`date,price_factor,split_factor,
 * reference_price`, no header). Lean's split factor is the cumulative multiplier that adjusts prices up to
 * and including a row's date; a row stands for the interval that ends on its date. So where the factor
 * changes between row D and the next row, a split goes ex on the first session after D: AAPL's row
 * 2014-06-06 (its close, 645.57, is the row's reference price) is followed by a 7-fold factor, and the raw
 * bars open at 92.69 on 2014-06-09. The ratio is the next factor over this one. A split row's `_line` is
 * the line of row D. Price-factor (dividend) changes are not stored.
 */
import { basename } from 'node:path';
import { quoteIdentifier, type SqlSession } from '../../store/sql.js';
import { tempTableName } from '../csv-source.js';
import { sessionAfter, validateSplits } from '../validate-bars.js';
import { fileProblem, readErrorReason } from './candles.js';
import { type IngestFormat, type StageOptions, type StageResult, stagingTable } from './types.js';

/** Options of `lean-factors`: the symbol, when the file name (`aapl.csv`, `lean_factor_file_aapl.csv`) does not give it. */
export type FactorStageOptions = StageOptions & { readonly symbol?: string };

/**
 * A split ratio read from the quotient of two rounded factors: the simplest fraction p/q (q ≤ 50)
 * within 1e-5 of it (7.000005 → 7, 1.4999 → 1.5), else the quotient to 6 significant digits.
 */
export function splitRatio(quotient: number): number {
  if (!Number.isFinite(quotient) || quotient <= 0) return quotient;
  let [p0, q0, p1, q1] = [0, 1, 1, 0];
  let x = quotient;
  for (let i = 0; i < 32; i++) {
    const a = Math.floor(x);
    [p0, q0, p1, q1] = [p1, q1, a * p1 + p0, a * q1 + q0];
    if (q1 > 50) break;
    if (Math.abs(p1 / q1 - quotient) <= 1e-5 * quotient) return p1 / q1;
    if (x === a) break;
    x = 1 / (x - a);
  }
  return Number(quotient.toPrecision(6));
}

type FactorRow = {
  _line: number;
  date_text: string | null;
  factor_text: string | null;
  d: string | null;
  f: number | null;
};

/** Stages the splits of one Lean factor file into the `splits` staging table. */
export async function stageLeanFactors(
  sql: SqlSession,
  file: string,
  options: FactorStageOptions = {},
): Promise<StageResult> {
  const symbol = (options.symbol ?? /(?:^|_)([a-z0-9.]+?)\.csv$/i.exec(basename(file))?.[1])?.toUpperCase();
  if (symbol === undefined) return fileProblem(file, 'no symbol: give a symbol option', options);
  let factors: FactorRow[];
  try {
    factors = await sql.all<FactorRow>(
      `SELECT row_number() OVER () AS _line, date_text, factor_text,
              CASE WHEN regexp_full_match(trim(date_text), '\\d{8}') THEN CAST(try_strptime(trim(date_text), '%Y%m%d') AS DATE) END AS d, TRY_CAST(trim(factor_text) AS DOUBLE) AS f
       FROM read_csv($file, auto_detect = false, header = false, delim = ',', quote = '"', escape = '"',
                     null_padding = true,
                     columns = {'date_text': 'VARCHAR', 'price_factor': 'VARCHAR', 'factor_text': 'VARCHAR', 'reference_price': 'VARCHAR'})`,
      { file },
    );
  } catch (error) {
    return fileProblem(file, readErrorReason(error), options);
  }

  const lines: number[] = [];
  const exDates: (string | null)[] = [];
  const ratios: (number | null)[] = [];
  const problems: (string | null)[] = [];
  const reject = (line: number, reason: string) => {
    lines.push(line);
    exDates.push(null);
    ratios.push(null);
    problems.push(reason);
  };
  let previous: FactorRow | undefined;
  for (const row of factors) {
    if (row.d === null) {
      reject(row._line, row.date_text === null ? 'missing date' : `bad date "${row.date_text}"`);
      continue;
    }
    if (row.f === null || !(row.f > 0)) {
      reject(
        row._line,
        row.factor_text === null ? 'missing split factor' : `bad split factor "${row.factor_text}"`,
      );
      continue;
    }
    if (previous !== undefined && row.d <= previous.d!) {
      reject(row._line, `date ${row.d} is not after the previous row's ${previous.d}`);
      continue;
    }
    if (previous !== undefined && Math.abs(row.f / previous.f! - 1) > 1e-6) {
      lines.push(previous._line);
      exDates.push(sessionAfter(previous.d!));
      ratios.push(splitRatio(row.f / previous.f!));
      problems.push(null);
    }
    previous = row;
  }

  const source = tempTableName('lean_splits');
  await sql.run(
    `CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(source)} (symbol VARCHAR, ex_date DATE, ratio DOUBLE, _line BIGINT, _reject VARCHAR)`,
  );
  try {
    await sql.append(source, [lines.map(() => symbol), exDates, ratios, lines, problems]);
    await validateSplits(sql, source, stagingTable(options, 'splits'));
  } finally {
    await sql.run(`DROP TABLE IF EXISTS ${quoteIdentifier(source)}`);
  }
  return { rows: factors.length, rejects: [] };
}

/** The `lean-factors` format. */
export const leanFactorsFormat: IngestFormat = {
  name: 'lean-factors',
  description: 'splits from QuantConnect Lean factor files (date,price_factor,split_factor,reference_price)',
  stage: (sql, file, options: FactorStageOptions) => stageLeanFactors(sql, file, options),
};
