import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { reachable, resolveImport } from "./testing/import-graph";
import { PROJECT_ROOT } from "./dev/embedded-default";

// The layers of docs/architecture.md, checked on every import of every source file rather than
// asserted: an import runs only to its own layer or a lower one, with the few rules below.

/** Lowest first. A file may import from its own layer and the layers before it. */
const LAYERS = [
  // Plain helpers that depend on nothing of ours: errors, ids, log, env, canonical JSON, CSV, cursors,
  // the client's address, redirect targets, safe paths, and the bounded readers of files an operator
  // hands over, which the catalog's import format and LeRobot's reader share.
  { name: "base", holds: (f: string) => /^lib\/[^/]+\.tsx?$/.test(f) && f !== "lib/context.ts" },
  // Where state lives: PostgreSQL, the object store, rate-limit counters (Redis or memory), the
  // API's per-instance cache (invalidated by PostgreSQL notifications).
  { name: "store", holds: under("lib/db", "lib/storage", "lib/limits", "lib/cache") },
  // Who is asking: principals, keys, passwords, sessions, the role checks; the context every verb takes.
  { name: "auth", holds: (f: string) => under("lib/auth")(f) || f === "lib/context.ts" },
  // The verbs.
  {
    name: "domain",
    holds: under(
      "lib/catalog",
      "lib/downloads",
      "lib/previews",
      "lib/disclosures",
      "lib/admin",
      "lib/lerobot",
      "lib/marks",
      "lib/fingerprints",
      "lib/notice-delivery",
      "lib/notices",
      "lib/withdrawals",
      "lib/views",
      "lib/hub",
    ),
  },
  // The API's contract: request and response schemas, the OpenAPI document.
  { name: "api", holds: under("lib/api") },
  // Requests and answers: API routes' endpoint(), the portal's page, route and action guards.
  { name: "http", holds: under("lib/http", "lib/portal") },
  // Shared React components, then pages, route handlers and server actions.
  { name: "components", holds: under("components") },
  { name: "app", holds: (f: string) => under("app")(f) || f === "proxy.ts" || f === "instrumentation.ts" },
] as const;

/**
 * Inside lib/ but no layer of the product: the `das` client's logic may use the API's contract and
 * base files only (it talks to the service over HTTP, never to its database); the development
 * runtime (lib/dev) and the test support (lib/testing) are used by scripts and tests only, never by
 * the product.
 */
const CLIENT = under("lib/client");
/**
 * LeRobot's format (info.json, path templates, parquet, the reader of a dataset directory, the
 * subset writer): files only, no database, no network, no caller. The importer reads datasets with it and `das pull` writes
 * them, so the client may use it too; for that it imports nothing of ours but base files.
 */
const LEROBOT_FORMAT = under("lib/lerobot");
/**
 * The leak marks (marking a parquet file, the trailers of other files, reading and testing a leaked
 * file's cells): bytes in, bytes or verdicts out, no database, no store, no caller, like LeRobot's
 * format code; lib/fingerprints is the domain around it (copies, their jobs, delivery, trace).
 */
const MARKS_FORMAT = under("lib/marks");
const DEV_AND_TESTING = under("lib/dev", "lib/testing");
const SCRIPTS = under("scripts");
const isTest = (f: string) => /\.test\.tsx?$/.test(f) || under("e2e")(f);

/** Next.js, and Auth.js which is Next's, belong to the delivery layers only. */
const NEXT_PACKAGE = /^(next|next-auth|@auth\/[^/]+)(\/|$)/;
const NEXT_ALLOWED = (f: string) =>
  under("lib/http", "app", "components")(f) ||
  f === "lib/auth/next-auth.ts" ||
  f === "proxy.ts" ||
  f === "instrumentation.ts";

function under(...folders: string[]) {
  return (f: string) => folders.some((folder) => f.startsWith(`${folder}/`));
}

type Import = { from: string; specifier: string; target: string | null };

const SOURCE = /\.(ts|tsx|mjs)$/;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(PROJECT_ROOT, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(PROJECT_ROOT, rel)).isDirectory()) out.push(...sourceFiles(rel));
    else if (SOURCE.test(name)) out.push(rel);
  }
  return out;
}

/** The project file an import names, or null for a package. Throws for one that names no file. */
function importsOf(file: string): Import[] {
  const text = readFileSync(path.join(PROJECT_ROOT, file), "utf8");
  // Static imports, `export ... from`, dynamic import() and require(), type-only ones included.
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles.map(({ fileName }) => ({
    from: file,
    specifier: fileName,
    target: resolveImport(file, fileName),
  }));
}

const layerOf = (file: string) => LAYERS.findIndex((layer) => layer.holds(file));

/** Why an import breaks the rules, or null. */
function violation({ from, specifier, target }: Import): string | null {
  if (target === null) {
    if (
      NEXT_PACKAGE.test(specifier) &&
      !NEXT_ALLOWED(from) &&
      !DEV_AND_TESTING(from) &&
      !SCRIPTS(from) &&
      !isTest(from)
    ) {
      return `${from} imports ${specifier}: Next.js belongs to lib/http, app and components (and lib/auth/next-auth.ts)`;
    }
    return null;
  }
  if (DEV_AND_TESTING(target) && !DEV_AND_TESTING(from) && !SCRIPTS(from) && !isTest(from)) {
    return `${from} imports ${target}: the development runtime and test support are for scripts and tests only`;
  }
  if (CLIENT(target) && !CLIENT(from) && !SCRIPTS(from) && !isTest(from)) {
    return `${from} imports ${target}: the das client's logic is for the das command line only`;
  }
  // Scripts, tests, the development runtime and the test support stand on top of everything else.
  if (SCRIPTS(from) || isTest(from) || DEV_AND_TESTING(from)) return null;
  if (CLIENT(from)) {
    return CLIENT(target) || LAYERS[0].holds(target) || under("lib/api")(target) || LEROBOT_FORMAT(target)
      ? null
      : `${from} imports ${target}: the das client uses lib/api, lib/lerobot and base files only`;
  }
  if (LEROBOT_FORMAT(from) && !LEROBOT_FORMAT(target) && !LAYERS[0].holds(target)) {
    return `${from} imports ${target}: LeRobot's format code, which the das client shares, imports only base files`;
  }
  if (MARKS_FORMAT(from) && !MARKS_FORMAT(target) && !LAYERS[0].holds(target)) {
    return `${from} imports ${target}: the leak marks are bytes in and out, and import only base files`;
  }
  const own = layerOf(from);
  const theirs = layerOf(target);
  if (own < 0 || theirs < 0) return `${from} imports ${target}: ${own < 0 ? from : target} is in no layer`;
  if (theirs > own) {
    return `${from} (${LAYERS[own]!.name}) imports ${target} (${LAYERS[theirs]!.name}): an import runs only to the same or a lower layer`;
  }
  return null;
}

const FILES = ["lib", "app", "components", "scripts", "e2e"]
  .flatMap(sourceFiles)
  .concat(["proxy.ts", "instrumentation.ts"]);
const IMPORTS = FILES.flatMap(importsOf);

describe("the layers", () => {
  it("place every product file in exactly one layer (outside the product: lib/client, lib/dev, lib/testing, scripts, tests)", () => {
    const unplaced = FILES.filter(
      (f) =>
        !isTest(f) && !SCRIPTS(f) && !DEV_AND_TESTING(f) && !CLIENT(f) && LAYERS.filter((l) => l.holds(f)).length !== 1,
    );
    expect(unplaced).toEqual([]);
  });

  it("are kept by every import: none runs from a lower layer to a higher one", () => {
    expect(IMPORTS.map(violation).filter((v) => v !== null)).toEqual([]);
  });

  it("are what the checks above read: a sample of imports that must be refused is refused", () => {
    // The checks themselves, on imports that would break each rule.
    const refused: Import[] = [
      { from: "lib/auth/next-auth.ts", specifier: "../http/transport", target: "lib/http/transport.ts" },
      { from: "lib/downloads/resolve-scope.ts", specifier: "../api/requests", target: "lib/api/requests.ts" },
      { from: "lib/db/client.ts", specifier: "../context", target: "lib/context.ts" },
      { from: "lib/errors.ts", specifier: "./db/client", target: "lib/db/client.ts" },
      { from: "lib/disclosures/search.ts", specifier: "next/navigation", target: null },
      {
        from: "app/(portal)/layout.tsx",
        specifier: "@/lib/dev/embedded-default",
        target: "lib/dev/embedded-default.ts",
      },
      { from: "lib/catalog/list-datasets.ts", specifier: "../testing/fixtures", target: "lib/testing/fixtures.ts" },
      { from: "lib/client/pull.ts", specifier: "../downloads/scope", target: "lib/downloads/scope.ts" },
      { from: "lib/marks/parquet-mark.ts", specifier: "../storage/config", target: "lib/storage/config.ts" },
      { from: "lib/http/route.ts", specifier: "../client/api", target: "lib/client/api.ts" },
      { from: "components/ui/button.tsx", specifier: "@/app/(portal)/actions", target: "app/(portal)/actions.ts" },
    ];
    for (const one of refused) expect(violation(one), `${one.from} → ${one.specifier}`).not.toBeNull();
  });
});

/** The folder of lib/ a file is in (`lib/notices`), or null for a base file or one outside lib/. */
const folderOf = (file: string) => /^(lib\/[^/]+)\//.exec(file)?.[1] ?? null;

/** The edges between lib/'s folders that product files make (tests, scripts and test support left out). */
function folderEdges(imports: Import[]): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const { from, target } of imports) {
    if (target === null || isTest(from) || SCRIPTS(from) || DEV_AND_TESTING(from)) continue;
    const [a, b] = [folderOf(from), folderOf(target)];
    if (a && b && a !== b) edges.set(a, (edges.get(a) ?? new Set()).add(b));
  }
  return edges;
}

/** Every loop among the folders, each as the path that closes it (`a → b → a`). */
function folderLoops(edges: Map<string, Set<string>>): string[] {
  const loops = new Set<string>();
  const walk = (path: string[]) => {
    for (const next of edges.get(path.at(-1)!) ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) {
        const loop = path.slice(at);
        // Named from its least folder, so that each loop is counted once.
        const start = loop.indexOf([...loop].sort()[0]!);
        loops.add([...loop.slice(start), ...loop.slice(0, start), loop[start]].join(" → "));
      } else walk([...path, next]);
    }
  };
  for (const folder of edges.keys()) walk([folder]);
  return [...loops].sort();
}

/**
 * Notices, in the order they may import each other: delivery is transport only (handed the
 * renderer), lib/notices owns what a notice is and says, a withdrawal writes notices.
 */
const NOTICE_FOLDERS = ["lib/notice-delivery", "lib/notices", "lib/withdrawals"];

describe("lib's folders", () => {
  const edges = folderEdges(IMPORTS);

  it("import each other without a loop, but for the ones known", () => {
    // Loops older than this check, among the catalog, admin, fingerprints and downloads (and through
    // lib/notices: an import announces its new version, an acknowledgement checks deleted paths
    // against the downloads' scope). None may be added; one broken is taken off this list.
    const known = [
      "lib/admin → lib/catalog → lib/admin",
      "lib/admin → lib/catalog → lib/fingerprints → lib/admin",
      "lib/admin → lib/catalog → lib/notices → lib/downloads → lib/fingerprints → lib/admin",
      "lib/admin → lib/fingerprints → lib/admin",
      "lib/admin → lib/fingerprints → lib/catalog → lib/admin",
      "lib/catalog → lib/fingerprints → lib/catalog",
      "lib/catalog → lib/notices → lib/downloads → lib/catalog",
      "lib/catalog → lib/notices → lib/downloads → lib/fingerprints → lib/catalog",
    ];
    expect(folderLoops(edges)).toEqual(known);
  });

  it("make no loop among the notices' folders", () => {
    const among = new Map(
      [...edges]
        .filter(([from]) => NOTICE_FOLDERS.includes(from))
        .map(([from, to]) => [from, new Set([...to].filter((t) => NOTICE_FOLDERS.includes(t)))]),
    );
    expect(folderLoops(among)).toEqual([]);
  });

  it("import notices only downward: delivery, then notices, then withdrawals", () => {
    const upward = [...edges].flatMap(([from, to]) =>
      [...to]
        .filter(
          (target) => NOTICE_FOLDERS.includes(from) && NOTICE_FOLDERS.indexOf(target) > NOTICE_FOLDERS.indexOf(from),
        )
        .map((target) => `${from} → ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it("are what the loop check reads: a loop through two files' imports is found", () => {
    const looped = folderEdges([
      {
        from: "lib/notices/records.ts",
        specifier: "../notice-delivery/enqueue",
        target: "lib/notice-delivery/enqueue.ts",
      },
      { from: "lib/notice-delivery/jobs.ts", specifier: "../notices/records", target: "lib/notices/records.ts" },
      {
        from: "lib/notices/records.test.ts",
        specifier: "../withdrawals/withdraw",
        target: "lib/withdrawals/withdraw.ts",
      },
    ]);
    expect(folderLoops(looped)).toEqual(["lib/notice-delivery → lib/notices → lib/notice-delivery"]);
  });
});

describe("das, the API's command-line client", () => {
  it("loads nothing of the AWS SDK nor of the server's stores (it speaks only HTTP)", () => {
    // Its commands load their work when they run: everything any of them may load.
    const { files, packages } = reachable("scripts/das.ts", { dynamic: true });
    expect(files.size).toBeGreaterThan(10);
    expect([...packages].filter((p) => p.startsWith("@aws-sdk/") || p.startsWith("@smithy/"))).toEqual([]);
    expect([...files].filter((f) => f.startsWith("lib/storage/") || f === "lib/db/client.ts")).toEqual([]);
  });
});

describe("the command lines' modules (scripts/cli)", () => {
  it("keep das's commands and das-admin's apart, and import neither program's entry file", () => {
    const crossing = IMPORTS.filter(
      ({ from, target }) =>
        target !== null &&
        ((under("scripts/cli/das")(from) &&
          (under("scripts/cli/admin")(target) || /^scripts\/cli\/admin-/.test(target))) ||
          (under("scripts/cli/admin")(from) && under("scripts/cli/das")(target)) ||
          (under("scripts/cli")(from) && (target === "scripts/das.ts" || target === "scripts/das-admin.ts"))),
    );
    expect(crossing).toEqual([]);
  });

  it("load no verb of das-admin to print its help: the verbs and the checks load when a command runs", () => {
    const { files } = reachable("scripts/das-admin.ts");
    expect(files.has("scripts/cli/admin/disclosures.ts")).toBe(true);
    expect([...files].filter((f) => f === "scripts/cli/admin-verbs.ts" || f === "scripts/cli/admin-checks.ts")).toEqual(
      [],
    );
    expect([...files].filter((f) => f.startsWith("lib/storage/") || f === "lib/db/client.ts")).toEqual([]);
  });
});
