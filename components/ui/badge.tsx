import type { ReactNode } from "react";
import { cn } from "./cn";

export type Tone = "neutral" | "green" | "amber" | "red" | "blue" | "brand";

const TONES: Record<Tone, string> = {
  neutral: "bg-slate-100 text-slate-700 ring-slate-500/20",
  green: "bg-emerald-50 text-emerald-700 ring-emerald-600/20",
  amber: "bg-amber-50 text-amber-800 ring-amber-600/20",
  red: "bg-red-50 text-red-700 ring-red-600/20",
  blue: "bg-sky-50 text-sky-700 ring-sky-600/20",
  brand: "bg-brand-50 text-brand-700 ring-brand-600/20",
};

export function Badge({
  tone = "neutral",
  children,
  className,
}: {
  tone?: Tone;
  children: ReactNode;
  className?: string;
}) {
  return (
    <span
      className={cn(
        "inline-flex items-center rounded-md px-2 py-0.5 text-xs font-medium ring-1 ring-inset",
        TONES[tone],
        className,
      )}
    >
      {children}
    </span>
  );
}

/** The usual tone for an episode outcome. */
export function outcomeTone(outcome: string): Tone {
  if (outcome === "success") return "green";
  if (outcome === "failure") return "red";
  // Not knowing how an episode ended is no warning about it.
  if (outcome === "unknown") return "neutral";
  return "amber";
}
