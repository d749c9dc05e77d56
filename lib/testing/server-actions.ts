import { readFileSync } from "node:fs";
import path from "node:path";
import { PROJECT_ROOT } from "../embedded-default";

type ManifestEntry = { exportedName: string; filename: string; workers: Record<string, unknown> };

/** The id and a page of each server action, from the build's server-reference manifest. */
function actionIds(): Map<string, { id: string; page: string }> {
  const manifest = JSON.parse(readFileSync(path.join(PROJECT_ROOT, ".next/server/server-reference-manifest.json"), "utf8")) as { node: Record<string, ManifestEntry> };
  const ids = new Map<string, { id: string; page: string }>();
  for (const [id, entry] of Object.entries(manifest.node)) {
    const worker = Object.keys(entry.workers)[0]!;
    const page = worker.replace(/^app/, "").replace(/\/\([^)]+\)/g, "").replace(/\/page$/, "") || "/";
    ids.set(entry.exportedName, { id, page });
  }
  return ids;
}

export type ActionAnswer = { ok: boolean; data?: any; error?: { code: string; message: string } } | { redirectedTo: string };

/**
 * Calls a server action of the `next start` at `baseUrl` the way the browser calls it: a POST
 * carrying the action's id from the build's manifest. Returns its result as the action returned
 * it (the last JSON row of the RSC answer), or where it was redirected.
 */
export async function callServerAction(baseUrl: string, name: string, input: unknown, cookie?: string, page?: string): Promise<ActionAnswer> {
  const action = actionIds().get(name);
  if (!action) throw new Error(`no server action ${name} in the build`);
  const res = await fetch(`${baseUrl}${page ?? action.page}`, {
    method: "POST",
    redirect: "manual",
    headers: { "Next-Action": action.id, "Content-Type": "text/plain;charset=UTF-8", Accept: "text/x-component", ...(cookie ? { cookie } : {}) },
    body: JSON.stringify([input]),
  });
  if (res.status === 307) return { redirectedTo: new URL(res.headers.get("location")!, baseUrl).pathname };
  const text = await res.text();
  const result = text
    .split("\n")
    .map((line) => line.replace(/^[0-9a-f]+:/, ""))
    .filter((line) => line.startsWith('{"ok":'))
    .at(-1);
  if (!result) throw new Error(`no action result in the answer (${res.status}): ${text.slice(0, 300)}`);
  return JSON.parse(result);
}
