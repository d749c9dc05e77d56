import type { FilterField } from "../ui/filter-bar";

/**
 * The admin lists' "Organisation" filter (keys, licences, users): every organisation by name, the
 * chosen one by id in the address as `organization`.
 */
export function organizationFilter(
  organizations: { id: string; name: string }[],
  chosen: string | undefined,
): FilterField {
  return {
    kind: "select",
    name: "organization",
    label: "Organisation",
    any: "Any organisation",
    value: chosen ?? "",
    options: organizations.map((o) => ({ value: o.id, label: o.name })),
  };
}
