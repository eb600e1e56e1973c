/**
 * The text of statements: quoting names and literals, and a statement's parameters written into its text
 * as typed literals, so that it runs as one plain query.
 *
 * The driver runs a statement with parameters as three calls on the main thread (extract, prepare, bind)
 * before it executes, and DuckDB plans it without knowing the values. A plain query is planned on a
 * worker thread with constants it folds and pushes into the Parquet scans. On the 26 M-row bench store,
 * a random session's front-month read (two scans, five parameters) took 12.8 ms of CPU prepared and
 * 10.3 ms with the values written in (p50 of 100 sessions; wall 10.6 and 8.0 ms).
 *
 * Each literal has the type the driver binds the value as (`typeForValue`: INTEGER, BIGINT, DOUBLE,
 * HUGEINT, VARCHAR, BOOLEAN), so the statement means what it meant prepared. Whenever the text or a value
 * is anything this reading is not sure of, the statement is left to the driver as it was.
 */
/** A value that may be bound to a `$n` / `$name` placeholder. */
export type SqlValue = string | number | boolean | bigint | null;
export type SqlParams = readonly SqlValue[] | Readonly<Record<string, SqlValue>>;

/** Quotes an identifier for interpolation into SQL (the only thing ever interpolated). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A string literal for the rare places DuckDB refuses a parameter (e.g. `COPY … TO '<path>'`). */
export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

/** A value as the literal of the type the driver would bind it as, or undefined when not sure. */
function literalOf(value: SqlValue): string | undefined {
  if (value === null) return 'NULL';
  switch (typeof value) {
    case 'boolean':
      return value ? 'TRUE' : 'FALSE';
    case 'bigint':
      return `CAST(${value.toString()} AS HUGEINT)`;
    case 'string':
      // A NUL byte would end the statement's text where the driver hands it to DuckDB.
      return value.includes('\0') ? undefined : `CAST(${quoteLiteral(value)} AS VARCHAR)`;
    case 'number':
      if (Number.isInteger(value)) {
        if (value >= INT32_MIN && value <= INT32_MAX) return `CAST(${value} AS INTEGER)`;
        return Number.isSafeInteger(value) ? `CAST(${value} AS BIGINT)` : undefined;
      }
      // The shortest text that reads back as the same double; DuckDB parses it exactly.
      return Number.isFinite(value) ? `CAST('${String(value)}' AS DOUBLE)` : undefined;
    default:
      return undefined;
  }
}

const isWordStart = (code: number) =>
  (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95; // A-Z a-z _
const isDigit = (code: number) => code >= 48 && code <= 57;
const isWord = (code: number) => isWordStart(code) || isDigit(code);

/**
 * `sql` with each `$name` (named parameters) or `$n` (positional, from 1) outside strings, quoted names
 * and comments replaced by its value's literal; undefined when the statement must go to the driver as it
 * is: no parameters, a `?` placeholder, an escape string (`E'…'`), a dollar-quoted string, a parameter
 * without a value, a value the statement does not name, or a value with no exact literal.
 */
export function inlineParams(sql: string, params: SqlParams | undefined): string | undefined {
  if (params === undefined) return undefined;
  const positional = Array.isArray(params);
  const boundValue = (name: string): SqlValue | undefined => {
    if (positional) {
      if (!/^[1-9]\d*$/.test(name)) return undefined;
      return (params as readonly SqlValue[])[Number(name) - 1];
    }
    return Object.hasOwn(params, name) ? (params as Readonly<Record<string, SqlValue>>)[name] : undefined;
  };
  const used = new Set<string>();
  let out = '';
  let from = 0;
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const code = sql.charCodeAt(i);
    // '…' and "…" end at a lone closing quote (a doubled one is the quote itself).
    if (code === 39 || code === 34) {
      // An escape string reads backslashes: not read here.
      if (code === 39 && i > 0 && /[eE]/.test(sql[i - 1]!) && (i < 2 || !isWord(sql.charCodeAt(i - 2))))
        return undefined;
      let j = i + 1;
      for (;;) {
        if (j >= n) return undefined;
        if (sql.charCodeAt(j) === code) {
          if (sql.charCodeAt(j + 1) === code) j += 2;
          else break;
        } else j++;
      }
      i = j + 1;
      continue;
    }
    if (code === 45 && sql.charCodeAt(i + 1) === 45) {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? n : end + 1;
      continue;
    }
    if (code === 47 && sql.charCodeAt(i + 1) === 42) {
      const end = sql.indexOf('*/', i + 2);
      if (end === -1) return undefined;
      i = end + 2;
      continue;
    }
    if (code === 63) return undefined; // `?`: an anonymous placeholder
    if (code === 36) {
      let j = i + 1;
      if (j < n && (isWordStart(sql.charCodeAt(j)) || isDigit(sql.charCodeAt(j)))) {
        while (j < n && isWord(sql.charCodeAt(j))) j++;
      }
      // `$` alone, `$$`, or `$tag$`: dollar quoting, not a parameter.
      if (j === i + 1 || sql.charCodeAt(j) === 36) return undefined;
      // A `$` inside a word (`a$b`) is part of that word.
      if (i > 0 && isWord(sql.charCodeAt(i - 1))) {
        i = j;
        continue;
      }
      const name = sql.slice(i + 1, j);
      const value = boundValue(name);
      if (value === undefined) return undefined;
      const literal = literalOf(value);
      if (literal === undefined) return undefined;
      used.add(name);
      out += `${sql.slice(from, i)}${literal}`;
      from = j;
      i = j;
      continue;
    }
    i++;
  }
  const given = positional
    ? (params as readonly SqlValue[]).map((_, at) => String(at + 1))
    : Object.keys(params);
  if (given.some((name) => !used.has(name))) return undefined;
  return out + sql.slice(from);
}
