// /hub/* – the Hugging Face Hub's read protocol (HF_ENDPOINT=<service>/hub): the operations of
// lib/api/operations under /hub, through the API's own router, and a JSON 404 for any other path
import { API_OPERATIONS } from "@/lib/api/operations";
import { apiRoutes } from "@/lib/http/route";

export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = apiRoutes(API_OPERATIONS);
