import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";
import { AppError } from "../errors";

// Server-side request forgery: a webhook URL is chosen by an admin, but the service is the one
// that connects to it, from inside the deployment's network. A URL that reaches the machine itself,
// the private network or the cloud's metadata address (169.254.169.254) would let whoever sets it
// probe or call what only the service can reach. So every address the host resolves to must be a
// public one, checked when the URL is registered and again at every delivery, where the check is
// the connection's own DNS lookup: the address checked is the address connected to, and a name
// that later resolves elsewhere (DNS rebinding) is refused then.

const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network", the unspecified address
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT, shared address space
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata services
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["100::", 64], // discard-only (RFC 6666)
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated by RFC 3879, still routed inside some networks)
  ["fc00::", 7], // unique-local
  ["ff00::", 8], // multicast
  ["64:ff9b:1::", 48], // local-use NAT64
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, "ipv6");
}

/**
 * Whether an IP address (v4 or v6) is one a webhook may not reach. An IPv6 address that carries an
 * IPv4 address inside it (mapped, compatible, NAT64, 6to4, Teredo) is judged by that IPv4 address
 * too: a gateway on the way translates it to that address, so 64:ff9b::7f00:1 is 127.0.0.1 to
 * whoever routes it.
 */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return NOT_PUBLIC.check(address, "ipv4");
  if (NOT_PUBLIC.check(address, "ipv6")) return true;
  return embeddedIpv4(address).some((v4) => NOT_PUBLIC.check(v4, "ipv4"));
}

/** The 16 bytes of a valid IPv6 address (isIP has said so), a trailing dotted quad included. */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.replace(/%.*$/, "");
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const front = groups(head);
  const back = groups(tail);
  const words = tail === undefined ? front : [...front, ...Array(8 - front.length - back.length).fill(0), ...back];
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 0xff;
  });
  return bytes;
}

const dotted = (b: Uint8Array, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
const zeros = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);

/** The IPv4 addresses an IPv6 address stands for, by the prefixes that embed one. */
function embeddedIpv4(address: string): string[] {
  const b = ipv6Bytes(address);
  const word = (i: number) => (b[2 * i]! << 8) | b[2 * i + 1]!;
  // ::a.b.c.d (compatible, deprecated), ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated, RFC 2765)
  if (zeros(b, 0, 10) && ((b[10] === 0 && b[11] === 0) || (b[10] === 0xff && b[11] === 0xff))) return [dotted(b, 12)];
  if (zeros(b, 0, 8) && word(4) === 0xffff && word(5) === 0) return [dotted(b, 12)];
  // 64:ff9b::a.b.c.d, the well-known NAT64 prefix (RFC 6052); 64:ff9b:1::/48 is refused whole above.
  if (word(0) === 0x64 && word(1) === 0xff9b && zeros(b, 4, 12)) return [dotted(b, 12)];
  // 2002:aabb:ccdd::, 6to4 (RFC 3056): the relay sends it to aa.bb.cc.dd.
  if (word(0) === 0x2002) return [dotted(b, 2)];
  // 2001:0:ssss:ssss:...:cccc:cccc, Teredo (RFC 4380): the server's address, and the client's inverted.
  if (word(0) === 0x2001 && word(1) === 0) {
    const client = b.slice(12, 16).map((x) => x ^ 0xff);
    return [dotted(b, 4), dotted(client, 0)];
  }
  return [];
}

export const WEBHOOK_URL_MAX = 2048;

/** The URL's syntax: absolute http(s), a host, no credentials. The address check is separate. */
export function parseWebhookUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new AppError("invalid_parameter", "A webhook URL must be an absolute http:// or https:// URL.");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new AppError("invalid_parameter", "A webhook URL must be an http:// or https:// URL.");
  if (!url.hostname) throw new AppError("invalid_parameter", "A webhook URL must name a host.");
  if (url.username || url.password)
    throw new AppError(
      "invalid_parameter",
      "A webhook URL must not carry a user name or password: deliveries are authenticated by their signature.",
    );
  if (url.href.length > WEBHOOK_URL_MAX)
    throw new AppError("invalid_parameter", `A webhook URL is at most ${WEBHOOK_URL_MAX} characters.`);
  return url;
}

/** The URL's host without IPv6 brackets, as DNS and isIP take it. */
const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

function lookupAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );
}

/**
 * Every address the URL's host resolves to, refused with the reason when one is not public (unless
 * `allowPrivate`) or when the name does not resolve.
 */
export function checkWebhookAddresses(url: URL, allowPrivate: boolean): Promise<LookupAddress[]> {
  return checkHostAddresses(bareHost(url), allowPrivate);
}

async function checkHostAddresses(host: string, allowPrivate: boolean): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookupAll(host);
  } catch (error) {
    throw new AppError(
      "invalid_parameter",
      `The webhook host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? "lookup failed"}).`,
    );
  }
  if (!allowPrivate) {
    const refused = addresses.find((a) => isNonPublicAddress(a.address));
    if (refused)
      throw new AppError(
        "invalid_parameter",
        `The webhook host ${host} resolves to ${refused.address}, a loopback, private, link-local or otherwise non-public address; ` +
          "such URLs are refused unless WEBHOOKS_ALLOW_PRIVATE=1 (local use only).",
      );
  }
  return addresses;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request: resolves like the system resolver, then refuses the connection if
 * any address is not public, so the address checked is the one connected to.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean } | number, callback: LookupCallback): void => {
    const all = typeof options === "object" && options.all === true;
    checkHostAddresses(hostname, allowPrivate).then(
      (addresses) => {
        if (all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: Error) => callback(Object.assign(new Error(error.message), { code: "EADDRNOTPUBLIC" }), "", 0),
    );
  };
}
