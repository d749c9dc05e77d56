import { and, eq, isNull } from "drizzle-orm";
import { apiKeys, apiKeyScopes, licences } from "../db/schema";
import type { Ctx } from "../context";
import { AppError } from "../errors";
import { newId } from "../ids";
import { withTx } from "../db/tx";
import { KEY_PATTERN, keyFromSecret, mintKey } from "../auth/api-keys";
import { recordAdminAction } from "./audit";
import { requireAdmin } from "../auth/authorize";
import { versionId } from "./licences";
import { requireOrganization } from "./organizations";
import { KEY_NAME_MAX } from "./rules";
import { WITHOUT_CONTROL_CHARACTERS } from "../characters";

export type IssueKeyInput = {
  organizationId: string;
  name: string;
  expiresAt?: Date | null;
  /** Narrow the key to these of the organisation's licensed versions; empty means all of them. */
  scope?: { datasetId: string; version: string }[];
  /** A secret chosen by the caller (the demo key); otherwise a fresh random one. */
  secret?: string;
};

export type IssuedKey = { id: string; secret: string; prefix: string; name: string; expiresAt: Date | null };

/** Issues a key; the secret is returned here once and only its SHA-256 is stored. */
export async function issueKey(ctx: Ctx, input: IssueKeyInput): Promise<IssuedKey> {
  requireAdmin(ctx);
  const name = input.name.trim();
  if (!name || name.length > KEY_NAME_MAX)
    throw new AppError("invalid_parameter", `A key needs a name of 1 to ${KEY_NAME_MAX} characters.`);
  if (!WITHOUT_CONTROL_CHARACTERS.test(name))
    throw new AppError("invalid_parameter", "A key name must not contain control characters.");
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now()) {
    throw new AppError("invalid_parameter", "The expiry must be in the future.");
  }
  if (input.secret !== undefined && !KEY_PATTERN.test(input.secret))
    throw new AppError("invalid_parameter", "A chosen secret must look like a key this service mints.");
  const minted = input.secret ? keyFromSecret(input.secret) : mintKey();
  return withTx(ctx, async (tx) => {
    await requireOrganization(tx, input.organizationId);
    const scopeVersions: number[] = [];
    for (const { datasetId, version } of input.scope ?? []) {
      const id = await versionId(tx, datasetId, version);
      const [held] = await tx.db
        .select({ id: licences.id })
        .from(licences)
        .where(
          and(
            eq(licences.organizationId, input.organizationId),
            eq(licences.versionId, id),
            isNull(licences.revokedAt),
          ),
        );
      if (!held)
        throw new AppError(
          "invalid_parameter",
          `The organisation holds no licence for ${datasetId}@${version}, so a key cannot be narrowed to it.`,
        );
      scopeVersions.push(id);
    }
    const id = newId("key");
    const creator = tx.principal.kind === "user" ? tx.principal.userId : null;
    await tx.db.insert(apiKeys).values({
      id,
      organizationId: input.organizationId,
      name,
      keyHash: minted.hash,
      prefix: minted.prefix,
      narrowed: scopeVersions.length > 0,
      createdByUserId: creator,
      expiresAt: input.expiresAt ?? null,
    });
    if (scopeVersions.length) {
      await tx.db
        .insert(apiKeyScopes)
        .values([...new Set(scopeVersions)].map((versionId) => ({ keyId: id, versionId })));
    }
    await recordAdminAction(tx, "key.issue", id, {
      organizationId: input.organizationId,
      name,
      prefix: minted.prefix,
      expiresAt: input.expiresAt?.toISOString() ?? null,
      scope: input.scope ?? [],
    });
    return { id, secret: minted.secret, prefix: minted.prefix, name, expiresAt: input.expiresAt ?? null };
  });
}

/** Revokes a key by id or by its display prefix; a prefix shared by several live keys must be disambiguated. */
export async function revokeKey(
  ctx: Ctx,
  input: { id?: string; prefix?: string; organizationId?: string },
): Promise<{ id: string; prefix: string }> {
  requireAdmin(ctx);
  return withTx(ctx, async (tx) => {
    const matches = await tx.db
      .select({ id: apiKeys.id, prefix: apiKeys.prefix, revokedAt: apiKeys.revokedAt })
      .from(apiKeys)
      .where(
        and(
          input.id ? eq(apiKeys.id, input.id) : eq(apiKeys.prefix, input.prefix ?? ""),
          input.organizationId ? eq(apiKeys.organizationId, input.organizationId) : undefined,
        ),
      );
    const live = matches.filter((k) => !k.revokedAt);
    if (!live.length) {
      throw new AppError(
        "not_found",
        matches.length ? "That key is already revoked." : "No key matches that id or prefix.",
      );
    }
    if (live.length > 1)
      throw new AppError("invalid_parameter", "Several live keys share that prefix; revoke by key id instead.");
    const key = live[0]!;
    await tx.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, key.id));
    await recordAdminAction(tx, "key.revoke", key.id, { prefix: key.prefix });
    return { id: key.id, prefix: key.prefix };
  });
}
