"use client";

import { type ReactNode, useEffect, useRef } from "react";
import { Button } from "../ui/button";
import { CopyButton } from "../ui/copy-button";

/**
 * The one showing of a secret the service keeps no readable copy of (an API key, a webhook's
 * signing secret): focused when it appears, copyable, and gone once dismissed or reloaded.
 * `lead` comes under the title, `warning` says why it cannot be shown again, `children` what
 * follows the secret (its ids, an example).
 */
export function SecretShownOnce({
  headingId,
  title,
  lead,
  warning,
  secret,
  secretLabel,
  children,
  onDone,
}: {
  headingId: string;
  title: ReactNode;
  lead?: ReactNode;
  warning: ReactNode;
  secret: string;
  secretLabel: string;
  children?: ReactNode;
  onDone: () => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section
      aria-labelledby={headingId}
      className="rounded-lg bg-emerald-50 p-4 ring-1 ring-inset ring-emerald-300 sm:p-5"
    >
      <h3
        id={headingId}
        ref={heading}
        tabIndex={-1}
        className="text-base font-semibold text-emerald-950 focus:outline-none"
      >
        {title}
      </h3>
      {lead}
      <p className="mt-2 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900 ring-1 ring-inset ring-amber-300">
        {warning}
      </p>
      <div className="mt-3 flex flex-col gap-2 sm:flex-row sm:items-center">
        <code
          aria-label={secretLabel}
          className="block min-w-0 flex-1 break-all rounded-md bg-white px-3 py-2.5 font-mono text-sm text-slate-900 ring-1 ring-inset ring-emerald-300 select-all"
        >
          {secret}
        </code>
        <CopyButton value={secret} label="Copy secret" />
      </div>
      {children}
      <div className="mt-4 flex flex-wrap gap-2">
        <Button onClick={onDone}>I have stored the secret</Button>
      </div>
    </section>
  );
}
