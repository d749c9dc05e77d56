// /api/auth/* – Auth.js sign-in, callback, session and sign-out endpoints for the portal
import { handlers } from "@/lib/auth/next-auth";
import { authEndpoints } from "@/lib/http/auth-endpoints";

export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = authEndpoints(handlers);
