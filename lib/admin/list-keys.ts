import type { Ctx } from "../context";
import { sqlOf } from "../db/client";
import { AppError } from "../errors";
import { requireAdmin } from "../auth/authorize";
import { KEY_STATUSES, type KeyStatus } from "./key-statuses";

export { KEY_STATUSES, type KeyStatus };

export type KeyScopeEntry = {
  dataset_id: string;
  version: string;
  /** False once the organisation's licence for the version is revoked: the key no longer reaches it. */
  licensed: boolean;
};

export type KeyRecord = {
  id: string;
  organization_id: string;
  organization_slug: string;
  organization_name: string;
  name: string;
  prefix: string;
  created_at: string;
  created_by: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  /** Revoked wins over expired: an expired key that was also revoked reads as revoked. */
  status: KeyStatus;
  narrowed: boolean;
  /** The versions a narrowed key is limited to (empty when it is not narrowed), by dataset then newest version. */
  scope: KeyScopeEntry[];
};

type Row = Omit<KeyRecord, "created_at" | "expires_at" | "last_used_at" | "revoked_at"> & {
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
};

const iso = (d: Date | null) => d?.toISOString() ?? null;

/** API keys, newest first, optionally one organisation's and/or one status. The secrets are never stored, so never listed. */
export async function listKeys(
  ctx: Ctx,
  input: { organizationId?: string; status?: KeyStatus } = {},
): Promise<KeyRecord[]> {
  requireAdmin(ctx);
  if (input.status !== undefined && !KEY_STATUSES.includes(input.status)) {
    throw new AppError("invalid_parameter", `Status must be one of ${KEY_STATUSES.join(", ")}.`);
  }
  const sql = sqlOf(ctx.db);
  const org = input.organizationId ?? null;
  const status = input.status ?? null;
  const rows = await sql<Row[]>`
    select * from (
      select k.id, k.organization_id, o.slug as organization_slug, o.name as organization_name, k.name, k.prefix,
             k.created_at, u.email as created_by, k.expires_at, k.last_used_at, k.revoked_at, k.narrowed,
             case when k.revoked_at is not null then 'revoked'
                  when k.expires_at is not null and k.expires_at <= now() then 'expired'
                  else 'active' end as status,
             coalesce((
               select json_agg(json_build_object(
                        'dataset_id', v.dataset_id, 'version', v.version,
                        'licensed', exists (select 1 from licences l
                                            where l.organization_id = k.organization_id and l.version_id = v.id and l.revoked_at is null))
                      order by v.dataset_id, v.major desc, v.minor desc, v.patch desc)
               from api_key_scopes s join dataset_versions v on v.id = s.version_id
               where s.key_id = k.id), '[]'::json) as scope
      from api_keys k
      join organizations o on o.id = k.organization_id
      left join users u on u.id = k.created_by_user_id
      where (${org}::text is null or k.organization_id = ${org})
    ) listed
    where (${status}::text is null or listed.status = ${status})
    order by created_at desc, id`;
  return rows.map((r) => ({
    ...r,
    created_at: r.created_at.toISOString(),
    expires_at: iso(r.expires_at),
    last_used_at: iso(r.last_used_at),
    revoked_at: iso(r.revoked_at),
  }));
}
