import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { AppError } from "../errors";
import { readJsonBody } from "./body";
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
