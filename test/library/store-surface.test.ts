/**
 * The public `Store` is the surface DESIGN.md names: its reader and service are internals, reached by the
 * project's own code through `storeInternals`, which the package root does not export.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';
import { openStore, type Store, storeInternals } from '../../src/library/store.js';

describe('Store surface', () => {
  let store: Store;
  beforeAll(async () => {
    store = await openStore('data/sample', { now: '2020-03-16T15:45:00-04:00', threads: 1 });
  });
  afterAll(() => store.close());

  it('keeps the reader and the service off the public object', () => {
    expect(['reader', 'api'].filter((name) => name in store)).toEqual([]);
  });

  it('reaches them through storeInternals, which the package root does not export', async () => {
    const { reader, api } = storeInternals(store);
    expect(reader.dataVersion).toBe(store.dataVersion);
    expect(api.authenticate(undefined)).toBeDefined();
    expect(Object.keys(root)).not.toContain('storeInternals');
  });
});
