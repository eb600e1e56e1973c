/**
 * Where a store's derived file (a session or contract column file) lies: beside the Parquet file it was
 * made from, named after it with the kind's suffix in place of `.parquet`.
 */

/** The derived file with `suffix` of the Parquet file at `parquetPath` (relative or absolute). */
export function derivedPath(parquetPath: string, suffix: string): string {
  return `${parquetPath.replace(/\.parquet$/, '')}${suffix}`;
}

/** The Parquet file the derived file at `filePath` was made from, or undefined when it lacks `suffix`. */
export function derivedOwner(filePath: string, suffix: string): string | undefined {
  return filePath.endsWith(suffix) ? `${filePath.slice(0, -suffix.length)}.parquet` : undefined;
}
