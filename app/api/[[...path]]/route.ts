// /api/* – the API: every operation of lib/api/operations, and a JSON 404 for any other path
import { API_OPERATIONS } from "@/lib/api/operations";
import { apiRoutes } from "@/lib/http/route";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = apiRoutes(API_OPERATIONS);
