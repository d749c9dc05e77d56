// npm run dev / npm start – the app on the embedded default (or on what the environment configures).
import { spawn } from "node:child_process";
import { userInfo } from "node:os";
import { PROJECT_ROOT, startEmbeddedDefault } from "@/lib/dev/embedded-default";
import { NEXT_BIN, productionBuildIsCurrent } from "@/lib/dev/next-server";
import { createDb } from "@/lib/db/client";
import { datasets } from "@/lib/db/schema";
import { seedDemo, printAccounts } from "@/lib/dev/demo/seed";
import { storeLocation } from "@/lib/storage/config";
import { demoAccounts } from "@/lib/dev/demo/credentials";
import { createPublicKey } from "node:crypto";
import { loadSigningKey, publicKeyPem, publicKeySha256 } from "@/lib/disclosures/digest";

const mode = process.argv[2];
if (mode !== "dev" && mode !== "start") {
  console.error("usage: serve.ts dev|start");
  process.exit(2);
}
const port = process.env.PORT ?? "3000";
const log = (line: string) => console.log(`[das] ${line}`);

const runtime = await startEmbeddedDefault();
Object.assign(process.env, runtime.env);
if (runtime.embedded.database) await ensureDemoData(runtime.env.DATABASE_URL!, runtime.env.APP_SECRET!);
if (runtime.env.DIGEST_SIGNING_KEY) {
  // The installation's own key: reviewers check the log's digests with this public key.
  const key = createPublicKey(loadSigningKey("DIGEST_SIGNING_KEY", runtime.env.DIGEST_SIGNING_KEY));
  log(
    `Disclosure digests are signed with ${runtime.env.DIGEST_SIGNING_KEY}; public key (sha256 ${publicKeySha256(key)}):\n${publicKeyPem(key).trim()}`,
  );
}

if (mode === "start" && !productionBuildIsCurrent()) {
  log("No production build of this code yet: running `next build` first.");
  await run([NEXT_BIN, "build"]);
}

log(`Dataset Access Service: http://localhost:${port}  (API at http://localhost:${port}/api/v1)`);
const child = spawn(process.execPath, [NEXT_BIN, mode, "-p", port], {
  cwd: PROJECT_ROOT,
  env: { ...process.env, ...runtime.env },
  stdio: "inherit",
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", async (code) => {
  await runtime.stop();
  process.exit(code ?? 0);
});

/** First start on an empty embedded database loads the demo data; later starts only print the accounts. */
async function ensureDemoData(url: string, appSecret: string) {
  const db = createDb(url, { max: 4 });
  try {
    const [any] = await db.select({ id: datasets.id }).from(datasets).limit(1);
    if (!any) {
      log("Empty database: loading demo data (once).");
      await seedDemo(
        { db, requestId: "seed", principal: { kind: "operator", name: userInfo().username, organizationId: null } },
        { appSecret, store: storeLocation(), log: (line) => log(line) },
      );
    } else {
      printAccounts(demoAccounts(appSecret), log);
    }
  } finally {
    await db.$client.end({ timeout: 5 });
  }
}

function run(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    spawn(process.execPath, args, { cwd: PROJECT_ROOT, stdio: "inherit", env: process.env }).on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${args.join(" ")} exited with ${code}`)),
    );
  });
}
