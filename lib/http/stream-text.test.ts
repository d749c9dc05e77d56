import { describe, expect, it, vi } from "vitest";
import { hashPassword } from "../auth/passwords";
import { getDb } from "../db/client";
import { users } from "../db/schema";
import { uniqueId } from "../testing/fixtures";
import { streamText } from "./stream-text";

async function* numberedLines(count: number, finished: { value: boolean }) {
  try {
    for (let i = 0; i < count; i++) yield `line ${i}\n`;
  } finally {
    finished.value = true;
  }
}

describe("streamText", () => {
  it("sends every piece in order, gathered into chunks of about 64 KiB rather than one per line", async () => {
    const finished = { value: false };
    const response = streamText(numberedLines(50_000, finished), { "Content-Type": "text/plain" });
    const reader = response.body!.getReader();
    const chunks: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    const text = Buffer.concat(chunks).toString("utf8");
    expect(text).toBe(Array.from({ length: 50_000 }, (_, i) => `line ${i}\n`).join(""));
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.length).toBeLessThan(20);
    expect(finished.value).toBe(true);
  });

  it("sends pieces of bytes as they are, in order with the text around them", async () => {
    async function* mixed() {
      yield "header é\n";
      yield Buffer.from("bytes ü 1\n");
      yield "text 2\n";
      yield Buffer.alloc(100_000, "x");
      yield Buffer.from("\nbytes 3\n");
      yield "tail";
    }
    const text = await streamText(mixed(), {}).text();
    expect(text).toBe(`header é\nbytes ü 1\ntext 2\n${"x".repeat(100_000)}\nbytes 3\ntail`);
  });

  it("sends an empty body for no pieces, and ends the source when the client goes away", async () => {
    expect(await streamText(numberedLines(0, { value: false }), {}).text()).toBe("");
    const finished = { value: false };
    const reader = streamText(numberedLines(1_000_000, finished), {}).body!.getReader();
    await reader.read();
    await reader.cancel();
    expect(finished.value).toBe(true);
  });

  it("breaks off on a source's failure with nothing of its text, which goes to the log as errorFields allows", async () => {
    const hash = await hashPassword("a long secret password");
    async function* failing() {
      yield "first line\n";
      // A failed insert: the driver's error carries its parameters, an argon2id hash among them.
      await getDb()
        .insert(users)
        .values({ id: uniqueId("usr"), email: "a\u0000b@x.example", role: "reviewer", passwordHash: hash });
    }
    const logged: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((text) => (logged.push(String(text)), true));
    try {
      const error = await streamText(failing(), {})
        .text()
        .then(
          () => expect.fail("the stream should break off"),
          (e: unknown) => e,
        );
      expect(String((error as Error).message)).not.toContain("argon2id");
      expect(String((error as Error).stack)).not.toContain("argon2id");
    } finally {
      spy.mockRestore();
    }
    expect(logged.join("")).toContain("DrizzleQueryError <- PostgresError 22021");
    expect(logged.join("")).not.toContain("argon2id");
  });
});
