import { InvalidArgumentError } from "commander";
import { showUnsafe } from "@/lib/characters";
import { parseTarget } from "@/lib/client/format";
import { UsageError } from "./terminal";

// Parsers of option and argument values, for commander's `.option(flags, description, parser)`.
// One that throws InvalidArgumentError says what the option takes, and the option's flag is put
// before it ("--concurrency takes a whole number from 1 to 64."); a UsageError is shown as written.

const whole = (text: string) => (/^[0-9]+$/.test(text.trim()) ? Number(text) : Number.NaN);

/** 1, 2, 3, ... */
export function positiveWholeNumber(text: string): number {
  const value = whole(text);
  if (!(value >= 1)) throw new InvalidArgumentError("takes a positive whole number.");
  return value;
}

/** A whole number from `min` to `max`. */
export function wholeNumberFrom(min: number, max: number): (text: string) => number {
  return (text) => {
    const value = whole(text);
    if (!(value >= min && value <= max)) throw new InvalidArgumentError(`takes a whole number from ${min} to ${max}.`);
    return value;
  };
}

/** a,b,c (blanks dropped, each once) */
export function commaList(text: string): string[] {
  const items = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.length) throw new InvalidArgumentError("takes a comma-separated list.");
  return [...new Set(items)];
}

/** 500k, 2M, 1.5G (bytes per second) */
export function byteRate(text: string): number {
  const match = /^([0-9]+(?:\.[0-9]+)?)([kmg]?)$/i.exec(text.trim());
  if (!match) throw new InvalidArgumentError(`takes bytes per second such as 500k or 2M, not '${text}'.`);
  const factor = { "": 1, k: 1e3, m: 1e6, g: 1e9 }[match[2]!.toLowerCase() as "" | "k" | "m" | "g"];
  const value = Number(match[1]) * factor;
  if (value < 1) throw new InvalidArgumentError("must be at least 1 byte per second.");
  return value;
}

/** Durations such as 90s, 15m, 12h, 30d, 2w, in milliseconds. */
export function duration(text: string): number {
  const match = /^([1-9][0-9]*)(s|m|h|d|w)$/.exec(text.trim());
  if (!match) throw new UsageError(`'${text}' is not a duration; use a number and one of s, m, h, d, w (e.g. 30d).`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[match[2] as "s" | "m" | "h" | "d" | "w"];
  return Number(match[1]) * unit * 1000;
}

export type Target = { datasetId: string; version: string };

/** The argument `<dataset>@<version>` of a command. */
export function target(text: string): Target {
  const parsed = parseTarget(text);
  if (!parsed) throw new UsageError(`Expected <dataset>@<version> (e.g. kitchen-pick-place@1.1.0), not '${text}'.`);
  return parsed;
}

/** An option's value `<dataset>@<version>`. */
export function datasetVersion(text: string): Target {
  const parsed = parseTarget(text);
  if (!parsed) throw new InvalidArgumentError(`takes <dataset_id>@<version>, not '${text}'.`);
  return parsed;
}

/** An option that may be given more than once: each value parsed, all of them kept. */
export const repeatable =
  <T>(parse: (text: string) => T) =>
  (text: string, previous: T[] | undefined): T[] => [...(previous ?? []), parse(text)];

/** Host names that are this machine: an address without a scheme is taken as plain http:// for them only. */
const LOOPBACK = /^(localhost|127(?:\.[0-9]{1,3}){3}|\[::1\])$/i;

/**
 * The service's address from --url or DAS_API_URL (`from` names which). One without a scheme is
 * taken as http:// when it is this machine (`localhost:3000`, what a newcomer types); any other
 * is refused, since sending a key over plain HTTP to another machine must be asked for.
 */
export function serviceUrl(text: string, from: string): string {
  const value = text.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
  const host = /^(\[[^\]]*\]|[^/:?#]*)/.exec(value)?.[1] ?? "";
  if (LOOPBACK.test(host)) return `http://${value}`;
  throw new UsageError(
    `${from} '${value}' has no scheme: write https://${value} (or http://${value} for a service without TLS).`,
  );
}

/**
 * An API key from --key or DAS_API_KEY: `das_` and 43 letters and digits (KEY_PATTERN in
 * lib/auth/api-keys.ts, which a test holds this to). A wrong one is refused here, saying which way
 * it is wrong, rather than sent; only its length and first characters are shown, since it may be a
 * real key with a typo.
 */
export const API_KEY_PATTERN = /^das_[0-9A-Za-z]{43}$/;

export function apiKey(text: string, from: string): string {
  // `$(cat key.txt)` and copies from a terminal bring line breaks and quotes along.
  const value = text.trim().replace(/^(["'])(.*)\1$/, "$2");
  if (API_KEY_PATTERN.test(value)) return value;
  const wrong = !value.startsWith("das_")
    ? `it starts '${showUnsafe(value.slice(0, 4))}'`
    : /[^0-9A-Za-z]/.test(value.slice(4))
      ? "it holds characters other than letters and digits after das_"
      : `it has ${value.length} characters`;
  throw new UsageError(
    `${from} is not an API key: a key is das_ and 43 letters and digits (47 characters), but ${wrong}. ` +
      "Keys are printed once by das-admin key create (and the demo's at every start of the service).",
  );
}
