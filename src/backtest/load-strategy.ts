/**
 * Loading a strategy module as users write them: TypeScript or JavaScript (`.ts`, `.mts`, `.cts`, `.js`,
 * `.mjs`, `.cjs`), in an ESM project or a CommonJS one (`npm init -y`). TypeScript goes through tsx's
 * `tsImport`, which loads the file in its own namespace, so a CommonJS strategy that requires pitchain
 * does not form a cycle with the pitchain that is loading it. A module's default export is the strategy
 * (CommonJS: `module.exports`, or `exports.default` as TypeScript compiles it); `options` beside it are
 * the run's defaults.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from '../errors.js';
import type { BacktestOptions, Strategy } from './types.js';

/** A strategy and the run options its module exports. */
export type StrategyModule = {
  readonly strategy: Strategy;
  readonly options: Partial<Omit<BacktestOptions, 'store' | 'strategy'>>;
};

const EXTENSIONS = /\.(?:[cm]?ts|[cm]?js)$/;

/** Loads `file` and returns its strategy and options; a `UsageError` says what is wrong with a bad module. */
export async function loadStrategyModule(file: string): Promise<StrategyModule> {
  const resolved = path.resolve(file);
  if (!existsSync(resolved)) throw new UsageError(`no strategy file ${file}`);
  if (!EXTENSIONS.test(resolved)) {
    throw new UsageError(`${file}: a strategy module is a .ts, .mts, .cts, .js, .mjs or .cjs file`);
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = await importModule(resolved);
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(`${file} could not be loaded: ${message}`, { cause: error });
  }
  // ESM: { default, options }. CommonJS: { default: module.exports }, where module.exports is the
  // strategy itself or, compiled from TypeScript, { default, options }.
  const outer = loaded.default as Record<string, unknown> | undefined;
  const exports = isStrategy(outer) || !isRecord(outer) || !isStrategy(outer.default) ? loaded : outer;
  const strategy = exports.default;
  if (!isStrategy(strategy)) {
    throw new UsageError(
      `${file}: the default export is not a strategy (an object with onSession; see defineStrategy in docs/backtest.md)`,
    );
  }
  const options = exports.options ?? {};
  if (!isRecord(options)) throw new UsageError(`${file}: \`export const options\` must be an object`);
  return { strategy, options: options as StrategyModule['options'] };
}

async function importModule(resolved: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(resolved).href;
  if (/\.[cm]?ts$/.test(resolved) && typeof (globalThis as { Deno?: unknown }).Deno === 'undefined') {
    const { tsImport } = await import('tsx/esm/api');
    return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
  }
  return (await import(url)) as Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isStrategy(value: unknown): value is Strategy {
  return isRecord(value) && typeof value.onSession === 'function';
}
