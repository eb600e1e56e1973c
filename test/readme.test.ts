/**
 * The README's code runs. Every fenced code block of README.md becomes its own test, by its info string:
 *
 * - `sh`, `bash`, `shell`: each line is a command (`\` continues a line, `#` lines and a leading `$ ` are
 *   ignored, `a && b` is two commands) run with `sh -c`; each must exit 0 within the timeout. `npm …`
 *   runs in the repo root, anything else in a scratch directory under the system's temporary directory
 *   that links `data/` to the repo's, so that what the commands write (`.tmp/readme-store`) never lands
 *   in the checkout, where a later run of the same commands would find it. Skipped: `npm ci` /
 *   `npm install` (CI has installed already; the suite must not reinstall) and `npm test` /
 *   `npm run check` (they would run this suite again). `npx pitchain …` runs as `node dist/cli/bin.js …`
 *   of the checkout: that is what it resolves to where the package is installed, while inside this
 *   checkout npm 11 tries to install the package into its own npx cache and fails.
 * - `ts`, `typescript`, `js`, `javascript`: written to a file in that scratch directory, whose
 *   `node_modules/pitchain` links to the checkout (so `import … from 'pitchain'` resolves to the built
 *   `dist/`), and run with tsx there.
 * - anything else (`text`, `json`, `console`, …) is shown, not run.
 *
 * A block opts out with a `no-run` word in its info string: ```sh no-run
 */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommandResult, ensureBuilt, runCommand } from './helpers/build.js';
import { REPO_ROOT } from './helpers/paths.js';

type CodeBlock = { lang: string; flags: string[]; code: string; line: number };

/** The fenced code blocks of a CommonMark document, with the 1-based line of each opening fence. */
function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: { indent: string; fence: string; info: string; line: number; body: string[] } | undefined;
  const close = (block: NonNullable<typeof open>) => {
    const [lang = '', ...flags] = block.info.trim().split(/\s+/).filter(Boolean);
    blocks.push({ lang: lang.toLowerCase(), flags, code: block.body.join('\n'), line: block.line });
  };
  for (const [i, text] of markdown.split(/\r?\n/).entries()) {
    if (open === undefined) {
      const [, indent = '', fence = '', info = ''] = /^( {0,3})(`{3,}|~{3,})(.*)$/.exec(text) ?? [];
      if (fence === '' || (fence.startsWith('`') && info.includes('`'))) continue;
      open = { indent, fence, info, line: i + 1, body: [] };
      continue;
    }
    const fence = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(text)?.[1];
    if (fence !== undefined && fence[0] === open.fence[0] && fence.length >= open.fence.length) {
      close(open);
      open = undefined;
      continue;
    }
    open.body.push(text.replace(new RegExp(`^ {0,${open.indent.length}}`), ''));
  }
  // A fence left open runs to the end of the document.
  if (open !== undefined) close(open);
  return blocks;
}

/** The commands of a shell block: continuations joined, comments and prompts dropped, `&&` split. */
function shellCommands(code: string): string[] {
  const commands: string[] = [];
  for (const line of code.replace(/\\\n/g, ' ').split('\n')) {
    const text = line.trim().replace(/^\$\s+/, '');
    if (text === '' || text.startsWith('#')) continue;
    commands.push(...splitAnd(text));
  }
  return commands;
}

function splitAnd(line: string): string[] {
  const parts: string[] = [];
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i++;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '\\') {
      i++;
    } else if (c === '&' && line[i + 1] === '&') {
      parts.push(line.slice(start, i).trim());
      start = i + 2;
      i++;
    }
  }
  parts.push(line.slice(start).trim());
  return parts.filter((part) => part !== '');
}

const SKIPPED = [
  [/^npm (ci|install|i)(\s|$)/, 'installs; CI has already installed'],
  [/^npm (test|t|run test|run check)(\s|$)/, 'runs this test suite'],
] as const;
const SHELL = new Set(['sh', 'bash', 'shell']);
const SCRIPT_EXTENSIONS: Readonly<Record<string, string>> = {
  ts: '.ts',
  typescript: '.ts',
  js: '.mjs',
  javascript: '.mjs',
};
const COMMAND_TIMEOUT_MS = 120_000;

function skipReason(command: string): string | undefined {
  return SKIPPED.find(([pattern]) => pattern.test(command))?.[1];
}

const BIN = join(REPO_ROOT, 'dist', 'cli', 'bin.js');

function asRun(command: string): string {
  return command.replace(/^npx (--no-install |--no )?pitchain(?=\s|$)/, `node '${BIN}'`);
}

function failure(what: string, result: CommandResult): string {
  const how = result.timedOut ? `timed out after ${COMMAND_TIMEOUT_MS} ms` : `exit ${result.code}`;
  return `${what}: ${how}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

const README = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
const BLOCKS = codeBlocks(README);
const ENV = { ...process.env, NO_COLOR: '1' };

describe('the README parser', () => {
  it('finds fenced blocks of either fence kind with their info strings and lines', () => {
    const markdown = [
      'text',
      '```sh',
      'npm ci && npm start',
      '```',
      '~~~ts no-run',
      'const fence = "```";',
      '~~~',
      '````text',
      '```',
      '````',
      '``` not`a`fence',
    ].join('\n');
    expect(codeBlocks(markdown)).toEqual([
      { lang: 'sh', flags: [], code: 'npm ci && npm start', line: 2 },
      { lang: 'ts', flags: ['no-run'], code: 'const fence = "```";', line: 5 },
      { lang: 'text', flags: [], code: '```', line: 8 },
    ]);
  });

  it('splits shell blocks into commands, keeping quoted && and continuations together', () => {
    const code =
      '# set up\n$ npm ci && npm start\n\nnpx pitchain request \\\n  \'/v1/x?a=1&&b=2\' && echo "a && b"';
    expect(shellCommands(code)).toEqual([
      'npm ci',
      'npm start',
      "npx pitchain request    '/v1/x?a=1&&b=2'",
      'echo "a && b"',
    ]);
    expect(
      ['npm ci', 'npm install', 'npm test', 'npm run check', 'npm start', 'npm run bench'].map(skipReason),
    ).toEqual([SKIPPED[0][1], SKIPPED[0][1], SKIPPED[1][1], SKIPPED[1][1], undefined, undefined]);
    expect(['npx pitchain info --store x', 'npx pitchainx', 'npm start'].map(asRun)).toEqual([
      `node '${BIN}' info --store x`,
      'npx pitchainx',
      'npm start',
    ]);
  });
});

describe('README.md', () => {
  it('shows the set-up and the test command on its first screen', () => {
    const firstScreen = BLOCKS.filter(
      (block) => SHELL.has(block.lang) && block.line + block.code.split('\n').length <= 60,
    ).flatMap((block) => block.code.split('\n').map((line) => line.trim()));
    expect(firstScreen).toContain('npm ci && npm start');
    expect(firstScreen).toContain('npm test');
  });

  it('labels every code block with its language', () => {
    expect(BLOCKS.filter((block) => block.lang === '').map((block) => `line ${block.line}`)).toEqual([]);
  });
});

/** The names at the checkout's top level and in its `.tmp/`: where commands run there would write. */
async function checkoutEntries(): Promise<string[]> {
  const top = await readdir(REPO_ROOT);
  const tmp = await readdir(join(REPO_ROOT, '.tmp')).catch(() => []);
  return [...top, ...tmp.map((name) => `.tmp/${name}`)].sort();
}

describe('README.md code blocks run', () => {
  let scratch: string;
  let before: string[];

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'pitchain-readme-'));
    await symlink(join(REPO_ROOT, 'data'), join(scratch, 'data'), 'dir');
    await symlink(join(REPO_ROOT, 'examples'), join(scratch, 'examples'), 'dir');
    await mkdir(join(scratch, 'node_modules'));
    await symlink(REPO_ROOT, join(scratch, 'node_modules', 'pitchain'), 'dir');
    // Modules, as in the package: a block may await at its top level.
    await writeFile(join(scratch, 'package.json'), '{ "type": "module", "private": true }\n');
    await ensureBuilt();
    before = await checkoutEntries();
  });

  afterAll(async () => {
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });

  for (const block of BLOCKS) {
    const title = `line ${block.line}: \`\`\`${[block.lang, ...block.flags].join(' ')}`;
    const extension = SCRIPT_EXTENSIONS[block.lang];
    // A block that is only shown is no test (nor a skipped one: CI fails on any skip).
    if (block.flags.includes('no-run') || (!SHELL.has(block.lang) && extension === undefined)) continue;
    if (SHELL.has(block.lang)) {
      const commands = shellCommands(block.code);
      it(
        title,
        async () => {
          for (const command of commands) {
            if (skipReason(command) !== undefined) continue;
            const result = await runCommand('sh', ['-c', asRun(command)], {
              cwd: command.startsWith('npm ') ? REPO_ROOT : scratch,
              env: ENV,
              timeoutMs: COMMAND_TIMEOUT_MS,
            });
            expect(result.code, failure(command, result)).toBe(0);
          }
        },
        COMMAND_TIMEOUT_MS * Math.max(1, commands.length) + 10_000,
      );
    } else {
      it(
        title,
        async () => {
          const file = join(scratch, `readme-${block.line}${extension}`);
          await writeFile(file, `${block.code}\n`);
          const tsx = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
          const result = await runCommand(tsx, [file], {
            cwd: scratch,
            env: ENV,
            timeoutMs: COMMAND_TIMEOUT_MS,
          });
          expect(result.code, failure(`${block.lang} block`, result)).toBe(0);
        },
        COMMAND_TIMEOUT_MS + 10_000,
      );
    }
  }

  it('leaves nothing of theirs in the checkout', async () => {
    expect(await checkoutEntries()).toEqual(before);
  });
});
