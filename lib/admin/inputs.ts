import { z } from "zod";
import { DATASET_LISTINGS, USER_ROLES } from "../db/schema";
import { AppError } from "../errors";
import { KEY_EXPIRY_DAYS, KEY_NAME_MAX, PURPOSE_MAX, REJECTION_REASON_MAX } from "./rules";
import { FREE_TEXT, WITHOUT_CONTROL_CHARACTERS } from "../characters";
import { parseTimeBound } from "../disclosures/filter";
import { TERMS_MAX_BYTES, TERMS_SHA256_PATTERN } from "./terms";

/**
 * What the portal's admin forms send to their server actions. A server action is a public
 * endpoint, so its argument is checked here before any verb sees it; the verbs then apply the
 * domain rules (slug shape, password length, licences a key may be narrowed to) themselves.
 */
// Control characters (a NUL above all, which PostgreSQL refuses) are an invalid body here, before
// any SQL: none in one-line fields, only tabs and line breaks in names. Passwords are only hashed.
const line = () => z.string().trim().regex(WITHOUT_CONTROL_CHARACTERS, "must not contain control characters");
const displayName = () =>
  z.string().trim().regex(FREE_TEXT, "must not contain control characters other than tabs and line breaks");
const id = line().min(1, "is required").max(100, "is too long");
const versionTarget = { datasetId: id, version: id };

export const CreateOrganizationInput = z.object({
  slug: line().min(1, "is required").max(63, "is at most 63 characters"),
  name: displayName().max(200, "is at most 200 characters").optional(),
});

export const CreateUserInput = z.object({
  email: line().min(1, "is required").max(320, "is too long"),
  name: displayName().max(200, "is at most 200 characters").optional(),
  role: z.enum(USER_ROLES, `must be one of ${USER_ROLES.join(", ")}`),
  organizationId: id.nullish(),
  password: z.string().max(1024, "is too long"),
});

export const UserTargetInput = z.object({ id });

export const ChangeRoleInput = z.object({
  id,
  role: z.enum(USER_ROLES, `must be one of ${USER_ROLES.join(", ")}`),
  organizationId: id.nullish(),
});

export const LicenceInput = z.object({ organizationId: id, ...versionTarget });

export const IssueKeyInput = z.object({
  organizationId: id,
  name: line().max(KEY_NAME_MAX, `is at most ${KEY_NAME_MAX} characters`),
  expiresInDays: z
    .number()
    .nullable()
    .refine(
      (days) => days === null || (KEY_EXPIRY_DAYS as readonly number[]).includes(days),
      `must be one of ${KEY_EXPIRY_DAYS.join(", ")} or null`,
    ),
  scope: z.array(z.object(versionTarget)).max(1000, "is too long").default([]),
});

export const RevokeKeyInput = z.object({ id });

// The text is kept byte for byte (its SHA-256 identifies it): never trimmed here; addTerms checks it.
export const AddTermsInput = z.object({
  title: line().min(1, "is required").max(200, "is at most 200 characters"),
  body: z.string().max(TERMS_MAX_BYTES, `is at most ${TERMS_MAX_BYTES} characters`),
  datasetId: id.nullish(),
});

export const ListingInput = z.object({
  datasetId: id,
  listing: z.enum(DATASET_LISTINGS, `must be one of ${DATASET_LISTINGS.join(", ")}`),
});

/** A form's date or instant: a date is a UTC day, taken from its start (`start`) or including it whole (`end`). */
const termBound = (side: "start" | "end") =>
  z.string().transform((text, check) => {
    const bound = parseTimeBound(text);
    if (!bound) {
      check.addIssue({ code: "custom", message: "must be a date (YYYY-MM-DD) or an ISO 8601 instant with its zone" });
      return z.NEVER;
    }
    return side === "end" && bound.wholeDay ? new Date(bound.at.getTime() + 86_400_000) : bound.at;
  });

export const ApproveRequestInput = z.object({
  id,
  startsAt: termBound("start").nullish(),
  endsAt: termBound("end").nullish(),
});

/** A licence granted from the portal: its term (dates are UTC days, the end one included) and terms. */
export const GrantLicenceInput = z.object({
  organizationId: id,
  ...versionTarget,
  startsAt: termBound("start").nullish(),
  endsAt: termBound("end").nullish(),
  termsSha256: z.string().regex(TERMS_SHA256_PATTERN, "must be a terms document's SHA-256").nullish(),
});

/** A held licence's new end: earlier ends it early, later extends it. */
export const EndLicenceInput = z.object({ organizationId: id, ...versionTarget, endsAt: termBound("end") });

export const RejectRequestInput = z.object({
  id,
  reason: z.string().max(REJECTION_REASON_MAX, `is at most ${REJECTION_REASON_MAX} characters`),
});

export const AccessRequestInput = z.object({
  ...versionTarget,
  purpose: z.string().max(PURPOSE_MAX, `is at most ${PURPOSE_MAX} characters`),
  termsSha256: z.string().regex(TERMS_SHA256_PATTERN, "must be a terms document's SHA-256"),
  accepted: z.literal(true, "must be true: the terms must be accepted to make a request"),
});

export const AddWebhookInput = z.object({
  organizationId: id,
  url: line().min(1, "is required").max(2_000, "is at most 2000 characters"),
  description: displayName().max(200, "is at most 200 characters").optional(),
});

export const RemoveWebhookInput = z.object({ id });

/** The parsed input, or the same `invalid_body` error an API body would get, naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length ? `'${issue.path.join(".")}'` : "The input";
  throw new AppError("invalid_body", `${where} ${issue.message}`);
}

/** The expiry time for a choice of days from now (null: the key never expires). */
export function expiryAfter(days: number | null, now = new Date()): Date | null {
  return days === null ? null : new Date(now.getTime() + days * 86_400_000);
}
