"use client";

import { Button } from "@/components/ui/button";

/** A portal page that failed to load: say so plainly, offer a retry, and give the reference to quote. */
export default function PortalError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <div role="alert" className="mx-auto max-w-lg rounded-lg bg-white p-6 text-center shadow-sm ring-1 ring-slate-200">
      <h1 className="text-lg font-semibold text-slate-900">This page could not be loaded</h1>
      <p className="mt-2 text-sm text-slate-600">
        Something went wrong on our side. Try again; if it keeps happening, send the reference below to your
        administrator.
      </p>
      {error.digest ? <p className="mt-2 font-mono text-xs text-slate-500">Reference {error.digest}</p> : null}
      <Button className="mt-4" onClick={reset}>
        Try again
      </Button>
    </div>
  );
}
