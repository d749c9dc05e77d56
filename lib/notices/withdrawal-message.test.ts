import { describe, expect, it } from "vitest";
import { withdrawalMessage, type WithdrawalNoticeRow } from "./withdrawal-message";

// What a withdrawal notice's webhook and email say, as the worker writes them at each attempt.

const notice: WithdrawalNoticeRow = {
  notice_id: "nt_0123456789abcdef0123456789abcdef",
  created_at: new Date("2026-11-20T08:30:00.123Z"),
  withdrawal_id: "wd_abc",
  episode_ids: ["ep-1", "ep-7"],
  deliveries: [
    {
      download_id: "dl_1",
      seq: 42,
      occurred_at: "2026-11-01T10:00:00.000Z",
      channel: "api",
      dataset_id: "kitchen",
      version: "1.0.0",
      episode_ids: ["ep-1", "ep-7"],
    },
  ],
};

describe("a withdrawal notice's message", () => {
  it("is the notice as the API shows it when first written, and an email naming its episodes", () => {
    const { payload, email } = withdrawalMessage(notice, {});
    // Key order is the body's byte order: the API's.
    expect(Object.keys(payload)).toEqual([
      "notice_id",
      "kind",
      "created_at",
      "withdrawal_id",
      "episode_ids",
      "deliveries",
    ]);
    expect(payload).toEqual({
      notice_id: notice.notice_id,
      kind: "withdrawal",
      created_at: "2026-11-20T08:30:00.123Z",
      withdrawal_id: "wd_abc",
      episode_ids: ["ep-1", "ep-7"],
      deliveries: notice.deliveries,
    });
    expect(email.subject).toBe("Dataset Access Service: 2 episode(s) you received were withdrawn");
    expect(email.text).toContain(`acknowledge notice ${notice.notice_id}`);
    expect(email.text.endsWith("Episodes: ep-1, ep-7\n")).toBe(true);
  });

  it("counts the reminder it is, and says so in the email", () => {
    const { payload, email } = withdrawalMessage(
      { ...notice, episode_ids: ["ep-1"] },
      { reminder: { number: 2, remindedAt: "2026-12-04T09:00:00.000Z" } },
    );
    expect(payload).toMatchObject({
      episode_ids: ["ep-1"],
      acknowledged_at: null,
      reminders: 2,
      last_reminded_at: "2026-12-04T09:00:00.000Z",
    });
    expect(email.subject).toBe(
      `Reminder: Dataset Access Service notice ${notice.notice_id} (1 withdrawn episode) is not acknowledged`,
    );
    expect(email.text).toMatch(/^On 2026-11-20 your organisation was told .* \(reminder 2\)\./);
  });
});
