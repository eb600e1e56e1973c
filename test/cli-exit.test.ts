import { describe, expect, it } from 'vitest';
import { exitOf, main } from '../src/cli/main.js';
import {
  IngestError,
  InvalidInputError,
  LookAheadError,
  MarketDataError,
  StoreError,
  UsageError,
} from '../src/errors.js';
import { parsePolicy } from '../src/pit/policy.js';

describe('the exit status of each error type', () => {
  it('is 2 for what the caller gave, 1 for a refusal or a failure of the data, each with its message', () => {
    expect(exitOf(new UsageError('--store is required'))).toEqual({
      status: 2,
      message: '--store is required',
    });
    expect(exitOf(new InvalidInputError("Invalid date 'x'"))).toEqual({
      status: 2,
      message: "Invalid date 'x'",
    });
    expect(exitOf(new MarketDataError(404, 'Symbol not found.'))).toEqual({
      status: 1,
      message: '404 Symbol not found.',
    });
    const lookAhead = new LookAheadError(1584387900, [{ field: 'volume', knownAt: 1584388800 }]);
    expect(exitOf(lookAhead)).toEqual({ status: 1, message: lookAhead.message });
    expect(exitOf(new IngestError('spx.csv', 12, 'bad strike'))).toEqual({
      status: 1,
      message: 'spx.csv:12: bad strike',
    });
    expect(exitOf(new StoreError('manifest unreadable'))).toEqual({
      status: 1,
      message: 'manifest unreadable',
    });
  });

  it('is 70 with the stack for anything else: a defect', () => {
    const failure = exitOf(new TypeError('x is undefined'));
    expect(failure.status).toBe(70);
    expect(failure.message).toMatch(/^unexpected error: TypeError: x is undefined\n\s+at /);
  });

  it('makes an unknown look-ahead policy a usage error, not a bare TypeError', () => {
    expect(() => parsePolicy('lenient')).toThrow(UsageError);
    expect(exitOf(catchOf(() => parsePolicy('lenient'))).status).toBe(2);
  });

  it('is what the command line returns', async () => {
    const written: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => {
      written.push(chunk);
      return true;
    }) as typeof process.stderr.write;
    try {
      // A command line commander refuses is a usage error too.
      expect(await main(['no-such-command'])).toBe(2);
      expect(await main(['request', '/v1/options/chain/SPY/'])).toBe(2);
      expect(written.join('')).toMatch(
        /unknown command 'no-such-command'[\s\S]*required option '--store <dir>'/,
      );
      written.length = 0;
      const status = await main([
        'request',
        '--store',
        'data/sample',
        '--now',
        'garbage',
        '/v1/options/chain/SPY/',
      ]);
      expect(status).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(written.join('')).toMatch(/^pitchain: --now must be an instant/);
  });
});

function catchOf(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
