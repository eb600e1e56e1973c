/**
 * The registry of ingest formats. A format reads one source file and INSERTs canonical rows (see
 * `src/store/schema.ts`) into staging tables of a `SqlSession`; `stageFiles` (../ingest.ts) runs it per
 * file, then the shared validation, and hands the filled staging tables to the store's commit.
 */
import { candlesFormat } from './candles.js';
import { arrowFormat, parquetFormat } from './canonical.js';
import { cboeEodFormat } from './cboe-eod.js';
import { csvMappingFormat } from './csv-mapping.js';
import { hodFormat } from './hod.js';
import { leanOptionUniverseFormat } from './lean-option-universe.js';
import { marketDataJsonFormat } from './marketdata-json.js';
import { leanFactorsFormat } from './splits.js';
import type { IngestFormat } from './types.js';

export {
  type IngestFormat,
  type Reject,
  type StageOptions,
  type StageResult,
  stagingTable,
} from './types.js';

/** Every format, in the order `pitchain ingest --help` lists them. Add a format by listing it here. */
export function ingestFormats(): readonly IngestFormat[] {
  return [
    hodFormat,
    cboeEodFormat,
    marketDataJsonFormat,
    csvMappingFormat,
    leanOptionUniverseFormat,
    candlesFormat,
    leanFactorsFormat,
    parquetFormat,
    arrowFormat,
  ];
}

/** The format called `name` (`pitchain ingest --format <name>`), or undefined. */
export function formatNamed(name: string): IngestFormat | undefined {
  return ingestFormats().find((format) => format.name === name);
}
