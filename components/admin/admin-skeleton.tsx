/** What an admin page looks like while its lists load: header, a form card and a table, as grey blocks. */
export function AdminSkeleton({
  label,
  form = true,
  stats = false,
  rows = 6,
}: {
  label: string;
  form?: boolean;
  stats?: boolean;
  rows?: number;
}) {
  const bar = "rounded bg-slate-200";
  return (
    <div role="status" aria-label={`Loading ${label}`} className="animate-pulse">
      <div className="mb-6">
        <div className={`${bar} h-7 w-48`} />
        <div className={`${bar} mt-2 h-4 w-full max-w-xl`} />
      </div>
      {stats ? (
        <div className="mb-6 grid grid-cols-2 gap-3 lg:grid-cols-4">
          {[0, 1, 2, 3].map((i) => (
            <div key={i} className="h-20 rounded-lg bg-white ring-1 ring-slate-200" />
          ))}
        </div>
      ) : null}
      {form ? (
        <div className="mb-6 rounded-lg bg-white ring-1 ring-slate-200">
          <div className="border-b border-slate-200 px-5 py-3">
            <div className={`${bar} h-4 w-40`} />
          </div>
          <div className="grid gap-4 px-5 py-4 sm:grid-cols-2">
            <div className={`${bar} h-9`} />
            <div className={`${bar} h-9`} />
          </div>
          <div className="px-5 pb-4">
            <div className="h-9 w-32 rounded bg-brand-100" />
          </div>
        </div>
      ) : null}
      <div className="overflow-hidden rounded-lg bg-white ring-1 ring-slate-200">
        <div className="h-10 bg-slate-50" />
        {Array.from({ length: rows }, (_, i) => (
          <div key={i} className="flex gap-4 border-t border-slate-100 px-3 py-3">
            <div className={`${bar} h-4 w-1/4`} />
            <div className={`${bar} h-4 w-1/6`} />
            <div className={`${bar} h-4 w-1/5`} />
            <div className={`${bar} h-4 w-1/6`} />
          </div>
        ))}
      </div>
      <span className="sr-only">Loading…</span>
    </div>
  );
}
