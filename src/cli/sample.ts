import { fileURLToPath } from 'node:url';

/** The sample store shipped with the package (synthetic option quotes on real SPY and AAPL bars). */
export const SAMPLE_STORE = fileURLToPath(new URL('../../data/sample', import.meta.url));
