import readline from "node:readline";
import { showUnsafe } from "@/lib/characters";
import { Writable } from "node:stream";

/** A password from a pipe (`echo pw | das-admin user create ...`) or typed at a hidden prompt. */
export async function readPassword(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) {
    let text = "";
    for await (const chunk of process.stdin) text += chunk;
    return text.replace(/\r?\n$/, "");
  }
  const muted = new Writable({ write: (_chunk, _enc, done) => done() });
  process.stderr.write(prompt);
  const rl = readline.createInterface({ input: process.stdin, output: muted, terminal: true });
  const answer = await new Promise<string>((resolve) => rl.question("", resolve));
  rl.close();
  process.stderr.write("\n");
  return answer;
}

/** Wrong invocation: the message and the usage text, exit code 2. */
export class UsageError extends Error {}

/**
 * A message on stderr. Messages carry text from outside (the API's error messages, paths, names
 * from a dataset), so every control character, separator and bidirectional control in them is
 * shown escaped (showUnsafe, the one escaping function of das and das-admin): an ESC would drive
 * the terminal. The message's own line breaks stay.
 */
export const say = (message: string) => process.stderr.write(`${message.split("\n").map(showUnsafe).join("\n")}\n`);

/** A command's chosen exit code, after it has said why itself. */
export class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/**
 * Ctrl-C (or SIGTERM) aborts the command's work once, saying what happens now (`rolling back`); a
 * second one quits at once with 130. Returns what stops listening.
 */
export function abortOnInterrupt(controller: AbortController, meanwhile: string): () => void {
  const interrupt = () => {
    if (controller.signal.aborted) process.exit(130);
    say(`\nInterrupted: ${meanwhile} (press Ctrl-C again to quit at once).`);
    controller.abort(new Error("interrupted"));
  };
  process.on("SIGINT", interrupt);
  process.on("SIGTERM", interrupt);
  return () => {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
  };
}
