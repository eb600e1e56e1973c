/**
 * `--help` of `pitchain` and of every command it registers ends with an Examples section, whose
 * `pitchain …` lines name commands and options that exist. Run in process, from the program the bin builds.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/main.js';

/** What `--help` prints for a command. */
function helpOf(command: Command): string {
  let text = '';
  command.configureOutput({ writeOut: (chunk) => (text += chunk), writeErr: (chunk) => (text += chunk) });
  command.outputHelp();
  return text;
}

/** The lines after the last section heading (`Examples:`), and that heading. */
function lastSection(help: string): { heading: string; lines: string[] } {
  const lines = help.trimEnd().split('\n');
  const at = lines.findLastIndex((line) => /^[A-Z][A-Za-z ]*:$/.test(line));
  return { heading: lines[at] ?? '', lines: lines.slice(at + 1) };
}

/** The words of a command line, quotes kept together. */
const words = (line: string) => line.match(/'[^']*'|"[^"]*"|\S+/g) ?? [];

const program = buildProgram();
const commands = [program, ...program.commands];

describe('pitchain --help', () => {
  it('covers every command the program registers', () => {
    expect(program.commands.map((command) => command.name())).toEqual(
      expect.arrayContaining(['demo', 'export', 'generate', 'info', 'ingest', 'request', 'serve', 'verify']),
    );
  });

  for (const command of commands) {
    const name = command === program ? 'pitchain' : `pitchain ${command.name()}`;

    it(`${name} --help ends with examples of ${name}`, () => {
      const { heading, lines } = lastSection(helpOf(command));
      expect(heading).toBe('Examples:');
      const examples = lines.filter((line) => line.startsWith('  $ '));
      expect(lines.filter((line) => !line.startsWith('  $ ') && !line.startsWith('      '))).toEqual([]);
      expect(examples.some((line) => line.startsWith(`  $ ${name}`))).toBe(true);
    });

    it(`${name} --help shows only commands and options that exist`, () => {
      const { lines } = lastSection(helpOf(command));
      const problems: string[] = [];
      for (const line of lines.filter((text) => text.startsWith('  $ pitchain'))) {
        const [, sub, ...rest] = words(line.slice(4));
        const target = program.commands.find((c) => c.name() === sub);
        if (target === undefined && !sub?.startsWith('-')) {
          problems.push(`${line}: no command ${sub}`);
          continue;
        }
        const owner = target ?? program;
        const args = target === undefined ? [sub!, ...rest] : rest;
        for (const flag of args.filter((word) => /^-/.test(word)).map((word) => word.split('=')[0]!)) {
          const known =
            flag === '--help' ||
            owner.options.some((option) => option.long === flag || option.short === flag);
          if (!known) problems.push(`${line}: no option ${flag}`);
        }
      }
      expect(problems).toEqual([]);
    });
  }
});
