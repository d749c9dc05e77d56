// npm test – builds the production bundle, then runs every suite against real services:
// vitest (PostgreSQL: the embedded default, or DATABASE_URL's server; Redis suites when REDIS_URL
// is set), then the browser journeys in Debian's Chromium on a fresh embedded installation.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { PROJECT_ROOT } from "@/lib/dev/embedded-default";
import { NEXT_BIN } from "@/lib/dev/next-server";

const bin = (pkg: string, file: string) => path.join(PROJECT_ROOT, "node_modules", pkg, file);

const steps: { name: string; args: string[] }[] = [
  // The HTTP suites start `next start` on this build, so it must match the source being tested.
  { name: "next build", args: [NEXT_BIN, "build"] },
  {
    name: "vitest",
    args: [bin("vitest", "vitest.mjs"), "run", "--config", "scripts/vitest.config.ts", ...process.argv.slice(2)],
  },
  { name: "playwright (e2e)", args: [bin("@playwright/test", "cli.js"), "test", "-c", "e2e/playwright.config.ts"] },
];

const chromium = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(chromium)) {
  process.stderr.write(
    `[test] The browser suite needs Debian's Chromium at ${chromium}: apt-get install -y chromium\n`,
  );
  process.exit(1);
}

for (const step of steps) {
  process.stderr.write(`\n[test] ${step.name}\n`);
  const result = spawnSync(process.execPath, step.args, { cwd: PROJECT_ROOT, stdio: "inherit", env: process.env });
  if (result.status !== 0) {
    process.stderr.write(`[test] ${step.name} failed (exit ${result.status ?? result.signal})\n`);
    process.exit(result.status ?? 1);
  }
}
process.stderr.write("\n[test] all suites passed\n");
