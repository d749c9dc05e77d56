import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { addTerms } from "@/lib/admin/terms";
import { setDatasetListing } from "@/lib/admin/listing";
import { approveAccessRequest, listAccessRequests, rejectAccessRequest } from "@/lib/admin/access-requests";
import { applicableTerms, listOwnRequests, requestAccess } from "@/lib/catalog/access-requests";
import { listedDatasets, portalDataset, portalVersionStatistics } from "@/lib/catalog/listing";
import { getDataset } from "@/lib/catalog/list-datasets";
import { AppError } from "@/lib/errors";
import { apiKeyCaller, ctxOf, userOfRole } from "@/lib/testing/admin";
import { call } from "@/lib/testing/http";
import { expectError } from "@/lib/testing/expect-api";
import {
  createTestKey,
  createTestOrg,
  importTestDataset,
  operatorCtx,
  randomEpisodes,
  uniqueId,
} from "@/lib/testing/fixtures";
import * as api from "../../app/api/[[...path]]/route";

// Listed datasets and access requests through the verbs, on a real database; the API's answers
// through its real route handlers.

const sql = () => getDb().$client;

async function world() {
  const org = await createTestOrg();
  const episodes = randomEpisodes(3, 5151);
  const files = episodes.map((e) => ({
    path: `${e.episode_id}/cam.mp4`,
    episode_id: e.episode_id,
    stream: "cam",
    size_bytes: 10,
    sha256: "e".repeat(64),
  }));
  const datasetId = await importTestDataset([
    { version: "1.0.0", episodes, files },
    { version: "1.1.0", episodes, files },
  ]);
  const member = await userOfRole("licensee", org.id);
  const key = await createTestKey(org.id);
  return { org, datasetId, member: ctxOf(member), memberUser: member, key: key.secret };
}

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
};

describe("a dataset's listing", () => {
  it("is unlisted by default: a member outside its licences sees nothing of it and cannot request it", async () => {
    const w = await world();
    expect((await refusal(portalDataset(w.member, w.datasetId))).code).toBe("not_found");
    expect((await listedDatasets(w.member)).map((d) => d.dataset_id)).not.toContain(w.datasetId);
    expect((await refusal(applicableTerms(w.member, w.datasetId))).code).toBe("not_found");
    const terms = await addTerms(operatorCtx(), { title: "T", body: `terms ${uniqueId("t")}`, datasetId: w.datasetId });
    const asked = await refusal(
      requestAccess(w.member, {
        datasetId: w.datasetId,
        version: "1.0.0",
        purpose: "research",
        termsSha256: terms.document.sha256,
      }),
    );
    expect(asked.code).toBe("not_found");
    expect(asked.message).toBe("No such dataset is available to you.");
  });

  it("listed, shows its catalog facts and charts to any member, and nothing more to the API", async () => {
    const w = await world();
    await setDatasetListing(operatorCtx(), { datasetId: w.datasetId, listing: "listed" });
    const listed = (await listedDatasets(w.member)).find((d) => d.dataset_id === w.datasetId)!;
    expect(listed.versions.map((v) => [v.version, v.episode_count])).toEqual([
      ["1.1.0", 3],
      ["1.0.0", 3],
    ]);
    const shown = await portalDataset(w.member, w.datasetId);
    expect(shown.listed).toBe(true);
    expect(shown.versions.map((v) => v.licensed)).toEqual([false, false]);
    const stats = await portalVersionStatistics(w.member, { datasetId: w.datasetId, version: "1.0.0" });
    expect(stats.episode_count).toBe(3);
    // The API's rule is unchanged: a key of an organisation without a licence gets the 404.
    expectError(await call(api.GET, `/api/v1/datasets/${w.datasetId}`, { key: w.key }), 404, "not_found");
    expectError(await call(api.GET, `/api/v1/datasets/${w.datasetId}/versions`, { key: w.key }), 404, "not_found");
    expect((await refusal(getDataset(ctxOf(await apiKeyCaller(w.org.id)), w.datasetId))).code).toBe("not_found");
    // Keys and users without an organisation cannot use the listing at all.
    for (const caller of [await apiKeyCaller(w.org.id), await userOfRole("reviewer"), await userOfRole("admin")])
      expect((await refusal(listedDatasets(ctxOf(caller)))).code).toBe("forbidden");
  });

  it("unlisting hides it again, and only an admin changes it, audited once per change", async () => {
    const w = await world();
    expect(await setDatasetListing(operatorCtx(), { datasetId: w.datasetId, listing: "listed" })).toMatchObject({
      changed: true,
    });
    expect(await setDatasetListing(operatorCtx(), { datasetId: w.datasetId, listing: "listed" })).toMatchObject({
      changed: false,
    });
    await setDatasetListing(operatorCtx(), { datasetId: w.datasetId, listing: "unlisted" });
    expect((await refusal(portalDataset(w.member, w.datasetId))).code).toBe("not_found");
    const audit =
      await sql()`select details from admin_audit where action = 'dataset.listing' and target_id = ${w.datasetId} order by occurred_at`;
    expect(audit.map((a) => a.details)).toEqual([
      { listing: "listed", previous: "unlisted" },
      { listing: "unlisted", previous: "listed" },
    ]);
    expect((await refusal(setDatasetListing(w.member, { datasetId: w.datasetId, listing: "listed" }))).code).toBe(
      "forbidden",
    );
  });
});

describe("an access request", () => {
  async function listedWorld() {
    const w = await world();
    await setDatasetListing(operatorCtx(), { datasetId: w.datasetId, listing: "listed" });
    const global = await addTerms(operatorCtx(), { title: "Global", body: `global ${uniqueId("g")}` });
    const own = await addTerms(operatorCtx(), {
      title: "For this dataset",
      body: `# Terms\n\nfor ${w.datasetId}`,
      datasetId: w.datasetId,
    });
    return { ...w, global: global.document.sha256, terms: own.document.sha256 };
  }

  it("is made under the dataset's own terms, accepted as read; changed terms must be read again", async () => {
    const w = await listedWorld();
    expect((await applicableTerms(w.member, w.datasetId))?.sha256).toBe(w.terms);
    const stale = await refusal(
      requestAccess(w.member, { datasetId: w.datasetId, version: "1.0.0", purpose: "x", termsSha256: w.global }),
    );
    expect(stale.message).toMatch(/terms have changed/);
    for (const purpose of ["", "  ", "a\u0000b", "x".repeat(2001)])
      expect(
        (
          await refusal(
            requestAccess(w.member, { datasetId: w.datasetId, version: "1.0.0", purpose, termsSha256: w.terms }),
          )
        ).code,
      ).toBe("invalid_parameter");
    expect(
      (
        await refusal(
          requestAccess(w.member, { datasetId: w.datasetId, version: "9.9.9", purpose: "p", termsSha256: w.terms }),
        )
      ).code,
    ).toBe("not_found");
    expect(await sql()`select 1 from terms_acceptances where user_id = ${w.memberUser.userId}`).toHaveLength(0);
  });

  it("approved, becomes a licence under the accepted terms that a key of the organisation downloads with", async () => {
    const w = await listedWorld();
    const made = await requestAccess(w.member, {
      datasetId: w.datasetId,
      version: "1.0.0",
      purpose: "Training a grasping policy",
      termsSha256: w.terms,
    });
    // One pending request per organisation and version.
    const again = await refusal(
      requestAccess(w.member, { datasetId: w.datasetId, version: "1.0.0", purpose: "again", termsSha256: w.terms }),
    );
    expect(again.message).toMatch(/already has a pending request/);
    const [acceptance] = await sql()`select * from terms_acceptances where id = ${made.acceptance_id}`;
    expect(acceptance).toMatchObject({
      user_id: w.memberUser.userId,
      organization_id: w.org.id,
      terms_sha256: w.terms,
    });
    const queued = (await listAccessRequests(operatorCtx(), { status: "pending" })).find((r) => r.id === made.id)!;
    expect(queued).toMatchObject({ status: "pending", terms_sha256: w.terms, version: "1.0.0" });
    // Before the decision, the key has nothing.
    const download = () =>
      call(api.POST, "/api/v1/downloads", {
        key: w.key,
        method: "POST",
        body: { dataset_id: w.datasetId, version: "1.0.0" },
      });
    expectError(await download(), 404, "not_found");

    const endsAt = new Date(Date.now() + 30 * 86_400_000);
    const approved = await approveAccessRequest(operatorCtx(), { id: made.id, endsAt });
    const [licence] = await sql()`select * from licences where id = ${approved.licence_id}`;
    expect(licence).toMatchObject({ organization_id: w.org.id, terms_sha256: w.terms, revoked_at: null });
    expect((licence!.ends_at as Date).getTime()).toBe(endsAt.getTime());
    const [request] = await sql()`select * from access_requests where id = ${made.id}`;
    expect(request).toMatchObject({
      status: "approved",
      licence_id: approved.licence_id,
      acceptance_id: made.acceptance_id,
    });
    const res = await download();
    expect(res.status).toBe(201);
    expect(res.json.file_count).toBe(3);
    // Decided once.
    expect((await refusal(approveAccessRequest(operatorCtx(), { id: made.id }))).message).toMatch(/already approved/);
    expect((await refusal(rejectAccessRequest(operatorCtx(), { id: made.id, reason: "no" }))).code).toBe(
      "invalid_parameter",
    );
    // Held now: no second request.
    expect(
      (
        await refusal(
          requestAccess(w.member, { datasetId: w.datasetId, version: "1.0.0", purpose: "p", termsSha256: w.terms }),
        )
      ).message,
    ).toMatch(/already holds a licence/);
    const audit =
      await sql()`select action from admin_audit where target_id in (${made.id}, ${approved.licence_id}) order by occurred_at`;
    expect(audit.map((a) => a.action).sort()).toEqual(["licence.grant", "request.approve"]);
  });

  it("rejected, shows its reason to the requester's organisation, and leaves no licence", async () => {
    const w = await listedWorld();
    const made = await requestAccess(w.member, {
      datasetId: w.datasetId,
      version: "1.1.0",
      purpose: "Benchmarking",
      termsSha256: w.terms,
    });
    expect((await refusal(rejectAccessRequest(operatorCtx(), { id: made.id, reason: "  " }))).code).toBe(
      "invalid_parameter",
    );
    await rejectAccessRequest(operatorCtx(), { id: made.id, reason: "Commercial use is not covered." });
    const colleague = ctxOf(await userOfRole("licensee", w.org.id));
    const seen = (await listOwnRequests(colleague)).find((r) => r.id === made.id)!;
    expect(seen).toMatchObject({
      status: "rejected",
      rejection_reason: "Commercial use is not covered.",
      licence_id: null,
    });
    const outsider = ctxOf(await userOfRole("licensee", (await createTestOrg()).id));
    expect((await listOwnRequests(outsider)).map((r) => r.id)).not.toContain(made.id);
    expect(await sql()`select 1 from licences where organization_id = ${w.org.id}`).toHaveLength(0);
    // A new request may follow a rejection.
    await requestAccess(w.member, { datasetId: w.datasetId, version: "1.1.0", purpose: "again", termsSha256: w.terms });
  });

  it("is refused to keys and to users outside an organisation, and deciding is for admins", async () => {
    const w = await listedWorld();
    const input = { datasetId: w.datasetId, version: "1.0.0", purpose: "p", termsSha256: w.terms };
    for (const caller of [await apiKeyCaller(w.org.id), await userOfRole("admin"), await userOfRole("reviewer")])
      expect((await refusal(requestAccess(ctxOf(caller), input))).code).toBe("forbidden");
    const made = await requestAccess(w.member, input);
    expect((await refusal(approveAccessRequest(w.member, { id: made.id }))).code).toBe("forbidden");
    expect((await refusal(rejectAccessRequest(w.member, { id: made.id, reason: "r" }))).code).toBe("forbidden");
    expect((await refusal(listAccessRequests(w.member))).code).toBe("forbidden");
  });
});

describe("the database", () => {
  it("refuses to change or delete an acceptance, a terms document, or a request other than by deciding it once", async () => {
    const w = await world();
    await setDatasetListing(operatorCtx(), { datasetId: w.datasetId, listing: "listed" });
    const terms = (await addTerms(operatorCtx(), { title: "T", body: `t ${uniqueId("t")}`, datasetId: w.datasetId }))
      .document.sha256;
    const made = await requestAccess(w.member, {
      datasetId: w.datasetId,
      version: "1.0.0",
      purpose: "p",
      termsSha256: terms,
    });
    const refused = (query: Promise<unknown>) => expect(query).rejects.toThrow(/append-only|immutable|decided once/);
    await refused(
      sql()`update terms_acceptances set accepted_at = now() - interval '1 day' where id = ${made.acceptance_id}`,
    );
    await refused(sql()`delete from terms_acceptances where id = ${made.acceptance_id}`);
    await refused(sql()`update terms_documents set title = 'changed' where sha256 = ${terms}`);
    await refused(sql()`delete from terms_documents where sha256 = ${terms}`);
    await refused(sql()`delete from access_requests where id = ${made.id}`);
    await refused(sql()`update access_requests set purpose = 'rewritten' where id = ${made.id}`);
    await rejectAccessRequest(operatorCtx(), { id: made.id, reason: "no" });
    await refused(sql()`update access_requests set rejection_reason = 'softer' where id = ${made.id}`);
    await refused(
      sql()`update access_requests set status = 'pending', decided_at = null, decided_by = null, rejection_reason = null where id = ${made.id}`,
    );
    const [kept] = await sql()`select status, rejection_reason, purpose from access_requests where id = ${made.id}`;
    expect(kept).toEqual({ status: "rejected", rejection_reason: "no", purpose: "p" });
  });
});
