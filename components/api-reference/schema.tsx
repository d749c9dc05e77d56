import { SimpleTable } from "../ui/simple-table";
import { Inline } from "./markdown";

export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  description?: string;
  example?: unknown;
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
};

export const refName = (ref: string) => ref.split("/").at(-1)!;
export const schemaAnchor = (name: string) => `schema-${name}`;

/** A schema's type in one line, with links to named schemas. */
export function SchemaType({ schema }: { schema: JsonSchema }) {
  if (schema.$ref) {
    const name = refName(schema.$ref);
    return (
      <a
        href={`#${schemaAnchor(name)}`}
        className="font-mono text-xs font-medium text-brand-700 underline decoration-brand-200 underline-offset-2 hover:decoration-brand-600"
      >
        {name}
      </a>
    );
  }
  const union = schema.anyOf ?? schema.oneOf;
  if (union) {
    return (
      <>
        {union.map((s, i) => (
          <span key={i}>
            {i > 0 && <span className="text-slate-400"> | </span>}
            <SchemaType schema={s} />
          </span>
        ))}
      </>
    );
  }
  if (schema.type === "array" && schema.items) {
    return (
      <span className="font-mono text-xs">
        <SchemaType schema={schema.items} />
        []
      </span>
    );
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? (schema.properties ? "object" : "any")];
  return <span className="font-mono text-xs text-slate-800">{types.join(" | ")}</span>;
}

/** Limits, formats and enums that a reader needs besides the type. */
export function constraints(schema: JsonSchema): string[] {
  const out: string[] = [];
  if (schema.enum) out.push(`one of ${schema.enum.map((v) => `\`${String(v)}\``).join(", ")}`);
  if (schema.format) out.push(`format \`${schema.format}\``);
  if (schema.pattern && schema.format !== "date-time") out.push(`pattern \`${schema.pattern}\``);
  if (schema.minimum !== undefined && schema.minimum !== 0) out.push(`≥ ${schema.minimum}`);
  if (schema.minimum === 0) out.push("≥ 0");
  if (schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER) out.push(`≤ ${schema.maximum}`);
  if (schema.minLength === 1) out.push("not empty");
  else if (schema.minLength !== undefined && schema.minLength > 1) out.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) out.push(`at most ${schema.maxLength} characters`);
  if (schema.minItems !== undefined) out.push(`at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined) out.push(`at most ${schema.maxItems.toLocaleString("en")} items`);
  if (schema.default !== undefined) out.push(`default \`${JSON.stringify(schema.default)}\``);
  return out;
}

/** The constraints under a field's or a parameter's description, when it has any. */
export function Constraints({ schema }: { schema: JsonSchema }) {
  const list = constraints(schema);
  if (!list.length) return null;
  return (
    <span className="block text-xs text-slate-500">
      <Inline text={list.join("; ")} />
    </span>
  );
}

/** The fields of an object schema as a table. */
export function PropertiesTable({ schema }: { schema: JsonSchema }) {
  const properties = Object.entries(schema.properties ?? {});
  if (!properties.length) return null;
  return (
    <SimpleTable
      columns={[
        { header: "Field", className: "whitespace-nowrap font-mono text-xs text-slate-900" },
        { header: "Type", className: "whitespace-nowrap" },
        { header: "Description", className: "text-slate-600" },
      ]}
      rows={properties.map(([name, property]) => ({
        key: name,
        cells: [
          <>
            {name}
            {schema.required?.includes(name) ? (
              <span className="ml-1 text-red-600" title="required">
                *
              </span>
            ) : (
              <span className="ml-1 text-slate-400">optional</span>
            )}
          </>,
          <SchemaType key="type" schema={property} />,
          <>
            {property.description && <Inline text={property.description} />}
            <Constraints schema={property} />
          </>,
        ],
      }))}
    />
  );
}
