// Any other path under /api – a JSON 404 rather than Next's HTML page
import { notFoundRoute } from "@/lib/http/route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = notFoundRoute();
