import { describe, expect, it } from "vitest";
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

  it("sends an empty body for no pieces, and ends the source when the client goes away", async () => {
    expect(await streamText(numberedLines(0, { value: false }), {}).text()).toBe("");
    const finished = { value: false };
    const reader = streamText(numberedLines(1_000_000, finished), {}).body!.getReader();
    await reader.read();
    await reader.cancel();
    expect(finished.value).toBe(true);
  });
});
