"use client";

import { useEffect, useState } from "react";
import { formatDate } from "../ui/format";
import { SecretShownOnce } from "./secret-shown-once";

/** A just-issued key as the issuing action returns it: the only answer that ever carries the secret. */
export type IssuedKeyView = { id: string; secret: string; prefix: string; name: string; expires_at: string | null };

/** The one showing of a new key's secret, with its prefix, expiry, id and a request to try it. */
export function IssuedSecret({
  issued,
  organization,
  onDone,
}: {
  issued: IssuedKeyView;
  organization: string;
  onDone: () => void;
}) {
  const [origin, setOrigin] = useState("");
  useEffect(() => setOrigin(window.location.origin), []);
  const example = `curl -H "Authorization: Bearer ${issued.secret}" ${origin}/api/v1/datasets`;
  return (
    <SecretShownOnce
      headingId="issued-heading"
      title={
        <>
          Key “{issued.name}” issued for {organization}
        </>
      }
      warning={
        <>
          <strong className="font-semibold">Copy the secret now: you will not see it again.</strong> Only a hash of it
          is stored, so it cannot be shown or recovered later. If it is lost, revoke the key and issue a new one.
        </>
      }
      secret={issued.secret}
      secretLabel="API key secret"
      onDone={onDone}
    >
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
    </SecretShownOnce>
  );
}
