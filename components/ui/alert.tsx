import type { ReactNode } from "react";
import { cn } from "./cn";

type Kind = "info" | "success" | "warning" | "error";

const KINDS: Record<Kind, string> = {
  info: "bg-sky-50 text-sky-900 ring-sky-200",
  success: "bg-emerald-50 text-emerald-900 ring-emerald-200",
  warning: "bg-amber-50 text-amber-900 ring-amber-200",
  error: "bg-red-50 text-red-900 ring-red-200",
};

export function Alert({
  kind = "info",
  title,
  children,
  className,
}: {
  kind?: Kind;
  title?: ReactNode;
  children?: ReactNode;
  className?: string;
}) {
  return (
    <div
      role={kind === "error" ? "alert" : "status"}
      className={cn("rounded-md px-4 py-3 text-sm ring-1 ring-inset", KINDS[kind], className)}
    >
      {title ? <p className="font-medium">{title}</p> : null}
      {children ? <div className={title ? "mt-1" : undefined}>{children}</div> : null}
    </div>
  );
}
