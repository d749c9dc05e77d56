import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { requireEnv } from "../env";

// Webhook signing secrets must be readable by the service (it signs with them) yet never lie in
// the database in plaintext: a copy of the database, a backup or a read-only SQL account must not
// be enough to forge deliveries. So each is sealed with AES-256-GCM under a key derived by HKDF
// from the installation's APP_SECRET, which lives outside the database, and bound to its endpoint
// (the id is the additional data), so a sealed secret copied onto another row does not open.

const VERSION = "v1";
const INFO = "das-webhook-signing-secrets-v1";

function sealingKey(appSecret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", appSecret, Buffer.alloc(0), INFO, 32));
}

/** `v1.<iv>.<tag>.<ciphertext>`, each base64url. */
export function sealSecret(secret: string, endpointId: string, appSecret = requireEnv("APP_SECRET")): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", sealingKey(appSecret), iv);
  cipher.setAAD(Buffer.from(endpointId, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext]
    .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
    .join(".");
}

/** Throws when the sealed text was altered, belongs to another endpoint or was sealed under another APP_SECRET. */
export function openSecret(sealed: string, endpointId: string, appSecret = requireEnv("APP_SECRET")): string {
  const [version, iv, tag, ciphertext] = sealed.split(".");
  if (version !== VERSION || !iv || !tag || ciphertext === undefined)
    throw new Error("A sealed webhook secret has an unknown format.");
  const decipher = createDecipheriv("aes-256-gcm", sealingKey(appSecret), Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(endpointId, "utf8"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
}

/** A Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes. */
export function mintWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}
