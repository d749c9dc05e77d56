import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "@playwright/test";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const E2E_PORT = Number(process.env.E2E_PORT ?? 3210);
export const E2E_DATA_DIR = ".data/e2e";

/**
 * Browser journeys against the production build on the embedded default, with demo data, in
 * Debian's Chromium (never a downloaded browser). Screenshots of every main page go to
 * test-results/screenshots/.
 */
export default defineConfig({
  testDir: ".",
  outputDir: path.join(root, "test-results/e2e"),
  timeout: 90_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  reporter: [["list"]],
  use: {
    baseURL: `http://localhost:${E2E_PORT}`,
    viewport: { width: 1280, height: 900 },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    },
  },
  webServer: {
    // A fresh installation each run: the launcher starts PostgreSQL and the object store, seeds, then `next start`.
    command: `rm -rf ${E2E_DATA_DIR} && DAS_DATA_DIR=${E2E_DATA_DIR} PORT=${E2E_PORT} node --import tsx scripts/serve.ts start`,
    cwd: root,
    url: `http://localhost:${E2E_PORT}/login`,
    // Seeding a fresh installation on a shared, busy machine has taken longer than 4 minutes.
    timeout: 480_000,
    reuseExistingServer: false,
    stdout: "ignore",
    stderr: "pipe",
  },
});
