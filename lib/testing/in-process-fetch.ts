import * as api from "../../app/api/[[...path]]/route";
import * as hub from "../../app/hub/[[...path]]/route";
import { randomIp } from "./http";

/** The service's own routes in-process, for a client given this as its `fetch`; other URLs (the store's) over HTTP. */
export function inProcessFetch(): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (!url.pathname.startsWith("/api/") && !url.pathname.startsWith("/hub/")) return fetch(request);
    const headers = new Headers(request.headers);
    headers.set("x-forwarded-for", randomIp());
    const routed = new Request(url, {
      method: request.method,
      headers,
      body: request.body,
      duplex: "half",
    } as RequestInit);
    const routes = url.pathname.startsWith("/hub/") ? hub : api;
    const handler = request.method === "POST" ? routes.POST : routes.GET;
    return handler(routed, { params: Promise.resolve({}) });
  }) as typeof fetch;
}
