import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { PROJECT_ROOT } from "../dev/embedded-default";

export type CliRun = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

/** Starts one of the package's command-line tools (`scripts/bin/<name>.mjs`) as a user would run it. */
export function spawnCli(
  name: "das" | "das-admin",
  args: string[],
  options: { env?: NodeJS.ProcessEnv; stdin?: string } = {},
): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, "scripts/bin", `${name}.mjs`), ...args], {
    cwd: PROJECT_ROOT,
    env: options.env ?? process.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<CliRun>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  child.stdin!.end(options.stdin ?? "");
  return { child, done };
}

export const runCli = (
  name: "das" | "das-admin",
  args: string[],
  options: { env?: NodeJS.ProcessEnv; stdin?: string } = {},
) => spawnCli(name, args, options).done;
