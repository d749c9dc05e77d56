"use client";

import Form from "next/form";
import { useRef, type ReactNode } from "react";
import { buttonClass } from "./button";
import { cn } from "./cn";
import { Field, Input, Select } from "./form";

type Common = { name: string; label: string; value: string; hint?: string; narrow?: boolean };
export type FilterField =
  | (Common & { kind: "select"; any?: string; options: { value: string; label: string }[] })
  | (Common & {
      kind: "input";
      type?: "text" | "email" | "date" | "number";
      placeholder?: string;
      /** For a number: the smallest value and the step (`any` for decimals). */
      min?: number;
      step?: number | "any";
    });

/**
 * The filters of a list as a GET form: the choice lives in the URL (shareable, and the page reads
 * it like any link). Without a submit label a choice navigates at once (without JavaScript an
 * Apply button does the same), and fields that are typed into apply with Enter or an Apply button
 * beside them; with one, every field waits for the button. `framed` sets the bar in a panel of its own, for a page's main list; a
 * section's list carries it unframed beside its heading.
 */
export function FilterBar({
  label,
  fields,
  submitLabel,
  active = fields.some((f) => f.value),
  clearHref = "?",
  framed = false,
  children,
}: {
  label: string;
  fields: FilterField[];
  submitLabel?: string;
  /** Whether anything is filtered, which offers the way back; by default, whether any field has a value. */
  active?: boolean;
  clearHref?: string;
  framed?: boolean;
  /** More at the end of the bar, e.g. a link the current filter suggests. */
  children?: ReactNode;
}) {
  const form = useRef<HTMLFormElement>(null);
  const onChange = submitLabel ? undefined : () => form.current?.requestSubmit();
  // Typed values cannot apply at each keystroke: a bar of choices that also has them shows its Apply button.
  const typed = !submitLabel && fields.some((f) => f.kind === "input");
  return (
    <Form
      ref={form}
      action=""
      aria-label={label}
      className={cn(
        "flex w-full flex-wrap items-start gap-3",
        framed ? "rounded-lg bg-white p-4 shadow-sm ring-1 ring-slate-200" : "sm:w-auto",
      )}
    >
      {fields.map((f) => {
        const id = `filter-${f.name}`;
        return (
          <Field
            key={f.name}
            label={f.label}
            htmlFor={id}
            hint={f.hint}
            className={f.narrow ? "w-28" : "w-full sm:w-52"}
          >
            {f.kind === "select" ? (
              <Select id={id} name={f.name} defaultValue={f.value} onChange={onChange}>
                {f.any !== undefined ? <option value="">{f.any}</option> : null}
                {f.options.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
              </Select>
            ) : (
              <Input
                id={id}
                name={f.name}
                type={f.type ?? "text"}
                placeholder={f.placeholder}
                defaultValue={f.value}
                min={f.min}
                step={f.step}
                inputMode={f.type === "number" ? "decimal" : undefined}
              />
            )}
          </Field>
        );
      })}
      {submitLabel || typed ? null : (
        <noscript>
          <button type="submit" className={buttonClass("secondary", "md", "sm:mt-6")}>
            Apply
          </button>
        </noscript>
      )}
      {submitLabel || typed || active || children ? (
        // Level with the controls, below their labels, whatever hints the fields carry.
        <div className="flex min-h-9 flex-wrap items-center gap-x-4 gap-y-2 sm:mt-6">
          {submitLabel ? (
            <button type="submit" className={buttonClass("primary")}>
              {submitLabel}
            </button>
          ) : typed ? (
            <button type="submit" className={buttonClass("secondary")}>
              Apply
            </button>
          ) : null}
          {active ? (
            <a href={clearHref} className="text-sm font-medium text-brand-700 hover:underline">
              Clear filters
            </a>
          ) : null}
          {children}
        </div>
      ) : null}
    </Form>
  );
}
