import { randomInt } from "node:crypto";
import type { RouteHandler } from "../http/route";

export type CallOptions = {
  method?: string;
  key?: string;
  headers?: Record<string, string>;
  params?: Record<string, string>;
  body?: unknown;
};

export type CallResult = { status: number; headers: Headers; text: string; json: any };

/** What an observer sees of each call: the request's method and URL, and the result. */
export type ObservedCall = { method: string; url: URL; result: CallResult };
type CallObserver = (call: ObservedCall) => void;

const observers = new Set<CallObserver>();

/**
 * Opt-in: `observer` sees every later `call()` result (until the returned function is called).
 * What it throws fails the call, so a check registered here fails the test that made the request.
 */
export function observeCalls(observer: CallObserver): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

/** A client address of its own per call, so per-address budgets of one test never touch another's. */
export const randomIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

/** Calls a route handler in-process, as Next would: a Request plus a params promise. */
export async function call(handler: RouteHandler, url: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { "x-forwarded-for": randomIp(), ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers["content-type"] ??= "application/json";
  const target = new URL(url, "http://localhost");
  const request = new Request(target, {
    method: options.method ?? "GET",
    headers,
    body:
      options.body === undefined
        ? undefined
        : typeof options.body === "string"
          ? options.body
          : JSON.stringify(options.body),
  });
  const response = await handler(request, { params: Promise.resolve(options.params ?? {}) });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const result = { status: response.status, headers: response.headers, text, json };
  for (const observer of observers) observer({ method: request.method, url: target, result });
  return result;
}

/** The error body without its request id, for byte-for-byte comparisons. */
export const withoutRequestId = (text: string) => text.replace(/"request_id":"[^"]*"/, '"request_id":""');
