import type { Problem } from "../json-document";

/**
 * What a pass over a dataset finds wrong: a `Problem` (file:line, a record or file left out) is
 * the same shape the importer reports its own formats' problems in, so its adaptor passes them on
 * as they are. For parquet files a problem's `line` is the row number (from 1).
 */
export type { Problem };

/**
 * Something the reader left out or took as it is, which the import does not refuse for but the
 * operator should know about: how many times, and the first few places (file or file:line).
 */
export type Notice = { message: string; count: number; examples: string[] };

/** Where each part of the reader sends what it finds, and the signal that stops it. */
export interface Findings {
  report(problem: Problem): void;
  /** Counts `place` under `message` once, however many passes come by it. */
  notice(message: string, place: string): void;
  readonly signal?: AbortSignal;
}

/** How many places a notice remembers, to count each once over several passes. */
const NOTICE_PLACES = 100_000;
/** How many places a notice names. */
const NOTICE_EXAMPLES = 5;

/** Notices, each place counted once however many passes find it. */
export class Notices {
  private readonly noticed = new Map<string, { count: number; examples: string[]; seen: Set<string> }>();

  list(): Notice[] {
    return [...this.noticed].map(([message, { count, examples }]) => ({ message, count, examples }));
  }

  add(message: string, place: string): void {
    let entry = this.noticed.get(message);
    if (!entry) this.noticed.set(message, (entry = { count: 0, examples: [], seen: new Set() }));
    if (entry.seen.has(place)) return;
    if (entry.seen.size < NOTICE_PLACES) entry.seen.add(place);
    entry.count++;
    if (entry.examples.length < NOTICE_EXAMPLES) entry.examples.push(place);
  }
}
