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
  VersionList,
  NoticeList,
  Acknowledgement,
} from "../api/responses";
import type { DownloadBody } from "../api/requests";
import { backoffSeconds, retryAfterSeconds, sleep } from "./retry";

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
export type NoticeDocument = z.output<typeof NoticeList>["notices"][number];
export type AcknowledgementDocument = z.output<typeof Acknowledgement>;

const PAGE = 500;
const NETWORK_ATTEMPTS = 4;

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
 * The API over HTTP. Waits out 429 and 503 (for Retry-After seconds, or with exponential backoff),
 * a gateway's 502 and 504 for what is safe to repeat, and network failures, then gives up with the
 * API's error. Bodies are parsed with the same zod
 * schemas the server's OpenAPI document is generated from.
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
    return this.get(`/datasets/${enc(datasetId)}/versions/${enc(version)}/manifest`, {}, Manifest);
  }

  /** Every episode matching the filter, page by page; `onTotal` hears the filtered total once. */
  async *episodes(
    datasetId: string,
    version: string,
    filter: EpisodeFilter = {},
    onTotal?: (total: number) => void,
  ): AsyncGenerator<EpisodeRecord> {
    let cursor: string | undefined;
    let first = true;
    do {
      const page = await this.get(
        `/datasets/${enc(datasetId)}/versions/${enc(version)}/episodes`,
        { ...episodeQuery(filter), limit: String(PAGE), cursor },
        EpisodePage,
      );
      if (first) onTotal?.(page.total);
      first = false;
      yield* page.episodes;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  async annotations(episodeId: string, version?: string): Promise<AnnotationPageDocument> {
    let cursor: string | undefined;
    let all: AnnotationPageDocument | undefined;
    do {
      const page = await this.get(
        `/episodes/${enc(episodeId)}/annotations`,
        { version, limit: String(PAGE), cursor },
        AnnotationPage,
      );
      all = all ? { ...all, annotations: [...all.annotations, ...page.annotations] } : page;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
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
    let cursor: string | undefined;
    do {
      const page = await this.get(path, { ...query, limit: String(PAGE), cursor }, schema);
      all.push(...items(page));
      cursor = (page as { next_cursor: string | null }).next_cursor ?? undefined;
    } while (cursor);
    return all;
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
    extra: { body?: unknown; headers?: Record<string, string> } = {},
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
      const text = await response.text();
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
        await this.wait({
          status: response.status,
          seconds: retryAfterSeconds(response.headers.get("retry-after")) ?? backoffSeconds(attempt),
          attempt,
          what,
        });
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
 * twice is sent again, a read or a download with its Idempotency-Key (which returns the same one).
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
