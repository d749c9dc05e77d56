// Every endpoint of /api/v1 by its route file's path: what lib/http/api-dispatch.ts answers before
// Next's router. The route files stay the endpoints' one definition (and Next's, should a request
// ever reach it); a test holds this list to the files and to the OpenAPI document.
import type { ApiEndpoint } from "@/lib/http/api-dispatch";
import * as datasets from "./datasets/route";
import * as versions from "./datasets/[id]/versions/route";
import * as episodes from "./datasets/[id]/versions/[version]/episodes/route";
import * as manifest from "./datasets/[id]/versions/[version]/manifest/route";
import * as downloads from "./downloads/route";
import * as annotations from "./episodes/[episodeId]/annotations/route";
import * as openapi from "./openapi.json/route";
import * as previews from "./previews/route";

export const API_ENDPOINTS: ApiEndpoint[] = [
  { path: "/api/v1/datasets", methods: datasets },
  { path: "/api/v1/datasets/[id]/versions", methods: versions },
  { path: "/api/v1/datasets/[id]/versions/[version]/episodes", methods: episodes },
  { path: "/api/v1/datasets/[id]/versions/[version]/manifest", methods: manifest },
  { path: "/api/v1/downloads", methods: downloads },
  { path: "/api/v1/episodes/[episodeId]/annotations", methods: annotations },
  { path: "/api/v1/openapi.json", methods: openapi },
  { path: "/api/v1/previews", methods: previews },
];
