// GET /api/v1/openapi.json – the OpenAPI 3.1 document of this API (no key needed)
import { endpoint, route } from "@/lib/http/route";
import { openApiDocument } from "@/lib/api/openapi";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = route({
  GET: endpoint({ auth: "none" }, async () => openApiDocument()),
});
