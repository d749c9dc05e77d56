import { and, asc, eq, isNull } from "drizzle-orm";
import { organizations, webhookEndpoints } from "../db/schema";
import type { Ctx } from "../context";
import { AppError } from "../errors";
import { env } from "../env";
import { newId } from "../ids";
import { withTx } from "../db/tx";
import { requireAdmin } from "../auth/authorize";
import { recordAdminAction } from "./audit";
import { requireOrganization } from "./organizations";
import { FREE_TEXT } from "../characters";
import { checkWebhookAddresses, parseWebhookUrl } from "../notice-delivery/address-guard";
import { mintWebhookSecret, sealSecret } from "../notice-delivery/secret-box";

export const WEBHOOK_DESCRIPTION_MAX = 200;

export type AddedWebhookEndpoint = {
  id: string;
  organizationId: string;
  url: string;
  description: string | null;
  /** The signing secret, `whsec_...`: returned here once; only its sealed form is stored. */
  secret: string;
};

/**
 * Registers a URL that the organisation's notices are posted to. Refused when the URL is not
 * http(s) or its host resolves to an address that is not public (unless WEBHOOKS_ALLOW_PRIVATE).
 */
export async function addWebhookEndpoint(
  ctx: Ctx,
  input: { organizationId: string; url: string; description?: string },
): Promise<AddedWebhookEndpoint> {
  requireAdmin(ctx);
  const url = parseWebhookUrl(input.url);
  const description = input.description?.trim() || null;
  if (description !== null && (description.length > WEBHOOK_DESCRIPTION_MAX || !FREE_TEXT.test(description)))
    throw new AppError(
      "invalid_parameter",
      `A webhook description is at most ${WEBHOOK_DESCRIPTION_MAX} characters, without control characters.`,
    );
  await checkWebhookAddresses(url, env().WEBHOOKS_ALLOW_PRIVATE);
  const id = newId("whk");
  const secret = mintWebhookSecret();
  return withTx(ctx, async (tx) => {
    await requireOrganization(tx, input.organizationId);
    await tx.db.insert(webhookEndpoints).values({
      id,
      organizationId: input.organizationId,
      url: url.href,
      description,
      secretSealed: sealSecret(secret, id),
    });
    await recordAdminAction(tx, "webhook.add", id, { organizationId: input.organizationId, url: url.href });
    return { id, organizationId: input.organizationId, url: url.href, description, secret };
  });
}

export type WebhookEndpointRecord = {
  id: string;
  organization_id: string;
  organization_slug: string;
  url: string;
  description: string | null;
  created_at: Date;
  removed_at: Date | null;
};

/** The endpoints, oldest first; removed ones only when asked. Never the secret. */
export async function listWebhookEndpoints(
  ctx: Ctx,
  filter: { organizationId?: string; includeRemoved?: boolean } = {},
): Promise<WebhookEndpointRecord[]> {
  requireAdmin(ctx);
  const rows = await ctx.db
    .select({
      id: webhookEndpoints.id,
      organization_id: webhookEndpoints.organizationId,
      organization_slug: organizations.slug,
      url: webhookEndpoints.url,
      description: webhookEndpoints.description,
      created_at: webhookEndpoints.createdAt,
      removed_at: webhookEndpoints.removedAt,
    })
    .from(webhookEndpoints)
    .innerJoin(organizations, eq(organizations.id, webhookEndpoints.organizationId))
    .where(
      and(
        filter.organizationId ? eq(webhookEndpoints.organizationId, filter.organizationId) : undefined,
        filter.includeRemoved ? undefined : isNull(webhookEndpoints.removedAt),
      ),
    )
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
  return rows;
}

/**
 * Stops deliveries to an endpoint: nothing new is enqueued for it, and attempts still queued end
 * without sending. The row stays, so that its attempts keep naming it.
 */
export async function removeWebhookEndpoint(
  ctx: Ctx,
  input: { id: string; organizationId?: string },
): Promise<{ id: string; url: string }> {
  requireAdmin(ctx);
  return withTx(ctx, async (tx) => {
    const [found] = await tx.db
      .select()
      .from(webhookEndpoints)
      .where(
        and(
          eq(webhookEndpoints.id, input.id),
          input.organizationId ? eq(webhookEndpoints.organizationId, input.organizationId) : undefined,
        ),
      )
      .for("update");
    if (!found)
      throw new AppError(
        "not_found",
        `No webhook endpoint '${input.id}'${input.organizationId ? " of that organisation" : ""}.`,
      );
    if (found.removedAt) throw new AppError("invalid_parameter", "That webhook endpoint is already removed.");
    await tx.db.update(webhookEndpoints).set({ removedAt: new Date() }).where(eq(webhookEndpoints.id, found.id));
    await recordAdminAction(tx, "webhook.remove", found.id, { organizationId: found.organizationId, url: found.url });
    return { id: found.id, url: found.url };
  });
}
