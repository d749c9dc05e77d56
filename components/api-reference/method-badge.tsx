const TONES: Record<string, string> = {
  GET: "bg-sky-50 text-sky-700 ring-sky-600/20",
  POST: "bg-emerald-50 text-emerald-700 ring-emerald-600/20",
  HEAD: "bg-indigo-50 text-indigo-700 ring-indigo-600/20",
};

export function MethodBadge({ method }: { method: string }) {
  const upper = method.toUpperCase();
  return (
    <span
      className={`inline-flex w-14 justify-center rounded-md px-2 py-0.5 font-mono text-xs font-semibold ring-1 ring-inset ${TONES[upper] ?? "bg-slate-100 text-slate-700 ring-slate-500/20"}`}
    >
      {upper}
    </span>
  );
}

export function StatusBadge({ status }: { status: string }) {
  const ok = status.startsWith("2");
  return (
    <span
      className={`inline-flex rounded-md px-2 py-0.5 font-mono text-xs font-semibold ring-1 ring-inset ${ok ? "bg-emerald-50 text-emerald-700 ring-emerald-600/20" : "bg-red-50 text-red-700 ring-red-600/20"}`}
    >
      {status}
    </span>
  );
}
