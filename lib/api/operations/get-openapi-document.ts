// GET /api/v1/openapi.json – the OpenAPI 3.1 document of this API (no key needed)
import { z } from "zod";
import { defineOperation } from "../operation";
import { COMMON_HEADERS, errorResponses, TRANSPORT } from "../openapi-parts";

export const getOpenApiDocument = defineOperation({
  method: "GET",
  path: "/api/v1/openapi.json",
  auth: "none",
  openapi: {
    operationId: "getOpenApiDocument",
    tags: ["Meta"],
    summary: "This document",
    description: "The OpenAPI 3.1 description of the API. Needs no key; rate-limited per client address.",
    security: [],
    responses: {
      "200": {
        description: "The OpenAPI document.",
        headers: z.object(COMMON_HEADERS),
        content: { "application/json": { schema: { type: "object" } } },
      },
      ...errorResponses(["invalid_parameter", ...TRANSPORT]),
    },
  },
  // The document is built from the list this operation is part of: imported when first asked for.
  handler: async () => (await import("../openapi")).openApiDocument(),
});
