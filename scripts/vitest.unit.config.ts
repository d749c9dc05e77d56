// npm run test:unit – the suites that need no database, no object store, no build and no browser:
// those whose run-time imports reach none of the services the other suites start. Seconds, not
// minutes; `npm test` runs them again with everything else.
import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { reachable } from "../lib/testing/import-graph";
import base from "./vitest.config";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** What a suite that needs a running service reaches: a database, the local store, a server or a command line. */
const SERVICES = [
  "lib/db/client.ts",
  "lib/dev/embedded-postgres.ts",
  "lib/dev/local-store.ts",
  "lib/dev/next-server.ts",
  "lib/testing/app-server.ts",
  "lib/testing/cli.ts",
];

// The folders of the main config's `include`, each `**/*.test.ts` (Node 20 has no fs.globSync).
const suites = ["lib", "app", "components", "scripts"].flatMap((dir) =>
  (readdirSync(path.join(root, dir), { recursive: true }) as string[])
    .filter((file) => file.endsWith(".test.ts"))
    .map((file) => path.posix.join(dir, file.split(path.sep).join("/"))),
);
const unit = suites.filter((file) => {
  const { files } = reachable(file);
  return !SERVICES.some((service) => files.has(service));
});

export default defineConfig({
  ...base,
  test: { ...base.test, include: unit, globalSetup: [], setupFiles: [] },
});
