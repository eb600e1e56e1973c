/** The columnar store: manifest, Parquet files, the single writer and many readers. */
export { type FileEntry, type Manifest, type ProvenanceEntry, readManifest } from './manifest.js';
export * from './schema.js';
export {
  quoteIdentifier,
  quoteLiteral,
  type SqlParams,
  type SqlRow,
  SqlSession,
  type SqlValue,
} from './sql.js';
export { type OpenStoreOptions, StoreReader } from './store.js';
export { type BeginOptions, type CommitResult, type SourceRecord, WriteTransaction } from './writer.js';
