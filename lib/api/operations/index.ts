// Every operation of /api/v1 and of the Hub protocol under /hub. The router (lib/http/route.ts) and the OpenAPI document
// (lib/api/openapi.ts) are derived from this list; a new endpoint is a file here, its line below,
// and its verb. lib/api/openapi.test.ts fails when a file of this folder is missing from the list.
import type { Operation } from "../operation";
import { acknowledgeNotice } from "./acknowledge-notice";
import { createDownload } from "./create-download";
import { createPreview } from "./create-preview";
import { getManifest } from "./get-manifest";
import { getOpenApiDocument } from "./get-openapi-document";
import { hubDatasetInfo, hubDatasetInfoAtRevision } from "./hub-dataset-info";
import { hubPathsInfo } from "./hub-paths-info";
import { hubRefs } from "./hub-refs";
import { hubResolve, hubResolveHead } from "./hub-resolve";
import { hubTree, hubTreeAtPath } from "./hub-tree";
import { listAnnotations } from "./list-annotations";
import { listDatasets } from "./list-datasets";
import { listEpisodes } from "./list-episodes";
import { listLicences } from "./list-licences";
import { listNotices } from "./list-notices";
import { listVersions } from "./list-versions";
import { planPull } from "./plan-pull";

export const API_OPERATIONS: readonly Operation[] = [
  listDatasets,
  listVersions,
  getManifest,
  listEpisodes,
  listAnnotations,
  createDownload,
  createPreview,
  planPull,
  listLicences,
  listNotices,
  acknowledgeNotice,
  getOpenApiDocument,
  hubDatasetInfo,
  hubDatasetInfoAtRevision,
  hubRefs,
  hubTree,
  hubTreeAtPath,
  hubPathsInfo,
  hubResolveHead,
  hubResolve,
];
