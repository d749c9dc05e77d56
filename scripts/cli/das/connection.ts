// What every das command stands on: the API client for --url and --key, loaded when the command
// runs, and how its output and the client's waits are written.
import type { Command } from "commander";
import type { ApiClient, Wait } from "@/lib/client/api";
import { say, UsageError } from "../terminal";
import { apiKey, serviceUrl } from "../values";

export const out = (text: string) => process.stdout.write(text);
// What a command needs is loaded when it runs: `das --help` and a usage error start in milliseconds.
export const client = () => import("@/lib/client/api");
export const pulling = () => import("@/lib/client/pull");
export const syncing = () => import("@/lib/client/sync");
export const TARGET = "<dataset@version>";

/** A command's work, given an API client for --url and --key (or DAS_API_URL and DAS_API_KEY). */
export function withApi<A extends unknown[]>(work: (api: ApiClient, ...args: A) => Promise<void>) {
  return async function (this: Command, ...args: A) {
    const { url = process.env.DAS_API_URL, key = process.env.DAS_API_KEY } = this.opts<{
      url?: string;
      key?: string;
    }>();
    if (!url)
      throw new UsageError("Set DAS_API_URL (or --url) to the service's address, e.g. https://das.example.com.");
    if (!key) throw new UsageError("Set DAS_API_KEY (or --key) to your API key (das_...).");
    const given = this.opts<{ url?: string; key?: string }>();
    const baseUrl = serviceUrl(url, given.url ? "--url" : "DAS_API_URL");
    const { ApiClient } = await client();
    await work(new ApiClient({ baseUrl, key: apiKey(key, given.key ? "--key" : "DAS_API_KEY"), onWait }), ...args);
  };
}

/** Seconds in a table, to the hundredth: 11.433333333333334 is 11.43 (--format csv and jsonl keep every digit). */
export const seconds = (value: number) => Math.round(value * 100) / 100;

/** Writes to stdout, waiting when the reader is slower than the API. */
export function write(text: string): Promise<void> | void {
  if (!process.stdout.write(text)) return new Promise((resolve) => process.stdout.once("drain", () => resolve()));
}

function onWait(wait: Wait): void {
  const why =
    wait.status === "network"
      ? "the API is unreachable"
      : wait.status === 429
        ? "rate limited (429)"
        : "the service is unavailable (503)";
  say(`${wait.what}: ${why}; waiting ${wait.seconds} s (attempt ${wait.attempt}).`);
}

/** What went wrong, as das says it: the API's error as it came, a transfer's, a pull's or a sync's message. */
export async function describeError(error: unknown): Promise<string> {
  const [{ ApiError, TransportError }, { PullError }, { SyncError }] = await Promise.all([
    client(),
    pulling(),
    syncing(),
  ]);
  if (error instanceof ApiError) return error.toString();
  if (error instanceof TransportError || error instanceof PullError || error instanceof SyncError) return error.message;
  return `das: ${(error as Error)?.stack ?? String(error)}`;
}
