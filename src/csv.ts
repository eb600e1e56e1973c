/**
 * RFC 4180 CSV cells: the one quoting rule for every CSV the project writes (the service's `format=csv`
 * answers, the backtest's report files, ingest's rejects file).
 */

/** A cell's text as RFC 4180 writes it: quoted, with its quotes doubled, only when it holds a quote, comma or line break. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
