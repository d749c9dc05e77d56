/** Preformatted code: a command, a request or a JSON example. */
export function CodeBlock({ code, label }: { code: string; label?: string }) {
  return (
    <figure className="overflow-hidden rounded-lg border border-slate-800 bg-slate-900">
      {label && (
        <figcaption className="border-b border-slate-700 px-4 py-1.5 text-xs font-medium text-slate-400">
          {label}
        </figcaption>
      )}
      <pre className="overflow-x-auto p-4 font-mono text-xs leading-5 text-slate-100">
        <code>{code}</code>
      </pre>
    </figure>
  );
}

export const json = (value: unknown) => JSON.stringify(value, null, 2);
