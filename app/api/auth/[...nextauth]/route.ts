// /api/auth/* – Auth.js sign-in, callback, session and sign-out endpoints for the portal
import type { NextRequest } from "next/server";
import { handlers } from "@/lib/auth/next-auth";
import { withAuthEndpointHeaders } from "@/lib/http/security-headers";

export const GET = async (request: NextRequest) => withAuthEndpointHeaders(await handlers.GET(request));
export const POST = async (request: NextRequest) => withAuthEndpointHeaders(await handlers.POST(request));
