import { describe, expect, it } from "vitest";
import { uniqueId } from "@/lib/testing/fixtures";
import { expectIndistinguishable, expectOk } from "@/lib/testing/expect-api";
import {
  body,
  datasetId,
  download,
  expectRefused,
  hiddenEpisode,
  hiddenId,
  ids,
  ourEntries,
  setUpDownloadFixture,
} from "@/lib/testing/create-download-fixture";

// Hostile input to POST /api/v1/downloads and what a key may not learn: malformed and oversized
// bodies, control characters that once reached PostgreSQL, framings other than JSON, a bad
// Idempotency-Key, and a dataset licensed only to another organisation, answered exactly as one
// that does not exist. Each refused with the stable envelope and nothing in the disclosure log.

setUpDownloadFixture();

describe("POST /api/v1/downloads: hostile bodies", () => {
  const INVALID: [string, () => unknown, RegExp][] = [
    [
      "episode_ids and filter together",
      () => body({ episode_ids: [ids[0]!], filter: { outcome: "success" } }),
      /not both/,
    ],
    ["a repeated episode id", () => body({ episode_ids: [ids[0]!, ids[1]!, ids[0]!] }), /episode_ids.*repeat/],
    ["a repeated stream", () => body({ streams: ["cam", "cam"] }), /streams.*repeat/],
    ["empty episode_ids", () => body({ episode_ids: [] }), /episode_ids.*at least one/],
    ["empty streams", () => body({ streams: [] }), /streams.*at least one/],
    ["an empty filter", () => body({ filter: {} }), /'filter': needs at least one field/],
    ["an unknown field", () => ({ ...body(), episodes: [ids[0]] }), /episodes/],
    // zod's message for the filter object covers its unknown keys: it names the fields it takes.
    [
      "an unknown filter field",
      () => body({ filter: { outcome: "success", contributors: "c1" } as never }),
      /'filter': must be an object with any of outcome, environment, task, contributor, has_recovery, min_duration_s, max_duration_s/,
    ],
    ["has_recovery as a string", () => body({ filter: { has_recovery: "true" } as never }), /has_recovery/],
    [
      "a negative duration",
      () => body({ filter: { min_duration_s: -1 } }),
      /'filter.min_duration_s': must not be negative/,
    ],
    ["a duration as a string", () => body({ filter: { max_duration_s: "30" } as never }), /max_duration_s/],
    [
      "a duration range whose minimum exceeds its maximum",
      () => body({ filter: { min_duration_s: 30, max_duration_s: 10 } }),
      /'filter.min_duration_s': must not exceed max_duration_s/,
    ],
    ["an empty task", () => body({ filter: { task: "" } }), /task/],
    ["an unknown field beside a valid scope", () => ({ ...body({ streams: ["cam"] }), stream: "cam" }), /stream/],
    ["no dataset_id", () => ({ version: "1.0.0" }), /dataset_id/],
    ["no version", () => ({ dataset_id: datasetId }), /version/],
    ["a numeric dataset_id", () => ({ dataset_id: 7, version: "1.0.0" }), /dataset_id/],
    ["episode_ids as a string", () => ({ ...body(), episode_ids: ids[0] }), /episode_ids/],
    ["a numeric episode id", () => ({ ...body(), episode_ids: [1] }), /episode_ids/],
    ["an empty episode id", () => ({ ...body(), episode_ids: [""] }), /episode_ids/],
    // A NUL once reached PostgreSQL, which cannot compare it, and answered 500.
    [
      "an episode id with a NUL",
      () => ({ ...body(), episode_ids: [ids[0]!, "x\u0000"] }),
      /'episode_ids.1': must not contain control characters/,
    ],
    [
      "an episode id with a control character",
      () => ({ ...body(), episode_ids: [`${ids[0]!}\n`] }),
      /'episode_ids.0': must not contain control characters/,
    ],
    [
      "a dataset_id with a NUL",
      () => ({ ...body(), dataset_id: `${datasetId}\u0000` }),
      /'dataset_id': must not contain control characters/,
    ],
    [
      "a version with a NUL",
      () => ({ ...body(), version: "1.0.0\u0000" }),
      /'version': must not contain control characters/,
    ],
    ["a stream name with a slash", () => body({ streams: ["../cam"] }), /streams/],
    ["filter as a string", () => ({ ...body(), filter: "outcome=success" }), /filter/],
    ["an empty outcome", () => body({ filter: { outcome: "" } }), /outcome/],
    ["a JSON array", () => [body()], /body/i],
    ["JSON null", () => null, /body/i],
    ["a JSON string", () => JSON.stringify(JSON.stringify(body())), /body/i],
  ];

  it.each(INVALID)("refuses %s with 400 invalid_body naming the problem", async (_, make, message) => {
    const before = (await ourEntries()).length;
    const sent = make();
    const res = await download(typeof sent === "string" ? sent : JSON.stringify(sent));
    await expectRefused(res, 400, "invalid_body", before);
    expect(res.json.error.message).toMatch(message);
  });

  it("refuses a body that is not JSON, or not sent as JSON", async () => {
    const before = (await ourEntries()).length;
    const valid = JSON.stringify(body());
    for (const text of [
      "{",
      "",
      "dataset_id=x&version=1.0.0",
      `${valid}}`,
      `${valid} trailing`,
      "{'dataset_id': 'x'}",
    ]) {
      const res = await download(text);
      await expectRefused(res, 400, "invalid_body", before);
      expect(res.json.error.message, text).toMatch(/JSON/);
    }
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonp",
      "json",
    ]) {
      const res = await download(valid, { "content-type": type });
      await expectRefused(res, 400, "invalid_body", before);
      expect(res.json.error.message, type).toContain("Content-Type: application/json");
    }
    // The same body sent as JSON is fine: the refusals above were the framing's doing.
    expectOk(await download(valid, { "content-type": "application/json; charset=utf-8" }), 201);
  });

  it("answers a bad Idempotency-Key with 400 invalid_parameter", async () => {
    const before = (await ourEntries()).length;
    for (const value of ["", "two words", "x".repeat(256), "tab\tinside", "caf\u00e9"]) {
      const res = await download(body(), { "idempotency-key": value });
      await expectRefused(res, 400, "invalid_parameter", before);
      expect(res.json.error.message).toContain("Idempotency-Key");
    }
    expectOk(await download(body(), { "idempotency-key": "x".repeat(255) }), 201);
  });
});

describe("POST /api/v1/downloads: what another organisation's dataset gives away", () => {
  it("answers an invisible dataset exactly as a missing one, whatever the scope", async () => {
    const before = (await ourEntries()).length;
    const missing = uniqueId("ds");
    for (const scope of [{}, { episode_ids: [hiddenEpisode] }, { streams: ["cam"] }]) {
      const hidden = await download({ dataset_id: hiddenId, version: "1.0.0", ...scope });
      const absent = await download({ dataset_id: missing, version: "1.0.0", ...scope });
      await expectRefused(hidden, 404, "not_found", before);
      await expectRefused(absent, 404, "not_found", before);
      expectIndistinguishable(hidden, absent);
      expect(hidden.text).not.toContain(hiddenId);
      expect(hidden.text).not.toContain(hiddenEpisode);
    }
  });
});
