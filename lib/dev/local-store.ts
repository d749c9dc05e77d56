import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import type { FilesystemStore } from "@20minutes/s3rver";
import type { StoreLocation } from "../storage/presigner";

export const LOCAL_BUCKET = "das";
/** s3rver's built-in key pair, known to anyone who has read its documentation: never accepted here. */
const WELL_KNOWN_ACCESS_KEY_ID = "S3RVER";
const PREFERRED_PORT = 54330;

export type LocalStore = { location: StoreLocation; env: Record<string, string>; stop(): Promise<void> };
export type StoreCredentials = { accessKeyId: string; secretAccessKey: string };

/** A fresh key pair for a local store (an installation keeps its own in its data directory). */
export function randomStoreCredentials(): StoreCredentials {
  return {
    accessKeyId: `DAS${randomBytes(10).toString("hex").toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString("base64url"),
  };
}

/** GET (with Range) from any origin: the signed URL is what grants a file, not the page asking. */
const READ_FROM_ANY_ORIGIN = `<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedHeader>Range</AllowedHeader><ExposeHeader>Content-Range</ExposeHeader><ExposeHeader>Content-Length</ExposeHeader><MaxAgeSeconds>3000</MaxAgeSeconds></CORSRule></CORSConfiguration>`;

/**
 * The embedded default's object store: an S3-compatible server (@20minutes/s3rver, which checks
 * SigV4 signatures and expiry) in this process, with its files under `dir`. It accepts only
 * signatures made with `credentials`: with s3rver's well-known pair, any process on the machine
 * could read (and write) the files without a download being disclosed.
 */
export async function startLocalStore(
  dir: string,
  credentials: StoreCredentials,
  options: { publicEndpoint?: string } = {},
): Promise<LocalStore> {
  mkdirSync(dir, { recursive: true });
  // CommonJS, loaded on demand: only the embedded default needs it.
  const { default: S3rver } = await import("@20minutes/s3rver");
  // s3rver keeps its accounts in one registry per process, seeded with the well-known pair.
  const { default: AWSAccount } = await import("@20minutes/s3rver/lib/models/account.js");
  AWSAccount.DUMMY_ACCOUNT.revokeAccessKey(WELL_KNOWN_ACCESS_KEY_ID);
  AWSAccount.DUMMY_ACCOUNT.createKeyPair(credentials.accessKeyId, credentials.secretAccessKey);
  // Reached from other machines at a public address, it listens on every interface at that
  // address's port (every request must still be signed with the installation's key); otherwise on
  // this machine only.
  const exposed = options.publicEndpoint ? new URL(options.publicEndpoint) : undefined;
  const port = exposed
    ? Number(exposed.port || (exposed.protocol === "https:" ? 443 : 80))
    : (await portIsFree(PREFERRED_PORT))
      ? PREFERRED_PORT
      : 0;
  const server = new S3rver({
    address: exposed ? "0.0.0.0" : "127.0.0.1",
    port,
    directory: dir,
    silent: true,
    vhostBuckets: false,
  });
  await configureBucket(server.store, dir);
  // s3rver has no bucket policies: it serves any object to a request that carries no signature at
  // all. An S3 bucket is private, so the local store refuses unsigned requests before s3rver's
  // routes see them; otherwise anyone reaching the port could fetch files without a download.
  server.middleware.unshift(refuseUnsigned);
  const address = (await server.run()) as net.AddressInfo;
  const location: StoreLocation = {
    endpoint: `http://127.0.0.1:${address.port}`,
    region: "us-east-1",
    bucket: LOCAL_BUCKET,
    forcePathStyle: true,
    accessKeyId: credentials.accessKeyId,
    secretAccessKey: credentials.secretAccessKey,
  };
  return {
    location,
    env: {
      S3_ENDPOINT: location.endpoint,
      S3_REGION: location.region,
      S3_BUCKET: location.bucket,
      S3_ACCESS_KEY_ID: location.accessKeyId,
      S3_SECRET_ACCESS_KEY: location.secretAccessKey,
      S3_FORCE_PATH_STYLE: "true",
    },
    stop: () => server.close(),
  };
}

/**
 * The bucket and its CORS rule: the portal's player reads an episode's data table by fetch (range
 * requests) from another origin, which a browser allows only with CORS; video elements need none.
 * Not s3rver's `configureBuckets`: that truncates and rewrites the rule's file on every start, and
 * the service (or another das-admin on the same data directory) reading it in that moment fails
 * to parse it. The rule is written only when it differs, whole, by a rename.
 */
async function configureBucket(store: FilesystemStore, dir: string): Promise<void> {
  await store.putBucket(LOCAL_BUCKET);
  const file = store.getResourcePath(LOCAL_BUCKET, undefined, "cors.xml");
  let current: string | undefined;
  try {
    current = readFileSync(file, "utf8");
  } catch {
    current = undefined;
  }
  if (current === READ_FROM_ANY_ORIGIN) return;
  // Beside the bucket, not in it: a file in the store's root is no bucket and no object.
  const draft = path.join(dir, `.cors-${process.pid}-${randomBytes(4).toString("hex")}.xml`);
  writeFileSync(draft, READ_FROM_ANY_ORIGIN);
  renameSync(draft, file);
}

type KoaContext = {
  method: string;
  query: Record<string, unknown>;
  get(header: string): string;
  status: number;
  type: string;
  body: unknown;
};

async function refuseUnsigned(ctx: KoaContext, next: () => Promise<void>): Promise<void> {
  const signed = ctx.get("authorization") !== "" || "X-Amz-Algorithm" in ctx.query || "Signature" in ctx.query;
  if (signed || ctx.method === "OPTIONS") return next();
  ctx.status = 403;
  ctx.type = "application/xml";
  ctx.body =
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>';
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}
