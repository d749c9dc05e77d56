import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ERROR_STATUS } from "@/lib/errors";
import { openApiDocument } from "@/lib/api/openapi";
import ApiReferencePage from "./page";

// The reference page renders the generated document: whatever the document gains, the page shows.
describe("/docs/api", () => {
  const html = renderToStaticMarkup(createElement(ApiReferencePage));
  const text = html
    .replace(/<[^>]+>/g, " ")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");
  const doc = openApiDocument();

  it("shows every operation with its method, path and summary, linked from the navigation", () => {
    for (const [path, item] of Object.entries(doc.paths!)) {
      for (const [method, op] of Object.entries(item as Record<string, { operationId: string; summary: string }>)) {
        expect(html).toContain(`id="${op.operationId}"`);
        expect(html).toContain(`href="#${op.operationId}"`);
        expect(text).toContain(`${method.toUpperCase()} ${path}`);
        expect(text).toContain(op.summary);
      }
    }
  });

  it("shows every parameter, the request body's schema and examples, and every response status", () => {
    for (const name of ["limit", "cursor", "outcome", "environment", "version", "Idempotency-Key"])
      expect(html).toContain(`>${name}<`);
    expect(html).toContain('href="#schema-DownloadRequest"');
    expect(text).toContain('"filter": { "outcome": "failure" }');
    for (const status of ["200", "201", "400", "401", "403", "404", "406", "409", "422", "429", "500", "503"])
      expect(html).toContain(`>${status}</span>`);
  });

  it("has the error code table, every schema and every header", () => {
    for (const [code, status] of Object.entries(ERROR_STATUS))
      expect(html).toMatch(new RegExp(`id="error-${code}"[^]*?>${status}<[^]*?>${code}<`));
    for (const name of Object.keys(doc.components!.schemas!)) expect(html).toContain(`id="schema-${name}"`);
    for (const name of [
      "X-Request-Id",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
      "Retry-After",
      "WWW-Authenticate",
      "Idempotency-Key",
    ]) {
      expect(html).toContain(`id="header-${name}"`);
    }
  });

  it("starts with curl and the das command line, with a placeholder key", () => {
    expect(text).toContain("export DAS_API_KEY=das_YOUR_KEY");
    expect(text).toContain('curl -s "$DAS_API_URL/api/v1/datasets" -H "Authorization: Bearer $DAS_API_KEY"');
    expect(text).toContain("npx das pull kitchen-pick-place@1.1.0 --outcome failure");
    expect(text).toContain("npx das episodes kitchen-pick-place@1.1.0 --outcome failure --format csv");
  });
});
