/**
 * What the notebooks show besides plain values: a server-side DOM for Observable Plot (pass it as
 * `Plot.plot({ document, … })`; the kernel shows the SVG it returns), and tables shown as HTML with an
 * aligned-text fallback for viewers that render no HTML.
 */
import { parseHTML } from 'linkedom';

/** The document Observable Plot draws into, outside a browser. */
export const { document } = parseHTML('<!DOCTYPE html><html><body></body></html>');

type Cell = string | number | boolean | null | undefined;

/** Rows as a table (its columns are the first row's keys, in order): HTML, and aligned text for viewers without HTML. */
export function table(rows: readonly Readonly<Record<string, Cell>>[]): object {
  const columns = Object.keys(rows[0] ?? {});
  const cells = rows.map((row) => columns.map((column) => text(row[column])));
  const numeric = columns.map((column) => rows.every((row) => typeof (row[column] ?? 0) === 'number'));
  const widths = columns.map((column, c) => Math.max(column.length, ...cells.map((line) => line[c]!.length)));
  const pad = (value: string, c: number) =>
    numeric[c] ? value.padStart(widths[c]!) : value.padEnd(widths[c]!);
  const plain = [columns.map(pad), ...cells.map((line) => line.map(pad))]
    .map((line) => line.join('  ').trimEnd())
    .join('\n');
  const align = (c: number) => (numeric[c] ? ' style="text-align:right"' : '');
  const head = columns.map((column, c) => `<th${align(c)}>${escapeHtml(column)}</th>`).join('');
  const body = cells
    .map((line) => `<tr>${line.map((value, c) => `<td${align(c)}>${escapeHtml(value)}</td>`).join('')}</tr>`)
    .join('\n');
  const html = `<table>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
  return { [Symbol.for('Jupyter.display')]: () => ({ 'text/plain': plain, 'text/html': html }) };
}

function text(value: Cell): string {
  return value === null || value === undefined ? '—' : String(value);
}

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
