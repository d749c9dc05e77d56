/** A file that is not the parquet it claims to be: damaged, hostile or of a kind not supported. */
export class ParquetFormatError extends Error {}
