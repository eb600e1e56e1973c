/**
 * The README's task sections, and every relative link of the README and docs/: the file it names exists,
 * and a `#fragment` names a heading of that file (as GitHub writes heading anchors).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';

/** Markdown files under a folder, recursively. */
function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? markdownFiles(join(dir, entry.name))
      : entry.name.endsWith('.md')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** A markdown text without its fenced blocks and code spans, where a bracket is not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchor(match[1]!)));
}

const FILES = [join(REPO_ROOT, 'README.md'), ...markdownFiles(join(REPO_ROOT, 'docs'))];

describe('links of the README and docs/', () => {
  it('finds anchors as GitHub writes them', () => {
    expect(anchor('`candles`: stock bars')).toBe('candles-stock-bars');
    expect(anchor('Every format, and when its values become known')).toBe(
      'every-format-and-when-its-values-become-known',
    );
  });

  it('name files that exist and headings they have', () => {
    const broken: string[] = [];
    for (const file of FILES) {
      for (const match of prose(readFileSync(file, 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
        const [path = '', fragment] = target.split('#');
        const resolved = path === '' ? file : join(dirname(file), path);
        const where = `${relative(REPO_ROOT, file)}: ${target}`;
        if (!existsSync(resolved)) broken.push(`${where} (no such file)`);
        else if (fragment !== undefined && !anchorsOf(resolved).has(fragment))
          broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('README.md', () => {
  it('has the task sections in order after its first screen', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const sections = [...prose(readme).matchAll(/^## (.+)$/gm)].map((match) => match[1]);
    const tasks = [
      'Open a store',
      'Query',
      'Point in time',
      'Backtest',
      'Serve',
      'Ingest your data',
      'Notebooks',
    ];
    expect(sections.filter((section) => tasks.includes(section!))).toEqual(tasks);
    expect(sections.slice(0, tasks.length)).toEqual(tasks);
  });
});
