import { isIP } from "node:net";

/**
 * The client's address: the right-most X-Forwarded-For entry. The request guard
 * (lib/http/request-guard.ts) rewrites the header before anything reads it to the one address it
 * trusts (forwardedHop), so behind the configured proxies this is the client that reached the first
 * of them, and with none it is the socket's peer, whatever the client claimed.
 */
export function clientIp(request: Request): string {
  const last = lastEntry(request.headers.get("x-forwarded-for"))?.replace(/^::ffff:/, "");
  return last && isIP(last) ? last : "unknown";
}

/** The scheme the client used, read from the same hop as its address (see clientIp). */
export function clientProto(request: Request): string | undefined {
  return lastEntry(request.headers.get("x-forwarded-proto"))?.toLowerCase();
}

const entries = (field: string | string[] | undefined | null): string[] =>
  (Array.isArray(field) ? field.join(",") : (field ?? ""))
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);

const lastEntry = (field: string | null) => entries(field).at(-1);

/**
 * What the request's own connection and its `trusted` nearest proxies say of the client, both read
 * from the same hop: the address the furthest trusted proxy saw (each proxy appends its peer to
 * X-Forwarded-For, so that is the entry `trusted` places from the right, the socket's peer being the
 * last) and the scheme that proxy reports (X-Forwarded-Proto's entry at the same depth, or the
 * socket's own with no proxy). Entries further left are whatever the client claimed, and ignored.
 */
export function forwardedHop(input: {
  forwardedFor: string | string[] | undefined;
  forwardedProto: string | string[] | undefined;
  peer: string | undefined;
  encrypted: boolean;
  trusted: number;
}): { client: string; proto: string } {
  const socketProto = input.encrypted ? "https" : "http";
  if (input.trusted === 0) return { client: input.peer ?? "", proto: socketProto };
  const chain = [...entries(input.forwardedFor), input.peer ?? ""];
  const client = chain[Math.max(0, chain.length - 1 - input.trusted)]!;
  const protos = entries(input.forwardedProto);
  // A proxy that sets the header rather than appending to it leaves one entry for several hops.
  const proto = (protos.at(-input.trusted) ?? protos[0] ?? socketProto).toLowerCase();
  return { client, proto };
}
