"use client";

import { useEffect, useRef, useState } from "react";
import { Button } from "../ui/button";
import { CopyButton } from "../ui/copy-button";
import { formatDate } from "../ui/format";

/** A just-issued key as the issuing action returns it: the only answer that ever carries the secret. */
export type IssuedKeyView = { id: string; secret: string; prefix: string; name: string; expires_at: string | null };

/** The one showing of a new key's secret: prominent, copyable, and gone once dismissed or reloaded. */
export function IssuedSecret({
  issued,
  organization,
  onDone,
}: {
  issued: IssuedKeyView;
  organization: string;
  onDone: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  const [origin, setOrigin] = useState("");
  useEffect(() => {
    heading.current?.focus();
    setOrigin(window.location.origin);
  }, []);
  const example = `curl -H "Authorization: Bearer ${issued.secret}" ${origin}/api/v1/datasets`;
  return (
    <div
      role="region"
      aria-labelledby="issued-heading"
      className="rounded-lg bg-emerald-50 p-4 ring-1 ring-inset ring-emerald-300 sm:p-5"
    >
      <h3
        id="issued-heading"
        ref={heading}
        tabIndex={-1}
        className="text-base font-semibold text-emerald-950 focus:outline-none"
      >
        Key “{issued.name}” issued for {organization}
      </h3>
      <p className="mt-2 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900 ring-1 ring-inset ring-amber-300">
        <strong className="font-semibold">Copy the secret now: you will not see it again.</strong> Only a hash of it is
        stored, so it cannot be shown or recovered later. If it is lost, revoke the key and issue a new one.
      </p>
      <div className="mt-3 flex flex-col gap-2 sm:flex-row sm:items-center">
        <code
          aria-label="API key secret"
          className="block min-w-0 flex-1 break-all rounded-md bg-white px-3 py-2.5 font-mono text-sm text-slate-900 ring-1 ring-inset ring-emerald-300 select-all"
        >
          {issued.secret}
        </code>
        <CopyButton value={issued.secret} label="Copy secret" />
      </div>
      <dl className="mt-3 grid gap-x-6 gap-y-1 text-sm text-emerald-950 sm:grid-cols-3">
        <div>
          <dt className="inline text-emerald-800">Prefix </dt>
          <dd className="inline font-mono">{issued.prefix}</dd>
        </div>
        <div>
          <dt className="inline text-emerald-800">Expires </dt>
          <dd className="inline">{issued.expires_at ? formatDate(issued.expires_at) : "never"}</dd>
        </div>
        <div>
          <dt className="inline text-emerald-800">Key id </dt>
          <dd className="inline font-mono text-xs">{issued.id}</dd>
        </div>
      </dl>
      {origin ? (
        <div className="mt-3">
          <p className="text-xs font-medium text-emerald-900">Try it:</p>
          <pre className="mt-1 overflow-x-auto rounded-md bg-slate-900 px-3 py-2 text-xs text-slate-100">{example}</pre>
        </div>
      ) : null}
      <div className="mt-4 flex flex-wrap gap-2">
        <Button onClick={onDone}>I have stored the secret</Button>
      </div>
    </div>
  );
}
