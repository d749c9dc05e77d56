import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { mintWebhookSecret, openSecret, sealSecret } from "./secret-box";

describe("webhook secrets at rest", () => {
  const appSecret = randomBytes(32).toString("hex");

  it("are sealed: the stored text holds neither the secret nor its key material, and opens to it", () => {
    const secret = mintWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const sealed = sealSecret(secret, "whk_one", appSecret);
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(Buffer.from(sealed.split(".")[3]!, "base64url").toString("latin1")).not.toContain("whsec_");
    expect(openSecret(sealed, "whk_one", appSecret)).toBe(secret);
    // a fresh IV each time
    expect(sealSecret(secret, "whk_one", appSecret)).not.toBe(sealed);
  });

  it("do not open under another APP_SECRET, for another endpoint, or once altered", () => {
    const sealed = sealSecret(mintWebhookSecret(), "whk_one", appSecret);
    expect(() => openSecret(sealed, "whk_one", randomBytes(32).toString("hex"))).toThrow();
    expect(() => openSecret(sealed, "whk_two", appSecret)).toThrow();
    const parts = sealed.split(".");
    const body = Buffer.from(parts[3]!, "base64url");
    body[0] = body[0]! ^ 1;
    parts[3] = body.toString("base64url");
    expect(() => openSecret(parts.join("."), "whk_one", appSecret)).toThrow();
  });
});
