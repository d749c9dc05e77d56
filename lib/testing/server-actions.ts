import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PROJECT_ROOT } from "../dev/embedded-default";

// React's own encoder of server action arguments (the one the browser runs), from Next's copy of React.
const { encodeReply } = createRequire(import.meta.url)("next/dist/compiled/react-server-dom-webpack/client.node") as {
  encodeReply: (args: unknown[]) => Promise<string | FormData>;
};

// Server actions called the way the browser calls them: a POST carrying the action's id from the
// production build's server-reference manifest and its arguments encoded by React. Nothing is faked.

type ManifestEntry = { exportedName: string; filename: string; workers: Record<string, unknown> };

/** The id and a page of each server action, from the build's server-reference manifest. */
export function actionIds(): Map<string, { id: string; page: string }> {
  const manifest = JSON.parse(
    readFileSync(path.join(PROJECT_ROOT, ".next/server/server-reference-manifest.json"), "utf8"),
  ) as { node: Record<string, ManifestEntry> };
  const ids = new Map<string, { id: string; page: string }>();
  for (const [id, entry] of Object.entries(manifest.node)) {
    const worker = Object.keys(entry.workers)[0]!;
    const page =
      worker
        .replace(/^app/, "")
        .replace(/\/\([^)]+\)/g, "")
        .replace(/\/page$/, "") || "/";
    ids.set(entry.exportedName, { id, page });
  }
  return ids;
}

/** Posts a server action with these arguments (FormData too) from `page` (default: a page that uses it); the raw answer. */
export async function postAction(
  baseUrl: string,
  name: string,
  args: unknown[],
  options: { cookie?: string; page?: string } = {},
): Promise<Response> {
  const action = actionIds().get(name);
  if (!action) throw new Error(`no server action ${name} in the build`);
  const body = await encodeReply(args);
  return fetch(`${baseUrl}${options.page ?? action.page}`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "Next-Action": action.id,
      Accept: "text/x-component",
      ...(typeof body === "string" ? { "Content-Type": "text/plain;charset=UTF-8" } : {}),
      ...(options.cookie ? { cookie: options.cookie } : {}),
    },
    body,
  });
}

export type ActionAnswer =
  | { ok: boolean; data?: any; error?: { code: string; message: string } }
  | { redirectedTo: string };

/** Calls a server action with one input; returns its result as the action returned it (the last JSON row of the RSC answer), or where it was redirected. */
export async function callAction(
  baseUrl: string,
  name: string,
  input: unknown,
  cookie?: string,
  page?: string,
): Promise<ActionAnswer> {
  const res = await postAction(baseUrl, name, [input], { cookie, page });
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
