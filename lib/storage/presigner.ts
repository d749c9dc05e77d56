import { createHmac, hash } from "node:crypto";
import { Hash } from "@smithy/core/serde";
import { HttpRequest } from "@smithy/protocol-http";
import {
  ALGORITHM_IDENTIFIER,
  SignatureV4,
  UNSIGNED_PAYLOAD,
  createScope,
  getCanonicalQuery,
  getSigningKey,
} from "@smithy/signature-v4";

export type StoreLocation = {
  /** e.g. https://s3.eu-west-1.amazonaws.com or http://127.0.0.1:4568 */
  endpoint: string;
  region: string;
  bucket: string;
  /** Path-style URLs (`endpoint/bucket/key`) instead of virtual-hosted (`bucket.endpoint/key`). */
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
};

/** The host (and port) of every presigned URL: the endpoint's, or the bucket's under it for virtual-hosted URLs. */
function urlHost(location: StoreLocation): string {
  const base = new URL(location.endpoint);
  const hostname = location.forcePathStyle ? base.hostname : `${location.bucket}.${base.hostname}`;
  return base.port ? `${hostname}:${base.port}` : hostname;
}

/**
 * The origin of every presigned URL for a store: what a page that plays or fetches them must
 * allow (the portal's Content-Security-Policy), and nothing wider.
 */
export function presignedOrigin(location: StoreLocation): string {
  return `${new URL(location.endpoint).protocol}//${urlHost(location)}`;
}

/** URLs signed between two turns of the event loop: about a millisecond's work. */
const SLICE = 256;

/** The SDK's own Node hash (node:crypto), the one its clients use. */
const Sha256 = Hash.bind(null, "sha256");

// RFC 3986 unreserved characters stay; everything else in a key segment is percent-encoded, as S3 expects.
const UNRESERVED = /^[A-Za-z0-9._~-]*$/;
const PLAIN_KEY = /^[A-Za-z0-9._~/-]*$/;
const encodeSegment = (segment: string) =>
  UNRESERVED.test(segment)
    ? segment
    : encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Presigned GET URLs through the AWS SDK's SigV4 signer, for many objects at once.
 *
 * `getSignedUrl` rebuilds a client middleware stack per URL, and even `SignatureV4.presign`
 * resolves credentials and region, formats the date, builds the scope, looks up the signing key
 * and clones the request each time. Everything a download's URLs share is done once here through
 * the SDK's signer (credentials, region, date, scope, the signing key from its key cache, the
 * canonical query); per URL only the canonical request's path, its SHA-256 and the HMAC remain.
 * URLs carry only the X-Amz-* query parameters with `host` signed over UNSIGNED-PAYLOAD, the
 * canonical form of AWS's published example; the tests compare every URL with SignatureV4.presign.
 */
export class BatchPresigner extends SignatureV4 {
  private readonly base: URL;
  private readonly pathPrefix: string;

  constructor(private readonly location: StoreLocation) {
    super({
      service: "s3",
      region: location.region,
      credentials: {
        accessKeyId: location.accessKeyId,
        secretAccessKey: location.secretAccessKey,
        sessionToken: location.sessionToken,
      },
      sha256: Sha256,
      uriEscapePath: false,
      applyChecksum: false,
    });
    this.base = new URL(location.endpoint);
    const basePath = this.base.pathname.replace(/\/+$/, "");
    this.pathPrefix = location.forcePathStyle ? `${basePath}/${encodeSegment(location.bucket)}/` : `${basePath}/`;
  }

  /** URLs for `keys`, all signed at `signingDate` (second resolution) and valid `expiresIn` seconds. */
  async presignKeys(keys: readonly string[], options: { signingDate: Date; expiresIn: number }): Promise<string[]> {
    const credentials = await this.credentialProvider();
    const region = await this.regionProvider();
    const { longDate, shortDate } = this.formatDate(options.signingDate);
    const scope = createScope(shortDate, region, "s3");
    const signingKey = await getSigningKey(this.sha256, credentials, shortDate, region, "s3");
    const host = urlHost(this.location);
    const query: Record<string, string> = {
      "X-Amz-Algorithm": ALGORITHM_IDENTIFIER,
      "X-Amz-Credential": `${credentials.accessKeyId}/${scope}`,
      "X-Amz-Date": longDate,
      "X-Amz-Expires": String(options.expiresIn),
      "X-Amz-SignedHeaders": "host",
    };
    if (credentials.sessionToken) query["X-Amz-Security-Token"] = credentials.sessionToken;
    // What every URL of the batch shares, in the SDK's canonical form: the query (the SDK's
    // getCanonicalQuery) and the one signed header. Per URL, the canonical request differs only
    // in its path; its layout is the SDK's createCanonicalRequest with uriEscapePath off (the
    // tests check every URL against SignatureV4.presign itself).
    const canonicalQuery = getCanonicalQuery(new HttpRequest({ query }));
    const afterPath = `\n${canonicalQuery}\nhost:${host}\n\nhost\n${UNSIGNED_PAYLOAD}`;
    const prefix = `${this.base.protocol}//${host}`;
    const urls: string[] = [];
    // The string to sign is the SDK's createStringToSign, with its SHA-256 (and the signature's
    // HMAC) computed synchronously in node:crypto: the SDK's Node Hash wraps these same calls in a
    // buffer copy, a promise and a hex loop per URL, which made up most of the cost. The SHA-256 is
    // one call (`hash`), with no Hash object made and collected per URL: a quarter of the loop.
    const stringToSignPrefix = `${ALGORITHM_IDENTIFIER}\n${longDate}\n${scope}\n`;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      // A slice at a time: what else the process awaits (the download's own append, whose entry
      // these URLs wait for, or other requests) is answered between slices, not after 10,000 URLs.
      if (i > 0 && i % SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const path = this.objectPath(key);
      const canonicalRequestHash = hash("sha256", `GET\n${path}${afterPath}`, "hex");
      const signature = createHmac("sha256", signingKey)
        .update(stringToSignPrefix + canonicalRequestHash)
        .digest("hex");
      urls.push(`${prefix}${path}?${canonicalQuery}&X-Amz-Signature=${signature}`);
    }
    return urls;
  }

  private objectPath(key: string): string {
    // Most keys are plain (letters, digits, `._~-/`): no segment of theirs needs escaping.
    return this.pathPrefix + (PLAIN_KEY.test(key) ? key : key.split("/").map(encodeSegment).join("/"));
  }
}
