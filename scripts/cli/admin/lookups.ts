// The organisations and versions commands name, looked up so that a wrong one is refused with the
// names there are (licence, key, webhook, user and disclosures commands).
import type { Ctx } from "@/lib/context";
import { AppError } from "@/lib/errors";
import { choices } from "../listing";
import { verbs } from "./session";

/** The organisation of a slug, or a refusal that names the slugs there are. */
export async function organization(ctx: Ctx, slug: string) {
  try {
    return await verbs.organizationBySlug(ctx, slug);
  } catch (error) {
    if (!(error instanceof AppError && error.code === "not_found")) throw error;
    const slugs = (await verbs.listOrganizations(ctx)).map((o) => o.slug);
    throw new AppError(
      "not_found",
      slugs.length
        ? `No organisation '${slug}'. The organisations are: ${choices(slugs)} (das-admin org list).`
        : `No organisation '${slug}': there are none yet. das-admin org create ${slug} makes it.`,
    );
  }
}

/** Checks that a dataset has the version, or refuses naming the datasets or versions there are. */
export async function releasedVersion(ctx: Ctx, datasetId: string, version: string): Promise<void> {
  const all = await verbs.listVersionChoices(ctx);
  const versions = all.filter((v) => v.dataset_id === datasetId).map((v) => v.version);
  if (versions.includes(version)) return;
  if (versions.length)
    throw new AppError(
      "not_found",
      `Dataset '${datasetId}' has no version '${version}'. Its versions are: ${choices(versions)}.`,
    );
  const datasets = [...new Set(all.map((v) => v.dataset_id))];
  throw new AppError(
    "not_found",
    datasets.length
      ? `No dataset '${datasetId}'. The datasets are: ${choices(datasets)} (das-admin dataset list shows their versions).`
      : `No dataset '${datasetId}': none is imported yet (das-admin import DIR).`,
  );
}

/** The organisation of --org when it is given. */
export const organizationIfGiven = (ctx: Ctx, slug: string | undefined) =>
  slug ? organization(ctx, slug) : Promise.resolve(undefined);
