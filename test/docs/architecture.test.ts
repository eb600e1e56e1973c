/**
 * ARCHITECTURE.md's "Where each rule lives" tables name, per rule, a file and the function, constant,
 * class or type that implements it (`Class.method` for a method). A row whose file or name is gone fails
 * here, so the map stays true as the code moves.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';

type Row = { readonly rule: string; readonly file: string; readonly name: string };

/** The rows of every `| rule | file | function |` table under the "Where each rule lives" heading. */
function ruleRows(markdown: string): Row[] {
  const start = markdown.indexOf('\n## Where each rule lives');
  if (start < 0) return [];
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  const rows: Row[] = [];
  let inTable = false;
  for (const line of section.split('\n')) {
    const cells = line.startsWith('|')
      ? line
          .split('|')
          .slice(1, -1)
          .map((cell) => cell.trim())
      : [];
    if (cells.length === 3 && cells[0] === 'rule' && cells[1] === 'file' && cells[2] === 'function') {
      inTable = true;
      continue;
    }
    if (cells.length === 0) inTable = false;
    if (!inTable || cells.every((cell) => /^-+$/.test(cell))) continue;
    // A row of another shape keeps its text as the rule, with no file: the test names it.
    const [rule = line, file = '', name = ''] = cells.length === 3 ? cells : [line];
    rows.push({ rule, file: file.replace(/^`|`$/g, ''), name: name.replace(/^`|`$/g, '') });
  }
  return rows;
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `source` declares `name` (top level) or, for `Class.method`, the class and a member of it. */
function declares(source: string, name: string): boolean {
  const [owner, member] = name.includes('.') ? name.split('.', 2) : [name, undefined];
  const top = new RegExp(
    `^(?:export\\s+)?(?:default\\s+)?(?:declare\\s+)?(?:async\\s+)?(?:function\\*?|const|let|var|class|type|interface|enum)\\s+${literal(owner as string)}\\b`,
    'm',
  );
  if (!top.test(source)) return false;
  if (member === undefined) return true;
  const body = source.slice(source.search(new RegExp(`class\\s+${literal(owner as string)}\\b`)));
  const method = new RegExp(
    `^\\s+(?:(?:public|private|protected|static|readonly|async|get|set)\\s+)*${literal(member)}\\s*(?:<[^(]*>)?\\(`,
    'm',
  );
  return method.test(body);
}

describe('ARCHITECTURE.md: where each rule lives', () => {
  const rows = ruleRows(readFileSync(join(REPO_ROOT, 'ARCHITECTURE.md'), 'utf8'));

  it('has a row for the rules the map must show', () => {
    expect(rows.length).toBeGreaterThan(80);
    const named = (pattern: RegExp) => rows.filter((row) => pattern.test(row.rule)).map((row) => row.name);
    expect(named(/4,094-byte/)).toEqual(['MAX_REQUEST_LINE']);
    expect(named(/billing choice/).length).toBeGreaterThan(0);
    expect(named(/cached 204/)).toEqual(['Api.evaluate']);
    expect(named(/ingest-time volume stamps/).length).toBeGreaterThanOrEqual(4);
    expect(named(/15:45 volume stamp/)).toEqual(['stampSnapshots']);
  });

  it('names files that exist and declarations they hold', () => {
    const stale = rows.filter((row) => {
      const path = join(REPO_ROOT, row.file);
      return row.file === '' || !existsSync(path) || !declares(readFileSync(path, 'utf8'), row.name);
    });
    expect(stale.map((row) => `${row.file} ${row.name} (${row.rule})`)).toEqual([]);
  });

  it('tells a declaration from a mere mention', () => {
    const source =
      'export class Api {\n  async evaluate(a: number) {}\n}\nconst x = evaluate;\nfunction run() {}\n';
    expect(declares(source, 'Api')).toBe(true);
    expect(declares(source, 'Api.evaluate')).toBe(true);
    expect(declares(source, 'run')).toBe(true);
    expect(declares(source, 'evaluate')).toBe(false);
    expect(declares(source, 'Api.run')).toBe(false);
    expect(declares(source, 'Ap')).toBe(false);
  });
});
