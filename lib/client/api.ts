import { randomUUID } from "node:crypto";
import type { z } from "zod";
import {
  AnnotationPage,
  DatasetList,
  LicenceList,
  Download,
  EpisodePage,
  ErrorEnvelope,
  Manifest,
  Plan,
  VersionList,
  NoticeList,
  Acknowledgement,
} from "../api/responses";
import type { DownloadBody, PlanBody } from "../api/requests";
import { backoffSeconds, MAX_WAIT_SECONDS, retryAfterSeconds, sleep, waitTooLong } from "./retry";

/** An error answer of the API, shown as `code: message (request_id)`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
  ) {
    super(message);
    this.name = "ApiError";
  }

  override toString(): string {
    return `${this.code}: ${this.message}${this.requestId ? ` (${this.requestId})` : ""}`;
  }
}

/** The API could not be reached, or answered with something that is not the API. */
export class TransportError extends Error {
  override name = "TransportError";
}

export type Wait = { status: number | "network"; seconds: number; attempt: number; what: string };

export type ApiClientOptions = {
  /** `https://das.example.com` or `https://das.example.com/api/v1`. */
  baseUrl: string;
  key: string;
  fetch?: typeof fetch;
  /** Told before each wait on 429, 503 or a network error. */
  onWait?: (wait: Wait) => void;
  /** Attempts per request, including the first. */
  maxAttempts?: number;
  sleep?: (ms: number) => Promise<void>;
};

/** Which episodes a list or a pull covers: a download's `filter`, as the API's contract types it. */
export type EpisodeFilter = NonNullable<DownloadBody["filter"]>;
export type DatasetRecord = z.output<typeof DatasetList>["datasets"][number];
export type VersionRecord = z.output<typeof VersionList>["versions"][number];
export type LicenceRecord = z.output<typeof LicenceList>["licences"][number];
export type ManifestDocument = z.output<typeof Manifest>;
export type ManifestFile = ManifestDocument["files"][number];
export type EpisodeRecord = z.output<typeof EpisodePage>["episodes"][number];
export type AnnotationPageDocument = z.output<typeof AnnotationPage>;
export type DownloadDocument = z.output<typeof Download>;
export type PlanDocument = z.output<typeof Plan>;
export type PlannedFile = PlanDocument["files"][number];
export type PlanRequestBody = z.input<typeof PlanBody>;
export type NoticeDocument = z.output<typeof NoticeList>["notices"][number];
export type AcknowledgementDocument = z.output<typeof Acknowledgement>;

const PAGE = 500;
const NETWORK_ATTEMPTS = 4;
/**
 * Pages a list is followed for at most: a million items at 500 a page, beyond any list of the
 * service. A server that never stops answering a next cursor is stopped here, as is one that
 * answers a cursor it answered before, at once.
 */
export const MAX_PAGES = 2_000;
/** The most of one answer read into memory: a page is a few hundred KB, a document less. */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** A manifest's: a version of a million files is about 350 MB of it. */
export const MAX_MANIFEST_BYTES = 512 * 1024 * 1024;
/** A plan's: at most 200,000 files (the service's bound), a few hundred bytes each. */
export const MAX_PLAN_BYTES = 256 * 1024 * 1024;

/** The API's base, always ending in /api/v1. */
export function apiBase(url: string): string {
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new TransportError(`'${url}' is not a URL; set DAS_API_URL (or --url) to e.g. https://das.example.com.`);
  }
  const path = base.pathname.replace(/\/+$/, "");
  base.pathname = path.endsWith("/api/v1") ? path : `${path}/api/v1`;
  base.search = "";
  return base.toString().replace(/\/+$/, "");
}

/**
 * The API over HTTP. Waits out 429 and 503 (for Retry-After seconds, at most MAX_WAIT_SECONDS,
 * or with exponential backoff), a gateway's 502 and 504 for what is safe to repeat, and network
 * failures, then gives up with the API's error. Bodies are read up to a bound and parsed with the
 * same zod schemas the server's OpenAPI document is generated from; lists are followed for a
 * bounded number of pages. It trusts the service for what it answers, never for how long or how
 * much.
 */
export class ApiClient {
  readonly base: string;
  private readonly fetch: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly maxAttempts: number;

  constructor(private readonly options: ApiClientOptions) {
    this.base = apiBase(options.baseUrl);
    this.fetch = options.fetch ?? fetch;
    this.sleep = options.sleep ?? sleep;
    this.maxAttempts = options.maxAttempts ?? 8;
  }

  async listDatasets(): Promise<DatasetRecord[]> {
    return this.collect("/datasets", {}, DatasetList, (page) => page.datasets);
  }

  async listLicences(): Promise<LicenceRecord[]> {
    return this.collect("/licences", {}, LicenceList, (page) => page.licences);
  }

  async listVersions(datasetId: string): Promise<VersionRecord[]> {
    return this.collect(`/datasets/${enc(datasetId)}/versions`, {}, VersionList, (page) => page.versions);
  }

  async manifest(datasetId: string, version: string): Promise<ManifestDocument> {
    return this.send("GET", `/datasets/${enc(datasetId)}/versions/${enc(version)}/manifest`, {}, Manifest, {
      maxBytes: MAX_MANIFEST_BYTES,
    });
  }

  /**
   * What a pull of the version writes, decided by the service (POST .../plan): each file's place,
   * size, SHA-256 and source, and the downloads that deliver them. The files it hands out by URL
   * (of no episode) are recorded in the disclosure log as the plan is made.
   */
  async plan(datasetId: string, version: string, body: PlanRequestBody): Promise<PlanDocument> {
    // Its Idempotency-Key makes a retry (after a gateway's 502 or a lost connection) the same plan, not a second entry.
    return this.send("POST", `/datasets/${enc(datasetId)}/versions/${enc(version)}/plan`, {}, Plan, {
      body,
      headers: { "Idempotency-Key": randomUUID() },
      maxBytes: MAX_PLAN_BYTES,
    });
  }

  /** Every episode matching the filter, page by page; `onTotal` hears the filtered total once. */
  async *episodes(
    datasetId: string,
    version: string,
    filter: EpisodeFilter = {},
    onTotal?: (total: number) => void,
  ): AsyncGenerator<EpisodeRecord> {
    let first = true;
    const path = `/datasets/${enc(datasetId)}/versions/${enc(version)}/episodes`;
    for await (const page of this.pages(path, episodeQuery(filter), EpisodePage)) {
      if (first) onTotal?.(page.total);
      first = false;
      yield* page.episodes;
    }
  }

  async annotations(episodeId: string, version?: string): Promise<AnnotationPageDocument> {
    let all: AnnotationPageDocument | undefined;
    for await (const page of this.pages(`/episodes/${enc(episodeId)}/annotations`, { version }, AnnotationPage))
      all = all ? { ...all, annotations: [...all.annotations, ...page.annotations] } : page;
    return { ...all!, next_cursor: null };
  }

  /**
   * A new download: a new entry in the disclosure log. The Idempotency-Key makes the retries of
   * this one request (after a 503 or a lost connection) return the same download, not a second one.
   */
  async createDownload(body: DownloadBody): Promise<DownloadDocument> {
    return this.send("POST", "/downloads", {}, Download, { body, headers: { "Idempotency-Key": randomUUID() } });
  }

  /** Every notice to the key's organisation, newest first. */
  async listNotices(): Promise<NoticeDocument[]> {
    return this.collect("/notices", {}, NoticeList, (page) => page.notices);
  }

  async acknowledgeNotice(
    noticeId: string,
    body: { statement: string; deleted_paths: string[] },
  ): Promise<AcknowledgementDocument> {
    return this.send("POST", `/notices/${enc(noticeId)}/acknowledgements`, {}, Acknowledgement, { body });
  }

  private async collect<S extends z.ZodType, T>(
    path: string,
    query: Record<string, string | undefined>,
    schema: S,
    items: (page: z.output<S>) => T[],
  ): Promise<T[]> {
    const all: T[] = [];
    for await (const page of this.pages(path, query, schema)) all.push(...items(page));
    return all;
  }

  /**
   * A list's pages, following `next_cursor`: stopped with an error at a cursor answered before
   * (the list would go round for ever) and after MAX_PAGES pages.
   */
  private async *pages<S extends z.ZodType>(
    path: string,
    query: Record<string, string | undefined>,
    schema: S,
  ): AsyncGenerator<z.output<S>> {
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let pages = 1; ; pages++) {
      const page = await this.get(path, { ...query, limit: String(PAGE), cursor }, schema);
      yield page;
      const next = (page as { next_cursor?: string | null }).next_cursor ?? undefined;
      if (next === undefined) return;
      if (seen.has(next))
        throw new TransportError(
          `${this.base}${path} answered a next cursor it had answered before: stopped after ${pages} pages, since the list would never end.`,
        );
      if (pages >= MAX_PAGES)
        throw new TransportError(
          `${this.base}${path} still had a next page after ${MAX_PAGES} pages of ${PAGE}: stopped (no list of the service is that long).`,
        );
      seen.add(next);
      cursor = next;
    }
  }

  private get<S extends z.ZodType>(
    path: string,
    query: Record<string, string | undefined>,
    schema: S,
  ): Promise<z.output<S>> {
    return this.send("GET", path, query, schema);
  }

  private async send<S extends z.ZodType>(
    method: string,
    path: string,
    query: Record<string, string | undefined>,
    schema: S,
    extra: { body?: unknown; headers?: Record<string, string>; maxBytes?: number } = {},
  ): Promise<z.output<S>> {
    const url = new URL(`${this.base}${path}`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, value);
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.key}`,
      Accept: "application/json",
      ...extra.headers,
    };
    if (extra.body !== undefined) headers["Content-Type"] = "application/json";
    const what = `${method} ${url.pathname}`;
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetch(url, {
          method,
          headers,
          body: extra.body === undefined ? undefined : JSON.stringify(extra.body),
        });
      } catch (error) {
        // A service that cannot be reached at all is reported within seconds, not minutes.
        if (attempt >= Math.min(this.maxAttempts, NETWORK_ATTEMPTS))
          throw new TransportError(`Cannot reach ${this.base}: ${describe(error)}`);
        await this.wait({ status: "network", seconds: backoffSeconds(attempt), attempt, what });
        continue;
      }
      const text = await boundedText(response, extra.maxBytes ?? MAX_ANSWER_BYTES, what);
      const json = parseJson(text);
      if (response.ok) {
        const parsed = schema.safeParse(json);
        if (!parsed.success)
          throw new TransportError(
            `${what} answered with an unexpected body (is ${this.base} a Dataset Access Service?): ${parsed.error.issues[0]?.message}`,
          );
        return parsed.data;
      }
      const error = toApiError(response, json, text);
      if (retryable(response.status, method, headers) && attempt < this.maxAttempts) {
        const asked = retryAfterSeconds(response.headers.get("retry-after"));
        if (asked !== undefined && asked > MAX_WAIT_SECONDS)
          throw new ApiError(error.status, error.code, `${error.message} (${waitTooLong(asked)}.)`, error.requestId);
        await this.wait({ status: response.status, seconds: asked ?? backoffSeconds(attempt), attempt, what });
        continue;
      }
      throw error;
    }
  }

  private async wait(wait: Wait): Promise<void> {
    this.options.onWait?.(wait);
    await this.sleep(wait.seconds * 1000);
  }
}

/**
 * 429 and 503 say "later". 502 and 504 are a gateway's (a load balancer that lost the instance
 * serving the request): it may or may not have been served, so only a request that is safe to send
 * twice is sent again, a read, or a download or plan with its Idempotency-Key (which returns the same one).
 */
function retryable(status: number, method: string, headers: Record<string, string>): boolean {
  if (status === 429 || status === 503) return true;
  return (status === 502 || status === 504) && (method === "GET" || headers["Idempotency-Key"] !== undefined);
}

function toApiError(response: Response, json: unknown, text: string): ApiError {
  const envelope = ErrorEnvelope.safeParse(json);
  if (envelope.success)
    return new ApiError(
      response.status,
      envelope.data.error.code,
      envelope.data.error.message,
      envelope.data.error.request_id,
    );
  // Not the API's envelope: a proxy or load balancer in between said no.
  return new ApiError(
    response.status,
    `http_${response.status}`,
    text.trim().slice(0, 200) || response.statusText,
    response.headers.get("x-request-id"),
  );
}

/**
 * An answer's body as text, read up to `limit` bytes: past it (or a Content-Length over it) the
 * connection is dropped and the answer refused, so a server cannot fill the client's memory.
 */
async function boundedText(response: Response, limit: number, what: string): Promise<string> {
  const refuse = () =>
    new TransportError(
      `${what} answered with more than ${limit} bytes: stopped reading it (no answer of the service is that large).`,
    );
  if (Number(response.headers.get("content-length") ?? 0) > limit) {
    await response.body?.cancel();
    throw refuse();
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw refuse();
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const enc = encodeURIComponent;

/**
 * The filter as the episode list's query parameters: `has_recovery` as true or false, the durations
 * as plain decimals (String(5e-7) is "5e-7", which the API's pattern refuses; 9 places are as many
 * as it takes).
 */
export function episodeQuery(filter: EpisodeFilter): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(filter).map(([name, value]) => [
      name,
      value === undefined ? undefined : typeof value === "number" ? plainDecimal(value) : String(value),
    ]),
  );
}

const plainDecimal = (value: number) => value.toFixed(9).replace(/\.?0+$/, "");

export function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ""}`;
  return error instanceof Error ? error.message : String(error);
}
