import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, ensureBuilt, runCommand } from './helpers/build.js';
import { REPO_ROOT } from './helpers/paths.js';

const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
};

function packageBin(name: string): string {
  const path = pkg.bin[name];
  if (path === undefined) throw new Error(`package.json names no "${name}" bin`);
  return path;
}
const BIN = packageBin('pitchain');

function pitchain(...args: string[]) {
  return runCommand(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1' } });
}

describe('the built pitchain bin', () => {
  beforeAll(ensureBuilt);

  it('is a node script at the path package.json names', async () => {
    expect(join(REPO_ROOT, BIN)).toBe(CLI_BIN);
    expect((await readFile(join(REPO_ROOT, BIN), 'utf8')).split('\n')[0]).toBe('#!/usr/bin/env node');
  });

  it('--help lists the commands and exits 0', async () => {
    const result = await pitchain('--help');
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toMatch(/^Usage: pitchain /);
    const commands = result.stdout.split(/^Commands:$/m)[1] ?? '';
    expect(commands).toMatch(/^\s+demo\b/m);
  });

  it('--version prints the package version', async () => {
    const [long, short] = await Promise.all([pitchain('--version'), pitchain('-V')]);
    expect([long.code, long.stdout, short.stdout]).toEqual([0, `${pkg.version}\n`, `${pkg.version}\n`]);
  });

  it('an unknown command exits non-zero and says so on stderr, not stdout', async () => {
    const result = await pitchain('no-such-command');
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stderr).toContain("unknown command 'no-such-command'");
    expect(result.stdout).toBe('');
  });

  it('npm start (the demo) exits 0 and prints something', async () => {
    const result = await runCommand('npm', ['start'], { timeoutMs: 120_000 });
    expect({ code: result.code, timedOut: result.timedOut }).toEqual({ code: 0, timedOut: false });
    const ownOutput = result.stdout.replace(/^> .*$/gm, '').trim();
    expect(ownOutput).not.toBe('');
  }, 150_000);
});
