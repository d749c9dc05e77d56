"use client";

import { useState } from "react";
import { cn } from "./cn";
import { formatNumber } from "./format";

/**
 * Free text that may be very long (a label or task may hold 10,000 characters): shown whole when
 * short, else its first `limit` characters with a button that shows the rest. It wraps anywhere,
 * so one long word cannot widen its column or the page.
 */
export function LongText({ text, limit = 160, className }: { text: string; limit?: number; className?: string }) {
  const [open, setOpen] = useState(false);
  const chars = Array.from(text);
  const long = chars.length > limit;
  return (
    <span className={cn("block whitespace-normal wrap-anywhere", className)}>
      {long && !open ? `${chars.slice(0, limit).join("")}…` : text}
      {long ? (
        <>
          {" "}
          <button
            type="button"
            aria-expanded={open}
            onClick={() => setOpen(!open)}
            className="whitespace-nowrap rounded text-xs font-medium text-brand-700 hover:underline focus-visible:outline focus-visible:outline-2 focus-visible:outline-brand-600"
          >
            {open ? "Show less" : `Show all ${formatNumber(chars.length)} characters`}
          </button>
        </>
      ) : null}
    </span>
  );
}
