#!/usr/bin/env node
// Runs after `npm install` (the package's postinstall): applies this project's fixes to installed
// dependencies, each an exact text replacement in a pinned version. A replacement whose text is
// not found fails the install loudly, so an upgrade cannot silently drop a fix.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * postgres.js 3.4.9 under lost connections (pg_terminate_backend, failovers), each seen in this
 * project's fault test (lib/db/connection-faults.test.ts) and reported upstream (#1154, #1208):
 * - A transaction's ROLLBACK after its connection died was written to a connection without a
 *   socket: an uncaught TypeError, and a write timer left set, so the connection's next startup
 *   message was never flushed and every reconnect hung until connect_timeout (30 s stalls, a pool
 *   sick for minutes). Now a query on a dead connection fails at once with CONNECTION_CLOSED, and
 *   closing forgets buffered bytes.
 * - What was in flight when a socket closed was not failed if an 'error' event came first, and the
 *   failed query and its error stayed set: the connection's next socket then handed a stale error
 *   to the next query, or a later query's result to a stale one (a request hung). Now closing fails
 *   everything in flight and keeps nothing of it.
 * - The array-type query run on each new connection rejected with no handler when the connection
 *   died under it (an unhandled rejection); the query waiting for the connection learns of it anyway.
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
  {
    before: `    socket.removeAllListeners()
    socket = null

    if (initial)
      return reconnect()
`,
    after: `    socket.removeAllListeners()
    socket = null

    // das: fail what was in flight on the lost socket however it closed, and keep none of it
    const lost = errorResponse || Errors.connection('CONNECTION_CLOSED', options, socket)
    stream && (stream.destroy(lost), stream = null)
    query && queryError(query, lost)
    while (sent.length)
      queryError(sent.shift(), lost)
    query = results = errorResponse = null
    result = new Result()
    rows = 0

    if (initial)
      return reconnect()
`,
  },
  {
    before: `        return fetchArrayTypes()
`,
    after: `        return fetchArrayTypes().catch(noop) // das: the query waiting for this connection learns of a failure
`,
  },
];

const PATCHES = [
  {
    package: "postgres",
    version: "3.4.9",
    files: ["src/connection.js", "cjs/src/connection.js"],
    replacements: postgresConnection,
  },
];

for (const patch of PATCHES) {
  const dir = path.join(root, "node_modules", patch.package);
  const { version } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  if (version !== patch.version) {
    throw new Error(
      `${patch.package} ${version} is installed, but scripts/patch-dependencies.mjs patches ${patch.version}: review the patch for the new version.`,
    );
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
        throw new Error(
          `${patch.package}/${file}: expected ${count} occurrence(s) of the text to patch, found ${found} (${applied} patched).`,
        );
      }
      text = text.split(before).join(after);
      changed = true;
    }
    if (changed) writeFileSync(target, text);
  }
}
