/**
 * The files a store derives from its Parquet files (session column files, contract column files): each
 * lives and goes with the Parquet file it was made from, and is never listed in the manifest itself.
 */
import { contractColumnsOwner } from './contract-columns.js';
import { sessionColumnsOwner } from './session-columns.js';

/** The Parquet file the derived file at `filePath` was made from; undefined when it is not a derived file. */
export function derivedFileOwner(filePath: string): string | undefined {
  return sessionColumnsOwner(filePath) ?? contractColumnsOwner(filePath);
}
