// npm run dev / npm start – the app on the embedded default (or on what the environment configures).
import { spawn, type ChildProcess } from "node:child_process";
import { userInfo } from "node:os";
import { PROJECT_ROOT, serviceEnv, startEmbeddedDefault } from "@/lib/dev/embedded-default";
import { NEXT_BIN, productionBuildIsCurrent } from "@/lib/dev/next-server";
import { createDb } from "@/lib/db/client";
import { datasets } from "@/lib/db/schema";
import { seedDemo, printAccounts } from "@/lib/dev/demo/seed";
import { storeLocation } from "@/lib/storage/config";
import { demoAccounts, type DemoAccounts } from "@/lib/dev/demo/credentials";
import { createPublicKey } from "node:crypto";
import { loadSigningKey, publicKeyPem, publicKeySha256 } from "@/lib/disclosures/digest";

// The service is announced (its URL, the demo keys and users) only once its sign-in page answers
// 200: a newcomer who opens the URL or runs the README's curl at once must not meet "connection
// refused" or a page that compiles for a minute. Until then each step says what it is waiting for,
// and Next's own lines (its "Local: http://..." among them) are held back and shown with the URL.

const mode = process.argv[2];
if (mode !== "dev" && mode !== "start") {
  console.error("usage: serve.ts dev|start");
  process.exit(2);
}
const port = process.env.PORT ?? "3000";
const log = (line: string) => console.log(`[das] ${line}`);
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;

log(
  process.env.DATABASE_URL
    ? "Starting on the configured database."
    : "Starting the embedded PostgreSQL and object store (data under DAS_DATA_DIR, default .data/).",
);
const runtime = await startEmbeddedDefault({ serveStore: true });
Object.assign(process.env, serviceEnv(runtime.env));
const accounts = runtime.embedded.database
  ? await ensureDemoData(runtime.env.DATABASE_URL!, runtime.env.APP_SECRET!)
  : undefined;

if (mode === "start" && !productionBuildIsCurrent()) {
  log("No production build of this code yet: running `next build` first (a few minutes, once per change of the code).");
  await run([NEXT_BIN, "build"]);
}

log(
  mode === "dev"
    ? "Starting Next.js in development mode; waiting for the sign-in page to compile (a minute or so)."
    : "Starting Next.js on the production build; waiting for the sign-in page to answer.",
);
const child = spawn(process.execPath, [NEXT_BIN, mode, "-p", port], {
  cwd: PROJECT_ROOT,
  env: serviceEnv({ ...process.env, ...runtime.env }),
  stdio: ["ignore", "pipe", "pipe"],
});
const held = holdOutput(child);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => child.kill(signal));
child.on("exit", async (code) => {
  held.release();
  await runtime.stop();
  process.exit(code ?? 0);
});

const local = `http://127.0.0.1:${port}`;
if (!(await answers(`${local}/login`, child, mode === "dev" ? 600_000 : 180_000))) {
  held.release();
  log(`The server did not answer ${local}/login with 200 within ${elapsed()}; its output is above. Stopping.`);
  child.kill("SIGTERM");
} else {
  held.release();
  if (runtime.env.DIGEST_SIGNING_KEY) {
    // The installation's own key: reviewers check the log's digests with this public key.
    const key = createPublicKey(loadSigningKey("DIGEST_SIGNING_KEY", runtime.env.DIGEST_SIGNING_KEY));
    log(
      `Disclosure digests are signed with ${runtime.env.DIGEST_SIGNING_KEY}; public key (sha256 ${publicKeySha256(key)}):\n${publicKeyPem(key).trim()}`,
    );
  }
  if (accounts) printAccounts(accounts, log);
  if (runtime.embedded.store)
    log(
      process.env.S3_PUBLIC_ENDPOINT
        ? `Download links name the embedded store at ${process.env.S3_PUBLIC_ENDPOINT} (S3_PUBLIC_ENDPOINT).`
        : `Download links name the embedded store at ${runtime.env.S3_ENDPOINT}, which only this machine reaches; for a portal used from other machines set S3_PUBLIC_ENDPOINT (README, "Running it").`,
    );
  if (mode === "dev")
    log("Development mode: each page compiles on its first visit (seconds each); `npm start` serves them all at once.");
  log(
    `Dataset Access Service: http://localhost:${port}  (API at http://localhost:${port}/api/v1), ready in ${elapsed()}`,
  );
}

/** First start on an empty embedded database loads the demo data; every start returns its accounts to print. */
async function ensureDemoData(url: string, appSecret: string): Promise<DemoAccounts> {
  const db = createDb(url, { max: 4 });
  try {
    const [any] = await db.select({ id: datasets.id }).from(datasets).limit(1);
    if (any) return demoAccounts(appSecret);
    log("Empty database: loading the demo data (once, about a minute).");
    return await seedDemo(
      { db, requestId: "seed", principal: { kind: "operator", name: userInfo().username, organizationId: null } },
      { appSecret, store: storeLocation(), log: (line) => log(line) },
    );
  } finally {
    await db.$client.end({ timeout: 5 });
  }
}

/**
 * Whether `url` answers 200 before `ms` pass, asking every half second while the server starts (a
 * refused connection, or a 5xx while a page compiles). False at once if the server exits.
 */
async function answers(url: string, server: ChildProcess, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && server.exitCode === null) {
    try {
      const response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(deadline - Date.now()) });
      await response.arrayBuffer();
      if (response.status === 200) return true;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

/** The child's output, kept until `release()`, then passed through as it comes. */
function holdOutput(server: ChildProcess): { release(): void } {
  const kept: [NodeJS.WriteStream, Buffer][] = [];
  let holding = true;
  for (const [from, to] of [
    [server.stdout!, process.stdout],
    [server.stderr!, process.stderr],
  ] as const)
    from.on("data", (chunk: Buffer) => (holding ? kept.push([to, chunk]) : to.write(chunk)));
  return {
    release() {
      if (!holding) return;
      holding = false;
      for (const [to, chunk] of kept.splice(0)) to.write(chunk);
    },
  };
}

function run(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    spawn(process.execPath, args, { cwd: PROJECT_ROOT, stdio: "inherit", env: process.env }).on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${args.join(" ")} exited with ${code}`)),
    );
  });
}
