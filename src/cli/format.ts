/** Small text helpers shared by the CLI commands. */

/** Renders rows as an aligned text table; numbers are right-aligned. */
export function renderTable(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const cells = [
    headers.map(String),
    ...rows.map((r) => r.map((v) => (v === null || v === undefined ? '' : String(v)))),
  ];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
  return cells
    .map((r) =>
      r
        .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Indents every line of a block by two spaces, as a section's body under its heading. */
export function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/** A byte count in binary units (`12.3 MiB`). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** The closing section of a command's `--help`: one `$ …` line per example invocation. */
export function examplesHelp(commands: readonly string[]): string {
  return `\nExamples:\n${commands.map((command) => `  $ ${command}`).join('\n')}`;
}
