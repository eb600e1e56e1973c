/**
 * A vitest reporter that ends the run with what was skipped and why: the tests that need shared data
 * this machine does not have (by file, with how to get it), and any other skip. Listed in
 * vitest.config.ts after the default reporter, so that its lines come last.
 */
import type { Reporter, TestModule } from 'vitest/node';
import { MISSING_MARK } from './shared-data.js';
import { HOW_TO_GET } from './shared-files.js';

export default class SkipSummary implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const lines = summarizeSkips(testModules);
    if (lines.length > 0) process.stdout.write(`\n${lines.join('\n')}\n`);
  }
}

/** The summary's lines (none when nothing was skipped). */
export function summarizeSkips(testModules: ReadonlyArray<TestModule>): string[] {
  const byFile = new Map<string, number>();
  const other: string[] = [];
  let needingData = 0;
  for (const module of testModules) {
    for (const test of module.children.allTests()) {
      if (test.result().state !== 'skipped') continue;
      // A test and its suite may each carry a mark: every file either names counts once for the test.
      const marks = test.fullName.split(MISSING_MARK).slice(1);
      if (marks.length === 0) {
        other.push(`  ${module.relativeModuleId} > ${test.fullName}`);
        continue;
      }
      needingData++;
      const files = new Set(marks.flatMap((mark) => mark.replace(/\].*$/s, '').split(', ')));
      for (const file of files) byFile.set(file, (byFile.get(file) ?? 0) + 1);
    }
  }
  const lines: string[] = [];
  if (needingData > 0) {
    lines.push(`Skipped ${needingData} tests that need shared data not on this machine:`);
    for (const [file, count] of [...byFile].sort())
      lines.push(`  ${file} (${count} ${count === 1 ? 'test' : 'tests'})`);
    lines.push(`To run them, ${HOW_TO_GET}.`);
  }
  if (other.length > 0) lines.push(`Skipped ${other.length} other tests:`, ...other);
  return lines;
}
