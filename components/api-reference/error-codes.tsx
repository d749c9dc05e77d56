import { SimpleTable } from "../ui/simple-table";
import { Inline } from "./markdown";

export type ErrorCodeRow = { code: string; status: number; meaning: string };

/** Every stable error code, its status and when it is returned. */
export function ErrorCodes({ rows }: { rows: ErrorCodeRow[] }) {
  return (
    <section id="errors" className="scroll-mt-6 space-y-3">
      <h2 className="text-xl font-semibold text-slate-900">Error codes</h2>
      <p className="text-sm leading-6 text-slate-700">
        Every error is <code className="font-mono">{'{"error":{"code","message","request_id"}}'}</code>. Program against{" "}
        <code className="font-mono">code</code>; show <code className="font-mono">message</code>; quote{" "}
        <code className="font-mono">request_id</code> (also in the <code className="font-mono">X-Request-Id</code>{" "}
        header) when reporting a problem.
      </p>
      <SimpleTable
        columns={[
          { header: "Status", className: "font-mono text-xs" },
          { header: "Code", className: "whitespace-nowrap font-mono text-xs text-slate-900" },
          { header: "When", className: "text-slate-600" },
        ]}
        rows={rows.map((row) => ({
          key: row.code,
          id: `error-${row.code}`,
          cells: [row.status, row.code, <Inline key="meaning" text={row.meaning} />],
        }))}
      />
    </section>
  );
}
