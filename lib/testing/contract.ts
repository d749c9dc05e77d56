import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { openApiDocument, type OpenApiDocument } from "../api/openapi";
import { API_OPERATIONS } from "../api/operations";
import type { ObservedCall } from "./http";

/**
 * Checks HTTP responses against the OpenAPI document: the response's status must be documented
 * for its operation, its body must validate against that status's schema (with a JSON Schema
 * 2020-12 validator, the dialect of OpenAPI 3.1), and the documented headers must be present and
 * well-formed. Used for every `call()` of the suites (see worker-setup.ts) and by the contract tests.
 */

const DOC_ID = "https://das.local/openapi.json";
const METHODS = ["get", "head", "post", "put", "patch", "delete"] as const;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, any>;
export type Checked = { operation: string | null; status: number; problems: string[] };

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

export class Contract {
  readonly document: OpenApiDocument;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: { path: string; pattern: RegExp }[];

  constructor(document: OpenApiDocument = openApiDocument()) {
    this.document = document;
    // strict: false, because the document is not itself a schema (openapi, paths, examples...).
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema(structuredClone(document) as object, DOC_ID);
    // A path parameter is one segment, except an operation's `rest` (a file's path in a repository).
    const rest = new Map(API_OPERATIONS.filter((o) => o.rest).map((o) => [o.path as string, o.rest!]));
    this.templates = Object.keys(document.paths ?? {}).map((path) => ({
      path,
      pattern: new RegExp(
        `^${path
          .replace(/[.*+?^$()|[\]\\]/g, "\\$&")
          .replace(/\{([^}]+)\}/g, (_, name: string) => (rest.get(path) === name ? ".+" : "[^/]+"))}$`,
      ),
    }));
  }

  /** The documented path a request path belongs to (`/api/v1/datasets/{id}/versions`), if any. */
  pathOf(pathname: string): string | undefined {
    return this.templates.find((t) => t.pattern.test(pathname))?.path;
  }

  /** Validates `value` against the schema at a JSON pointer into the document; returns readable errors. */
  validate(at: string, value: unknown): string[] {
    let validate = this.validators.get(at);
    if (!validate) {
      validate = this.ajv.getSchema(`${DOC_ID}#${at}`);
      if (!validate) throw new Error(`no schema at ${at}`);
      this.validators.set(at, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath || "(body)"} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`,
    );
  }

  private resolve<T = Json>(node: Json): T {
    let current = node;
    while (current && typeof current.$ref === "string") {
      current = current.$ref
        .slice(2)
        .split("/")
        .map((p: string) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
        .reduce((obj: Json, key: string) => obj?.[key], this.document as Json);
    }
    return current as T;
  }

  /**
   * Checks one response to `method pathname`. For a method the path does not document, the
   * answer must be the documented 405; for a path under /api/v1 that the document does not know,
   * only the error envelope is checked (tests also call handlers with placeholder URLs).
   */
  check(
    method: string,
    pathname: string,
    res: { status: number; headers: Headers; text: string; json: unknown },
  ): Checked {
    const problems: string[] = [];
    const path = this.pathOf(pathname);
    const m = method.toLowerCase() as (typeof METHODS)[number];
    const item = path ? (this.document.paths![path] as Json) : undefined;
    let responsePointer: string | undefined;
    let operation: string | null = null;
    if (item?.[m]) {
      operation = `${method.toUpperCase()} ${path}`;
      if (item[m].responses[String(res.status)])
        responsePointer = pointer("", "paths", path!, m, "responses", String(res.status));
      else problems.push(`status ${res.status} is not documented for ${operation}`);
    } else if (res.status === 405) {
      responsePointer = pointer("", "components", "responses", "MethodNotAllowed");
    } else if (res.status === 404 && !path) {
      responsePointer = pointer("", "components", "responses", "NotFound");
    } else if (path) {
      problems.push(`${method} ${path} is not documented, yet it answered ${res.status}`);
    } else if (res.status >= 400) {
      problems.push(
        ...this.validate(pointer("", "components", "schemas", "Error"), res.json).map((e) => `error envelope: ${e}`),
      );
    }
    if (responsePointer) problems.push(...this.checkResponse(responsePointer, res));
    return { operation, status: res.status, problems };
  }

  private checkResponse(at: string, res: { headers: Headers; text: string; json: unknown }): string[] {
    const problems: string[] = [];
    const response = this.resolve(
      at
        .slice(1)
        .split("/")
        .reduce((obj: Json, key) => obj[key.replace(/~1/g, "/").replace(/~0/g, "~")], this.document as Json),
    );
    const content = response.content?.["application/json"];
    if (content) {
      if (!/^application\/json\b/.test(res.headers.get("content-type") ?? ""))
        problems.push(`content-type is ${res.headers.get("content-type")}, not application/json`);
      if (res.json === undefined) problems.push(`body is not JSON: ${res.text.slice(0, 200)}`);
      else problems.push(...this.validate(`${at}/content/application~1json/schema`, res.json));
    }
    for (const [name, ref] of Object.entries((response.headers ?? {}) as Json)) {
      const header = this.resolve<{ required?: boolean; schema: Json }>(ref);
      const value = res.headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`header ${name} is missing`);
        continue;
      }
      const headerPointer = typeof ref.$ref === "string" ? ref.$ref.slice(1) : `${at}/headers/${pointer(name)}`;
      problems.push(...this.validate(`${headerPointer}/schema`, value).map((e) => `header ${name}: ${e}`));
    }
    return problems;
  }
}

let shared: Contract | undefined;
export const contract = () => (shared ??= new Contract());

/** For observeCalls(): throws when a call's response (of /api/v1 or the Hub protocol's /hub) does not match the document. */
export function assertMatchesContract({ method, url, result }: ObservedCall): void {
  if (!url.pathname.startsWith("/api/v1/") && !url.pathname.startsWith("/hub/")) return;
  const { problems } = contract().check(method, url.pathname, result);
  if (problems.length) {
    throw new Error(
      `${method} ${url.pathname} answered ${result.status}, which does not match the OpenAPI document (lib/api/openapi.ts):\n  ${problems.join("\n  ")}\nbody: ${result.text.slice(0, 500)}`,
    );
  }
}
