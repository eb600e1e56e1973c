/** Markdown pieces of the generated pages. */

/**
 * A table with its columns padded, so that the page reads as a table in plain text too; a `|` in a cell is
 * escaped (in code spans too, as GitHub's tables need).
 */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [headers, ...rows].map((row) =>
    row.map((cell) => cell.replaceAll('\n', ' ').replaceAll('|', '\\|')),
  );
  const widths = headers.map((_, i) => Math.max(3, ...cells.map((row) => [...(row[i] ?? '')].length)));
  const line = (row: readonly string[]) =>
    `| ${row.map((cell, i) => cell + ' '.repeat(widths[i]! - [...cell].length)).join(' | ')} |`;
  return [line(cells[0]!), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join('\n');
}

/** A fenced code block. */
export function fence(lang: string, text: string): string {
  return `\`\`\`${lang}\n${text.replace(/\n$/, '')}\n\`\`\``;
}

/** Inline code. */
export function code(text: string): string {
  return `\`${text}\``;
}

/**
 * A JSON body with one top-level key per line, arrays wrapped at `width`: the same JSON value as the
 * service's one-line body, readable on a page. Anything that is not a JSON object is returned as it is.
 */
export function readableJson(body: string, width = 110): string {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return body;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return body;
  const entries = Object.entries(value).map(([key, item]) => {
    const head = `  ${JSON.stringify(key)}: `;
    const text = JSON.stringify(item);
    if (head.length + text.length + 1 <= width || !Array.isArray(item)) return head + text;
    const lines: string[] = [];
    let current = '';
    for (const element of item.map((e) => JSON.stringify(e))) {
      if (current !== '' && 4 + current.length + element.length + 1 > width) {
        lines.push(`    ${current}`);
        current = '';
      }
      current += `${element},`;
    }
    lines.push(`    ${current.slice(0, -1)}`);
    return `${head}[\n${lines.join('\n')}\n  ]`;
  });
  return entries.length === 0 ? '{}' : `{\n${entries.join(',\n')}\n}`;
}
