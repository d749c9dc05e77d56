// The rules das-admin checks some values by as its command line is parsed; scripts/cli/admin/session.ts
// loads this once the words name a command (they need zod and the database's client).
export { EpisodeLine } from "@/lib/catalog/import/records";
export { DATASET_ID_PATTERN } from "@/lib/catalog/identifiers";
export { TERMS_SHA256_PATTERN } from "@/lib/admin/terms";
export { NO_ORGANIZATION, parseMonth, parseTimeBound } from "@/lib/disclosures/filter";
