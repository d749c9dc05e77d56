#!/usr/bin/env node
// Runs after `npm install` (the package's postinstall): applies this project's fixes to installed
// dependencies, each an exact text replacement in a pinned version. A replacement whose text is
// not found fails the install loudly, so an upgrade cannot silently drop a fix.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * postgres.js 3.4.9 (upstream issues #1154, #1208): a transaction's ROLLBACK after its connection
 * died is written to a connection whose socket is already gone. The deferred write then throws an
 * uncaught TypeError, and the write timer is left set, so the connection's next StartupMessage is
 * never flushed: each reconnect hangs until connect_timeout. Under repeated connection loss that
 * kept requests waiting 30 s and the pool sick for minutes. The fix: a query on a connection
 * without a socket fails at once with CONNECTION_CLOSED, and closing drops buffered bytes.
 */
const postgresConnection = [
  {
    before: `  function execute(q) {
    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))
`,
    after: `  function execute(q) {
    if (terminated)
      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))

    if (!socket) // das: the connection died; nothing may be written until it reconnects
      return queryError(q, Errors.connection('CONNECTION_CLOSED', options)), true
`,
  },
  {
    before: `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)
`,
    after: `  function nextWrite(fn) {
    if (!socket) { // das: never write to a closed connection; fail what waited for the write
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options))
      return false
    }
    const x = socket.write(chunk, fn)
`,
  },
  {
    // In terminate() and closed(): a cleared timer must also be forgotten, or no later write is flushed.
    before: `    clearImmediate(nextWriteTimer)
`,
    after: `    clearImmediate(nextWriteTimer), nextWriteTimer = chunk = null // das: forget the cleared write
`,
    count: 2,
  },
];

const PATCHES = [
  { package: "postgres", version: "3.4.9", files: ["src/connection.js", "cjs/src/connection.js"], replacements: postgresConnection },
];

for (const patch of PATCHES) {
  const dir = path.join(root, "node_modules", patch.package);
  const { version } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  if (version !== patch.version) {
    throw new Error(`${patch.package} ${version} is installed, but scripts/patch-dependencies.mjs patches ${patch.version}: review the patch for the new version.`);
  }
  for (const file of patch.files) {
    const target = path.join(dir, file);
    let text = readFileSync(target, "utf8");
    let changed = false;
    for (const { before, after, count = 1 } of patch.replacements) {
      const applied = text.split(after).length - 1;
      if (applied === count) continue;
      const found = text.split(before).length - 1;
      if (applied !== 0 || found !== count) {
        throw new Error(`${patch.package}/${file}: expected ${count} occurrence(s) of the text to patch, found ${found} (${applied} patched).`);
      }
      text = text.split(before).join(after);
      changed = true;
    }
    if (changed) writeFileSync(target, text);
  }
}
