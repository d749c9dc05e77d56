import { describe, expect, it } from "vitest";
import { contentSecurityPolicy } from "./security-headers";

const directive = (policy: string, name: string) =>
  policy
    .split(";")
    .map((d) => d.trim())
    .find((d) => d.startsWith(`${name} `));

describe("the portal's media-src", () => {
  it("allows the store's origin and nothing else, not even the portal's own", () => {
    const policy = contentSecurityPolicy({
      nonce: "n",
      development: false,
      mediaSources: ["https://store.example:9000"],
    });
    expect(directive(policy, "media-src")).toBe("media-src https://store.example:9000");
  });

  it("allows no media at all without a store, and says so with 'none' rather than an empty list", () => {
    expect(directive(contentSecurityPolicy({ nonce: "n", development: false }), "media-src")).toBe("media-src 'none'");
  });
});
