import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** A secret of this installation: made on first use, then read from `<dataDir>/<name>` (mode 0600). */
export function installationFile(dataDir: string, name: string, make: () => string): string {
  const file = path.join(dataDir, name);
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    try {
      writeFileSync(file, make(), { mode: 0o600, flag: "wx" });
    } catch (error) {
      // Another process (das-admin beside npm run dev) made it first: read theirs.
      if ((error as { code?: string }).code !== "EEXIST") throw error;
    }
  }
  return readFileSync(file, "utf8").trim();
}
