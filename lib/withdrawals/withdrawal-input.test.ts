import { describe, expect, it } from "vitest";
import { MAX_NAMED_EPISODES, parseWithdrawal, WITHDRAWAL_REASON_MAX, withdrawalProblems } from "./withdrawal-input";

// The one schema every caller of the withdrawal parses (the verb, das-admin withdraw, the portal's
// actions and form): what it takes, and the sentence each broken rule reads as.

const problems = (input: unknown) => withdrawalProblems(input).map((p) => [p.field, p.message]);

describe("a withdrawal's input", () => {
  it("takes a contributor or named episodes, trimmed, each id once", () => {
    expect(parseWithdrawal({ contributor: " operator-17 ", reason: " consent withdrawn\n" })).toEqual({
      contributor: "operator-17",
      reason: "consent withdrawn",
    });
    expect(parseWithdrawal({ episodeIds: ["ep-2", "ep-1", "ep-2"], datasetId: "kpp", reason: "r" })).toEqual({
      episodeIds: ["ep-2", "ep-1"],
      datasetId: "kpp",
      reason: "r",
    });
  });

  it("names each field's first problem, in a sentence", () => {
    expect(problems({ contributor: "a", reason: "  " })).toEqual([
      ["reason", "A withdrawal needs a reason: say why, for the record (recipients are not shown it)."],
    ]);
    expect(problems({ contributor: "a", episodeIds: ["ep-1"], reason: "r" })).toEqual([
      [null, "Withdraw either a contributor's episodes or named episodes: one of the two."],
    ]);
    expect(problems({ contributor: "a", datasetId: "kpp", reason: "r" })).toEqual([
      [null, "A dataset narrows named episodes only: a contributor's are taken from every dataset."],
    ]);
    expect(problems({ episodeIds: [], reason: "r" })).toEqual([
      ["episodeIds", "Name at least one episode to withdraw."],
    ]);
    expect(problems({ episodeIds: ["not an id!"], reason: "r" })).toEqual([
      ["episodeIds", "'not an id!' is not an episode id."],
    ]);
    expect(problems({ contributor: "a", reason: "x".repeat(WITHDRAWAL_REASON_MAX + 1) })).toEqual([
      ["reason", "A withdrawal's reason is at most 2,000 characters."],
    ]);
    const many = Array.from({ length: MAX_NAMED_EPISODES + 1 }, (_, i) => `ep-${i}`);
    expect(problems({ episodeIds: many, reason: "r" })).toEqual([
      ["episodeIds", "At most 10,000 episodes can be named in one withdrawal (10,001 given)."],
    ]);
  });

  it("refuses a broken rule as invalid_parameter and a value of the wrong type as invalid_body", () => {
    expect(() => parseWithdrawal({ contributor: "a", reason: "" })).toThrow(
      expect.objectContaining({ code: "invalid_parameter" }),
    );
    expect(() => parseWithdrawal({ episodeIds: "ep-1", reason: "r" })).toThrow(
      expect.objectContaining({ code: "invalid_body", message: expect.stringContaining("'episodeIds'") }),
    );
  });
});
