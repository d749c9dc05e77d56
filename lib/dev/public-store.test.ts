import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { freePort } from "./embedded-postgres";
import { randomStoreCredentials, startLocalStore } from "./local-store";
import { putObject, s3Client } from "../storage/client";
import { BatchPresigner } from "../storage/presigner";

const dir = mkdtempSync(path.join(tmpdir(), "das-public-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("with a public address, the embedded store serves links signed for that address, and only signed ones", async () => {
  // 127.0.0.2 stands for the machine's address on the network: reached only if the store listens beyond 127.0.0.1.
  const publicEndpoint = `http://127.0.0.2:${await freePort()}`;
  const store = await startLocalStore(path.join(dir, "s3"), randomStoreCredentials(), { publicEndpoint });
  try {
    const client = s3Client(store.location);
    await putObject(client, store.location.bucket, "a/1.0.0/clip.mp4", Buffer.from("frames"));
    client.destroy();
    const [url] = await new BatchPresigner({ ...store.location, endpoint: publicEndpoint }).presignKeys(
      ["a/1.0.0/clip.mp4"],
      { signingDate: new Date(), expiresIn: 60 },
    );
    expect(new URL(url!).origin).toBe(publicEndpoint);
    const fetched = await fetch(url!);
    expect(fetched.status).toBe(200);
    expect(await fetched.text()).toBe("frames");
    // The same signature at another host is refused: a link works only where it says.
    const elsewhere = await fetch(url!.replace("127.0.0.2", "127.0.0.1"));
    expect(elsewhere.status).toBe(403);
    expect((await fetch(`${publicEndpoint}/das/a/1.0.0/clip.mp4`)).status).toBe(403);
  } finally {
    await store.stop();
  }
});

it("without one, the embedded store is reached on 127.0.0.1 only", async () => {
  const store = await startLocalStore(path.join(dir, "s3-local"), randomStoreCredentials());
  try {
    const port = new URL(store.location.endpoint).port;
    await expect(fetch(`http://127.0.0.2:${port}/`)).rejects.toThrow();
  } finally {
    await store.stop();
  }
});
