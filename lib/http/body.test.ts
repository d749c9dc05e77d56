import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { AppError } from "../errors";
import { MAX_BODY_BYTES, readBodyText, readJsonBody } from "./body";
import { toAppError } from "./respond";

/** A JSON request whose body fails half way, as Node's does when the client closes the connection. */
function cutOffRequest(): Request {
  const reset = Object.assign(new Error("aborted"), { code: "ECONNRESET" });
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(reset);
      sent = true;
      controller.enqueue(new TextEncoder().encode('{"dataset_id":"ab'));
    },
  });
  return new Request("http://localhost/api/v1/downloads", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    duplex: "half",
  } as RequestInit);
}

describe("readJsonBody when the client leaves half way through its body", () => {
  afterEach(() => vi.restoreAllMocks());

  it("answers invalid_body, and logs no dependency failure (the database and store are fine)", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const error = await readJsonBody(cutOffRequest(), z.object({ dataset_id: z.string() })).catch((e) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("invalid_body");
    expect((error as AppError).message).toMatch(/cut off/);
    expect(toAppError(error, "req_test").code).toBe("invalid_body");
    expect(stderr).not.toHaveBeenCalled();
  });

  it("still answers a database's ECONNRESET as unavailable (the check can fail)", () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const dbReset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    expect(toAppError(dbReset, "req_test").code).toBe("unavailable");
    expect(String(stderr.mock.calls[0]?.[0])).toContain("dependency unavailable");
    // A write to a connection the database has just closed, as a killed backend leaves it.
    const brokenPipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE" });
    expect(toAppError(brokenPipe, "req_test").code).toBe("unavailable");
  });
});

/** A chunked JSON request whose body never ends, counting what has been pulled from it. */
function endlessRequest(): { request: Request; pulled: () => number } {
  let pulled = 0;
  const piece = new Uint8Array(64 * 1024).fill(0x20);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled += piece.length;
      controller.enqueue(piece);
    },
  });
  const request = new Request("http://localhost/api/v1/downloads", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    duplex: "half",
  } as RequestInit);
  return { request, pulled: () => pulled };
}

describe("readBodyText counts the bytes as they arrive", () => {
  it("stops an endless body just past the limit with 413 body_too_large, leaving the rest unread", async () => {
    const { request, pulled } = endlessRequest();
    const error = await readJsonBody(request, z.object({})).catch((e) => e);
    expect(error).toMatchObject({ code: "body_too_large", status: 413 });
    expect(pulled()).toBeGreaterThan(MAX_BODY_BYTES);
    expect(pulled()).toBeLessThan(MAX_BODY_BYTES + 4 * 64 * 1024);
    // Released, not cancelled: cancelling would destroy the socket before the 413 is written.
    expect(request.body!.locked).toBe(false);
  });

  it("refuses a declared Content-Length over the limit without reading anything", async () => {
    const { request, pulled } = endlessRequest();
    request.headers.set("content-length", String(MAX_BODY_BYTES + 1));
    await expect(readBodyText(request, MAX_BODY_BYTES)).rejects.toMatchObject({ code: "body_too_large" });
    expect(pulled()).toBeLessThanOrEqual(64 * 1024);
  });

  it("reads a body of exactly the limit, as UTF-8", async () => {
    const text = `"${"é".repeat((MAX_BODY_BYTES - 2) / 2)}"`;
    expect(Buffer.byteLength(text)).toBe(MAX_BODY_BYTES);
    const request = new Request("http://localhost/", { method: "POST", body: text });
    expect(await readBodyText(request, MAX_BODY_BYTES)).toBe(text);
  });
});
