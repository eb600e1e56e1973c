import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { FIXED_MESSAGES, MarketDataError } from '../src/index.js';

describe('package surface', () => {
  it('keeps the two fixed 400 messages verbatim', () => {
    expect(FIXED_MESSAGES).toMatchInlineSnapshot(`
      {
        "invalidDate": "Invalid date. The date parameter is used for historical queries only.",
        "invalidOptionSymbol": "Invalid option symbol. Use valid OCC symbology for the option symbol.",
      }
    `);
    const error = new MarketDataError(400, FIXED_MESSAGES.invalidDate);
    expect(error.body).toEqual({ s: 'error', errmsg: FIXED_MESSAGES.invalidDate });
  });

  it('reports an unknown CLI command with a non-zero exit', async () => {
    const stderr = process.stderr.write;
    process.stderr.write = () => true;
    try {
      expect(await main(['no-such-command'])).not.toBe(0);
    } finally {
      process.stderr.write = stderr;
    }
  });
});
