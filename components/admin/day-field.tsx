import type { ReactNode } from "react";
import { Field, Input } from "../ui/form";
import { invalidProps, type FieldErrors } from "./field-errors";

/**
 * A UTC day an admin form reads (a licence's first or last day), with its inline error: the
 * label, the hint and the date control wired to each other by the field's id.
 */
export function DayField({
  id,
  label,
  hint,
  errors,
  value,
  min,
  onChange,
}: {
  id: string;
  label: string;
  hint: ReactNode;
  errors: FieldErrors;
  /** `YYYY-MM-DD`, or empty. */
  value: string;
  /** The earliest day the picker offers. */
  min?: string;
  onChange: (day: string) => void;
}) {
  return (
    <Field label={label} htmlFor={id} error={errors[id]} hint={hint}>
      <Input
        {...invalidProps(id, errors)}
        type="date"
        value={value}
        min={min}
        onChange={(e) => onChange(e.target.value)}
      />
    </Field>
  );
}
