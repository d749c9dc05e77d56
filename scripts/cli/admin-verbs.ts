// What das-admin's commands do their work with: the database, the store, the importers and every
// verb of lib/ they call. The commands (scripts/cli/admin/) load this when they run (`onDatabase`,
// scripts/cli/admin/session.ts), so that printing the help or a usage error loads none of it.
export { startEmbeddedDefault } from "@/lib/dev/embedded-default";
export { createDb, sqlOf } from "@/lib/db/client";
export { userOf } from "@/lib/db/roles";
export { migrateKeepingChain } from "@/lib/disclosures/migrate-log";
export { importVersion } from "@/lib/catalog/import/import-version";
export { importLeRobotVersion } from "@/lib/catalog/import/lerobot/source";
export { s3Client, StoreError } from "@/lib/storage/client";
export { checkStoreCors, checkVersionStore, corsConfiguration } from "@/lib/catalog/store-check";
export { collectRenderedViews } from "@/lib/views/collect";
export { createOrganization, organizationBySlug } from "@/lib/admin/organizations";
export { endLicence, grantLicence, revokeLicence } from "@/lib/admin/licences";
export { addTerms, listTerms, requireTerms } from "@/lib/admin/terms";
export { issueKey, revokeKey } from "@/lib/admin/keys";
export { previewWithdrawal, withdrawEpisodes } from "@/lib/withdrawals/withdraw";
export { withdrawalProblems } from "@/lib/withdrawals/withdrawal-input";
export { createUser, listUsers } from "@/lib/admin/users";
export { listOrganizations } from "@/lib/admin/list-organizations";
export { listLicences, listVersionChoices } from "@/lib/admin/list-licences";
export { listKeys } from "@/lib/admin/list-keys";
export { listDatasetVersions } from "@/lib/admin/list-datasets";
export {
  addWebhookEndpoint,
  listWebhookEndpoints,
  removeWebhookEndpoint,
} from "@/lib/admin/webhook-endpoints";
export { listDeliveryAttempts } from "@/lib/notice-delivery/attempts";
export { startNoticeWorker } from "@/lib/notices/worker";
export { startCopyWorker } from "@/lib/fingerprints/jobs";
export { fingerprintStatus, setFingerprinting } from "@/lib/fingerprints/admin";
export { traceFile } from "@/lib/fingerprints/trace";
export { listDatasetListings, setDatasetListing } from "@/lib/admin/listing";
export { printAccounts, seedDemo } from "@/lib/dev/demo/seed";
export { objectKey, presigner, storeLocation } from "@/lib/storage/config";
export { verifyChainDetailed } from "@/lib/disclosures/verify";
export { parallelRangeChecker } from "@/lib/disclosures/verify-parallel";
export {
  digestConfigFromEnv,
  digestPublicKeyFromEnv,
  publicKeyPem,
  publicKeySha256,
  verifyDigests,
  writeHeadDigest,
} from "@/lib/disclosures/digest";
export { exportDisclosures } from "@/lib/disclosures/export";
export { archiveMonth, restoreMonth } from "@/lib/disclosures/archive";
export { archiveStoreFromEnv, monthPublicKeyFromEnv, monthSigningKeyFromEnv } from "@/lib/disclosures/archive-store";
export { closeEndedMonths, ensureMonthsAhead, listMonths } from "@/lib/disclosures/months";
export { disclosureFilter } from "@/lib/disclosures/filter";
