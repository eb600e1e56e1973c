/**
 * Loads a strategy module: its default export is the strategy, its `options` export the run options it
 * starts from. TypeScript through tsx's loader, which the package ships with.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from '../errors.js';
import type { BacktestOptions, Strategy } from './types.js';

let tsxRegistered = false;

/** The strategy a module exports by default, and the options it exports as `options`. */
export async function loadStrategyModule(
  file: string,
): Promise<{ strategy: Strategy; options: Partial<Omit<BacktestOptions, 'store' | 'strategy'>> }> {
  const resolved = path.resolve(file);
  if (!existsSync(resolved)) throw new UsageError(`no strategy file ${file}`);
  if (
    /\.[cm]?ts$/.test(resolved) &&
    !tsxRegistered &&
    typeof (globalThis as { Deno?: unknown }).Deno === 'undefined'
  ) {
    const { register } = await import('tsx/esm/api');
    register();
    tsxRegistered = true;
  }
  const module = (await import(pathToFileURL(resolved).href)) as { default?: unknown; options?: unknown };
  const strategy = module.default as Partial<Strategy> | undefined;
  if (strategy === undefined || strategy === null || typeof strategy.onSession !== 'function') {
    throw new UsageError(
      `${file}: the default export is not a strategy (an object with onSession; see defineStrategy)`,
    );
  }
  const options = (module.options ?? {}) as Partial<Omit<BacktestOptions, 'store' | 'strategy'>>;
  return { strategy: strategy as Strategy, options };
}
