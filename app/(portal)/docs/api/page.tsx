import type { Metadata } from "next";
import { openApiDocument } from "@/lib/api/openapi";
import { Headers, Schemas } from "@/components/api-reference/components";
import { ErrorCodes, type ErrorCodeRow } from "@/components/api-reference/error-codes";
import { GettingStarted } from "@/components/api-reference/getting-started";
import { Markdown } from "@/components/api-reference/markdown";
import { MethodBadge } from "@/components/api-reference/method-badge";
import { Operation, operationAnchor, type OperationObject } from "@/components/api-reference/operation";
import type { JsonSchema } from "@/components/api-reference/schema";

export const metadata: Metadata = { title: "API reference" };

/** /docs/api – the OpenAPI document, rendered: getting started, endpoints, error codes, schemas, headers. */
export default function ApiReferencePage() {
  const doc = openApiDocument() as unknown as {
    info: { title: string; version: string; description: string };
    tags?: { name: string; description?: string }[];
    paths: Record<string, Record<string, OperationObject & { tags?: string[] }>>;
    components: { schemas: Record<string, JsonSchema>; headers: Record<string, object> };
    "x-error-codes": ErrorCodeRow[];
  };
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );
  const requestHeaders = operations.flatMap(({ path, method, op }) =>
    (op.parameters ?? [])
      .filter((p) => p.in === "header")
      .map((p) => ({ name: p.name, description: p.description, where: `${method.toUpperCase()} ${path}` })),
  );
  const sections = (doc.tags ?? []).map((tag) => ({
    tag,
    operations: operations.filter((o) => o.op.tags?.includes(tag.name)),
  }));

  return (
    <div className="mx-auto max-w-6xl px-4 py-10 sm:px-6 lg:grid lg:grid-cols-[14rem_1fr] lg:gap-10">
      <nav aria-label="API reference" className="hidden lg:block">
        <div className="sticky top-6 space-y-4 text-sm">
          <a href="#getting-started" className="block font-medium text-slate-700 hover:text-brand-700">
            Getting started
          </a>
          {sections.map(({ tag, operations: ops }) => (
            <div key={tag.name}>
              <p className="text-xs font-semibold uppercase tracking-wide text-slate-500">{tag.name}</p>
              <ul className="mt-1 space-y-1">
                {ops.map(({ path, method, op }) => (
                  <li key={`${method} ${path}`}>
                    <a
                      href={`#${operationAnchor(op, method, path)}`}
                      className="flex items-center gap-2 text-slate-700 hover:text-brand-700"
                    >
                      <MethodBadge method={method} />
                      <span className="truncate">{op.summary}</span>
                    </a>
                  </li>
                ))}
              </ul>
            </div>
          ))}
          <a href="#errors" className="block font-medium text-slate-700 hover:text-brand-700">
            Error codes
          </a>
          <a href="#schemas" className="block font-medium text-slate-700 hover:text-brand-700">
            Schemas
          </a>
          <a href="#headers" className="block font-medium text-slate-700 hover:text-brand-700">
            Headers
          </a>
        </div>
      </nav>

      <main className="min-w-0 space-y-12">
        <header className="space-y-3">
          <p className="text-sm font-medium text-brand-700">API reference · v{doc.info.version}</p>
          <h1 className="text-3xl font-semibold tracking-tight text-slate-900">{doc.info.title}</h1>
          <Markdown text={doc.info.description} />
          <p className="text-sm text-slate-600">
            The machine-readable document:{" "}
            <a href="/api/v1/openapi.json" className="font-mono text-brand-700 underline underline-offset-2">
              /api/v1/openapi.json
            </a>{" "}
            (OpenAPI 3.1, no key needed).
          </p>
        </header>

        <GettingStarted />

        <section id="endpoints" className="space-y-10">
          {sections.map(({ tag, operations: ops }) => (
            <div key={tag.name} className="space-y-4">
              <div>
                <h2 className="text-xl font-semibold text-slate-900">{tag.name}</h2>
                {tag.description && <p className="mt-1 text-sm text-slate-600">{tag.description}</p>}
              </div>
              {ops.map(({ path, method, op }) => (
                <Operation key={`${method} ${path}`} method={method} path={path} op={op} />
              ))}
            </div>
          ))}
        </section>

        <ErrorCodes rows={doc["x-error-codes"]} />
        <Schemas schemas={doc.components.schemas} />
        <Headers headers={doc.components.headers as never} requestHeaders={requestHeaders} />
      </main>
    </div>
  );
}
