import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Hash } from "@smithy/core/serde";
import { escapeUri, extendedEncodeURIComponent } from "@smithy/core/protocols";
import { HttpRequest } from "@smithy/protocol-http";
import { SignatureV4 } from "@smithy/signature-v4";
import { BatchPresigner, type StoreLocation } from "./presigner";

// AWS's published example of a presigned GET URL (Signature Version 4, "Authenticating Requests:
// Using Query Parameters", example "Presigned URL" for examplebucket/test.txt).
const AWS_EXAMPLE: StoreLocation = {
  endpoint: "https://s3.amazonaws.com",
  region: "us-east-1",
  bucket: "examplebucket",
  forcePathStyle: false,
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
};
const AWS_EXAMPLE_DATE = new Date("2013-05-24T00:00:00Z");
const AWS_EXAMPLE_SIGNATURE = "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";
const AWS_EXAMPLE_URL =
  "https://examplebucket.s3.amazonaws.com/test.txt" +
  "?X-Amz-Algorithm=AWS4-HMAC-SHA256" +
  "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request" +
  "&X-Amz-Date=20130524T000000Z" +
  "&X-Amz-Expires=86400" +
  "&X-Amz-SignedHeaders=host" +
  `&X-Amz-Signature=${AWS_EXAMPLE_SIGNATURE}`;

describe("BatchPresigner against AWS's published SigV4 example", () => {
  it("gives the published signature and URL for examplebucket/test.txt", async () => {
    const [url] = await new BatchPresigner(AWS_EXAMPLE).presignKeys(["test.txt"], {
      signingDate: AWS_EXAMPLE_DATE,
      expiresIn: 86_400,
    });
    expect(new URL(url!).searchParams.get("X-Amz-Signature")).toBe(AWS_EXAMPLE_SIGNATURE);
    expect(url).toBe(AWS_EXAMPLE_URL);
  });

  it("signs every key of a batch as if it were signed alone", async () => {
    const presigner = new BatchPresigner(AWS_EXAMPLE);
    const options = { signingDate: AWS_EXAMPLE_DATE, expiresIn: 86_400 };
    const batch = await presigner.presignKeys(["a.txt", "test.txt", "b/c.txt"], options);
    expect(batch[1]).toBe(AWS_EXAMPLE_URL);
    expect(batch[0]).toBe((await presigner.presignKeys(["a.txt"], options))[0]);
    expect(batch[2]).toBe((await presigner.presignKeys(["b/c.txt"], options))[0]);
    expect(new Set(batch.map((u) => new URL(u).searchParams.get("X-Amz-Signature"))).size).toBe(3);
  });

  it("changes the signature with any input the store checks: secret, date, expiry, key, bucket", async () => {
    const sign = async (location: StoreLocation, key: string, date = AWS_EXAMPLE_DATE, expiresIn = 86_400) =>
      new URL(
        (await new BatchPresigner(location).presignKeys([key], { signingDate: date, expiresIn }))[0]!,
      ).searchParams.get("X-Amz-Signature");
    const variants = [
      await sign({ ...AWS_EXAMPLE, secretAccessKey: `${AWS_EXAMPLE.secretAccessKey}x` }, "test.txt"),
      await sign(AWS_EXAMPLE, "test.txt", new Date(AWS_EXAMPLE_DATE.getTime() + 1000)),
      await sign(AWS_EXAMPLE, "test.txt", AWS_EXAMPLE_DATE, 86_399),
      await sign(AWS_EXAMPLE, "Test.txt"),
      await sign({ ...AWS_EXAMPLE, bucket: "examplebucket2" }, "test.txt"),
      await sign({ ...AWS_EXAMPLE, region: "eu-west-1" }, "test.txt"),
    ];
    for (const signature of variants) expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set([AWS_EXAMPLE_SIGNATURE, ...variants]).size).toBe(variants.length + 1);
  });
});

/**
 * The reference: the SDK's own `SignatureV4.presign`, configured as the S3 client configures it,
 * over the request the S3 client would build for a GetObject (greedy key label encoded per
 * segment), and the URL built from the HttpRequest it returns: its query parameters in the order
 * presign set them, each escaped with the SDK's escapeUri. (The SDK's formatUrl would sort them,
 * putting X-Amz-Signature before X-Amz-SignedHeaders; the order means nothing to a store, and
 * presign's own order is that of AWS's published URL.)
 */
async function sdkPresignedUrl(
  location: StoreLocation,
  key: string,
  signingDate: Date,
  expiresIn: number,
): Promise<string> {
  const signer = new SignatureV4({
    service: "s3",
    region: location.region,
    credentials: {
      accessKeyId: location.accessKeyId,
      secretAccessKey: location.secretAccessKey,
      sessionToken: location.sessionToken,
    },
    sha256: Hash.bind(null, "sha256"),
    uriEscapePath: false,
    applyChecksum: false,
  });
  const endpoint = new URL(location.endpoint);
  const hostname = location.forcePathStyle ? endpoint.hostname : `${location.bucket}.${endpoint.hostname}`;
  const port = endpoint.port ? Number(endpoint.port) : undefined;
  const basePath = endpoint.pathname.replace(/\/+$/, "");
  const encodedKey = key.split("/").map(extendedEncodeURIComponent).join("/");
  const path = location.forcePathStyle
    ? `${basePath}/${extendedEncodeURIComponent(location.bucket)}/${encodedKey}`
    : `${basePath}/${encodedKey}`;
  const request = new HttpRequest({
    method: "GET",
    protocol: endpoint.protocol,
    hostname,
    port,
    path,
    headers: { host: port ? `${hostname}:${port}` : hostname, "x-amz-content-sha256": "UNSIGNED-PAYLOAD" },
    query: {},
  });
  const signed = await signer.presign(request, {
    signingDate,
    expiresIn,
    unhoistableHeaders: new Set(["x-amz-content-sha256"]),
    unsignableHeaders: new Set(["x-amz-content-sha256"]),
  });
  const authority = signed.port ? `${signed.hostname}:${signed.port}` : signed.hostname;
  const query = Object.entries(signed.query ?? {}).map(
    ([name, value]) => `${escapeUri(name)}=${escapeUri(value as string)}`,
  );
  return `${signed.protocol}//${authority}${signed.path}?${query.join("&")}`;
}

const LOCATIONS: [string, StoreLocation][] = [
  ["virtual-hosted on AWS", AWS_EXAMPLE],
  [
    "virtual-hosted, regional endpoint",
    { ...AWS_EXAMPLE, endpoint: "https://s3.eu-central-1.amazonaws.com", region: "eu-central-1", bucket: "das-files" },
  ],
  [
    "path-style with a port (local store)",
    {
      ...AWS_EXAMPLE,
      endpoint: "http://127.0.0.1:54330",
      bucket: "das",
      forcePathStyle: true,
      accessKeyId: "S3RVER",
      secretAccessKey: "S3RVER",
    },
  ],
  [
    "path-style under a base path",
    { ...AWS_EXAMPLE, endpoint: "https://minio.example.com:9000/storage/", bucket: "my.bucket", forcePathStyle: true },
  ],
];

// Characters a file path may hold that URL encoding treats specially.
const AWKWARD = [
  " ",
  "+",
  "=",
  "&",
  "?",
  "#",
  "%",
  "(",
  ")",
  "~",
  "!",
  "'",
  "*",
  ",",
  ";",
  ":",
  "@",
  "$",
  "[",
  "]",
  "ü",
  "é",
  "中",
  "🤖",
  "\u00a0",
  ".",
  "-",
  "_",
];

const keySegment = fc.oneof(
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }),
  fc
    .array(fc.oneof(fc.constantFrom(...AWKWARD), fc.constantFrom("a", "Z", "0", "9")), { minLength: 1, maxLength: 12 })
    .map((cs) => cs.join("")),
  fc.stringMatching(/^[A-Za-z0-9._~-]{1,20}$/),
);
const objectKeys = fc.array(keySegment, { minLength: 1, maxLength: 5 }).map((segments) => segments.join("/"));
const signingDates = fc.date({
  min: new Date("2000-01-01T00:00:00Z"),
  max: new Date("2099-12-31T23:59:59Z"),
  noInvalidDate: true,
});

describe("BatchPresigner against the SDK's SignatureV4.presign", () => {
  it.each(LOCATIONS)("gives the SDK's URL for random keys, %s", async (_, location) => {
    const presigner = new BatchPresigner(location);
    await fc.assert(
      fc.asyncProperty(
        fc.array(objectKeys, { minLength: 1, maxLength: 8 }),
        signingDates,
        fc.integer({ min: 1, max: 604_800 }),
        async (keys, date, expiresIn) => {
          const batch = await presigner.presignKeys(keys, { signingDate: date, expiresIn });
          expect(batch).toHaveLength(keys.length);
          for (const [i, key] of keys.entries()) {
            expect(batch[i], JSON.stringify(key)).toBe(await sdkPresignedUrl(location, key, date, expiresIn));
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it("gives the SDK's URL for the awkward characters one by one, in every position", async () => {
    const location = LOCATIONS[2]![1];
    const presigner = new BatchPresigner(location);
    const keys = AWKWARD.flatMap((c) => [c, `${c}x`, `x${c}`, `a/${c}/b`, `${c}${c}`, `ds/1.0.0/ep ${c} (1).mp4`]);
    const options = { signingDate: new Date("2026-03-01T12:34:56Z"), expiresIn: 900 };
    const batch = await presigner.presignKeys(keys, options);
    for (const [i, key] of keys.entries())
      expect(batch[i], JSON.stringify(key)).toBe(await sdkPresignedUrl(location, key, options.signingDate, 900));
    // Every awkward character of a segment is percent-encoded except the unreserved ones.
    const path = new URL(batch[keys.indexOf("ds/1.0.0/ep + (1).mp4")]!).pathname;
    expect(path).toBe("/das/ds/1.0.0/ep%20%2B%20%281%29.mp4");
  });

  it("carries a session token and signs it as the SDK does", async () => {
    const location = { ...LOCATIONS[0]![1], sessionToken: "FwoGZXIvYXdzE+/token=" };
    const options = { signingDate: new Date("2026-03-01T12:34:56Z"), expiresIn: 900 };
    const [url] = await new BatchPresigner(location).presignKeys(["a b/c.txt"], options);
    const reference = new URL(await sdkPresignedUrl(location, "a b/c.txt", options.signingDate, 900));
    const ours = new URL(url!);
    expect(ours.searchParams.get("X-Amz-Security-Token")).toBe(location.sessionToken);
    // The SDK puts the token first; the parameters and the signature are what the store checks.
    expect(ours.origin + ours.pathname).toBe(reference.origin + reference.pathname);
    expect([...ours.searchParams].sort()).toEqual([...reference.searchParams].sort());
  });
});
