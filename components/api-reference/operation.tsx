import { SimpleTable } from "../ui/simple-table";
import { CodeBlock, json } from "./code-block";
import { Inline, Markdown } from "./markdown";
import { MethodBadge, StatusBadge } from "./method-badge";
import { Constraints, PropertiesTable, refName, SchemaType, type JsonSchema } from "./schema";

type Media = {
  schema?: JsonSchema;
  example?: unknown;
  examples?: Record<string, { summary?: string; value: unknown }>;
};
type Parameter = { name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema };
export type OperationObject = {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, Media> };
  responses: Record<
    string,
    { description: string; headers?: Record<string, { $ref?: string }>; content?: Record<string, Media> }
  >;
};

export const operationAnchor = (op: OperationObject, method: string, path: string) =>
  op.operationId ?? `${method}-${path}`;

function Examples({ media }: { media: Media }) {
  const examples = [
    ...(media.example !== undefined ? [{ label: "Example", value: media.example }] : []),
    ...Object.entries(media.examples ?? {}).map(([name, e]) => ({ label: e.summary ?? name, value: e.value })),
  ];
  return (
    <div className="space-y-2">
      {examples.map((e) => (
        <CodeBlock key={e.label} label={e.label} code={json(e.value)} />
      ))}
    </div>
  );
}

function Parameters({ parameters }: { parameters: Parameter[] }) {
  return (
    <SimpleTable
      columns={[
        { header: "Name", className: "whitespace-nowrap font-mono text-xs text-slate-900" },
        { header: "In", className: "text-xs text-slate-500" },
        { header: "Type", className: "whitespace-nowrap" },
        { header: "Description", className: "text-slate-600" },
      ]}
      rows={parameters.map((p) => ({
        key: `${p.in}:${p.name}`,
        cells: [
          <>
            {p.name}
            {p.required ? (
              <span className="ml-1 text-red-600" title="required">
                *
              </span>
            ) : null}
          </>,
          p.in,
          p.schema && <SchemaType schema={p.schema} />,
          <>
            {p.description && <Inline text={p.description} />}
            {p.schema && <Constraints schema={p.schema} />}
            {p.schema?.example !== undefined && (
              <span className="block text-xs text-slate-500">
                Example: <code className="font-mono">{String(p.schema.example)}</code>
              </span>
            )}
          </>,
        ],
      }))}
    />
  );
}

/** One endpoint: what it does, what it takes and everything it can answer. */
export function Operation({ method, path, op }: { method: string; path: string; op: OperationObject }) {
  const body = op.requestBody?.content?.["application/json"];
  return (
    <section
      id={operationAnchor(op, method, path)}
      className="scroll-mt-6 rounded-xl border border-slate-200 bg-white p-6 shadow-sm"
    >
      <header className="flex flex-wrap items-center gap-3">
        <MethodBadge method={method} />
        <h3 className="font-mono text-base font-semibold text-slate-900">{path}</h3>
        {op.security?.length === 0 && (
          <span className="rounded-md bg-amber-50 px-2 py-0.5 text-xs font-medium text-amber-800 ring-1 ring-inset ring-amber-600/20">
            no key needed
          </span>
        )}
      </header>
      {op.summary && <p className="mt-2 text-sm font-medium text-slate-900">{op.summary}</p>}
      {op.description && <Markdown className="mt-2" text={op.description} />}

      {op.parameters && op.parameters.length > 0 && (
        <div className="mt-5 space-y-2">
          <h4 className="text-sm font-semibold text-slate-900">Parameters</h4>
          <Parameters parameters={op.parameters} />
        </div>
      )}

      {body && (
        <div className="mt-5 space-y-2">
          <h4 className="text-sm font-semibold text-slate-900">
            Request body{" "}
            <span className="font-normal text-slate-500">
              application/json{op.requestBody?.required ? ", required" : ""}:{" "}
            </span>
            {body.schema && <SchemaType schema={body.schema} />}
          </h4>
          <Examples media={body} />
        </div>
      )}

      <div className="mt-5 space-y-3">
        <h4 className="text-sm font-semibold text-slate-900">Responses</h4>
        {Object.entries(op.responses).map(([status, response]) => {
          const media = response.content?.["application/json"];
          return (
            <details key={status} className="group rounded-lg border border-slate-200" open={status.startsWith("2")}>
              <summary className="flex cursor-pointer list-none items-start gap-3 px-4 py-3">
                <StatusBadge status={status} />
                <span className="text-sm text-slate-700">
                  <Inline text={response.description} />
                </span>
              </summary>
              <div className="space-y-3 border-t border-slate-100 px-4 py-3">
                {media?.schema && (
                  <p className="text-sm text-slate-600">
                    Body: <SchemaType schema={media.schema} />
                  </p>
                )}
                {media?.schema && !media.schema.$ref && media.schema.properties && (
                  <PropertiesTable schema={media.schema} />
                )}
                {response.headers && (
                  <p className="text-xs text-slate-500">
                    Headers:{" "}
                    {Object.entries(response.headers).map(([name, header], i) => (
                      <span key={name}>
                        {i > 0 && ", "}
                        <a
                          href={`#header-${header.$ref ? refName(header.$ref) : name}`}
                          className="font-mono text-slate-700 hover:text-brand-700"
                        >
                          {name}
                        </a>
                      </span>
                    ))}
                  </p>
                )}
                {media && <Examples media={media} />}
              </div>
            </details>
          );
        })}
      </div>
    </section>
  );
}
