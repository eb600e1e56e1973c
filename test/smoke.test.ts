import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { FIXED_MESSAGES, openStore } from '../src/index.js';

describe('package surface', () => {
  it('keeps the two fixed 400 messages verbatim', () => {
    expect(FIXED_MESSAGES).toMatchInlineSnapshot(`
      {
        "invalidDate": "Invalid date. The date parameter is used for historical queries only.",
        "invalidOptionSymbol": "Invalid option symbol. Use valid OCC symbology for the option symbol.",
      }
    `);
  });

  it('answers a request with one of them as the service does', async () => {
    const store = await openStore('data/sample', { threads: 1 });
    try {
      const response = await store.request('/v1/options/quotes/SPY2003/');
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body)).toEqual({ s: 'error', errmsg: FIXED_MESSAGES.invalidOptionSymbol });
    } finally {
      store.close();
    }
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
