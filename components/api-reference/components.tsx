import { CodeBlock, json } from "./code-block";
import { Inline } from "./markdown";
import { constraints, PropertiesTable, schemaAnchor, SchemaType, type JsonSchema } from "./schema";

/** The named schemas: fields, types, limits and examples. */
export function Schemas({ schemas }: { schemas: Record<string, JsonSchema> }) {
  return (
    <section id="schemas" className="scroll-mt-6 space-y-4">
      <h2 className="text-xl font-semibold text-slate-900">Schemas</h2>
      {Object.entries(schemas).map(([name, schema]) => (
        <article
          key={name}
          id={schemaAnchor(name)}
          className="scroll-mt-6 space-y-2 rounded-xl border border-slate-200 bg-white p-5 shadow-sm"
        >
          <h3 className="font-mono text-sm font-semibold text-slate-900">{name}</h3>
          {schema.description && (
            <p className="text-sm text-slate-600">
              <Inline text={schema.description} />
            </p>
          )}
          {schema.properties ? (
            <PropertiesTable schema={schema} />
          ) : (
            <p className="text-sm text-slate-600">
              <SchemaType schema={schema} />
              {constraints(schema).length > 0 && (
                <>
                  {": "}
                  <Inline text={constraints(schema).join("; ")} />
                </>
              )}
            </p>
          )}
          {schema.example !== undefined && <CodeBlock label="Example" code={json(schema.example)} />}
        </article>
      ))}
    </section>
  );
}

type Header = { description?: string; required?: boolean; schema?: JsonSchema & { example?: unknown } };

/** Response headers and the request header the API reads. */
export function Headers({
  headers,
  requestHeaders,
}: {
  headers: Record<string, Header>;
  requestHeaders: { name: string; description?: string; where: string }[];
}) {
  return (
    <section id="headers" className="scroll-mt-6 space-y-3">
      <h2 className="text-xl font-semibold text-slate-900">Headers</h2>
      <dl className="divide-y divide-slate-100 rounded-xl border border-slate-200 bg-white">
        {Object.entries(headers).map(([name, header]) => (
          <div key={name} id={`header-${name}`} className="grid scroll-mt-6 gap-1 px-5 py-3 sm:grid-cols-[14rem_1fr]">
            <dt className="font-mono text-sm text-slate-900">{name}</dt>
            <dd className="text-sm text-slate-600">
              {header.description && <Inline text={header.description} />}
              {header.schema?.example !== undefined && (
                <span className="ml-1 text-xs text-slate-500">
                  e.g. <code className="font-mono">{String(header.schema.example)}</code>
                </span>
              )}
            </dd>
          </div>
        ))}
        {requestHeaders.map((h) => (
          <div
            key={h.name}
            id={`header-${h.name}`}
            className="grid scroll-mt-6 gap-1 px-5 py-3 sm:grid-cols-[14rem_1fr]"
          >
            <dt className="font-mono text-sm text-slate-900">
              {h.name} <span className="text-xs text-slate-500">(request, {h.where})</span>
            </dt>
            <dd className="text-sm text-slate-600">{h.description && <Inline text={h.description} />}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
