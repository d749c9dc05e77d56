import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { DisclosureOverview } from "@/lib/disclosures/overview";
import { axisTicks } from "../charts/bar-chart";
import { OverviewView } from "./overview";

// The overview as it renders: every bar and row leads into the log with the search that counts
// it, and every figure can be read without the picture.

const overview: DisclosureOverview = {
  period: { from: "2026-12-30", to: "2027-01-12", granularity: "week" },
  totals: { entries: 10, episodes: 55, organizations: 2, recipients: 4, reviewer_previews: 1 },
  channels: [
    { channel: "api", entries: 7, episodes: 50 },
    { channel: "preview", entries: 3, episodes: 5 },
  ],
  series: [
    { start: "2026-12-30", end: "2027-01-03", label: "2026-W53", entries: 7, episodes: 40 },
    { start: "2027-01-04", end: "2027-01-10", label: "2027-W01", entries: 2, episodes: 14 },
    { start: "2027-01-11", end: "2027-01-12", label: "2027-W02", entries: 1, episodes: 1 },
  ],
  organizations: {
    top: [
      { organization: "acme", organization_name: "Acme <Robotics>", entries: 6, episodes: 30 },
      { organization: null, organization_name: null, entries: 1, episodes: 1 },
    ],
    count: 3,
    others: { entries: 3, episodes: 24 },
  },
  versions: {
    top: [{ dataset_id: "kitchen", version: "1.1.0", entries: 10, episodes: 55 }],
    count: 1,
    others: { entries: 0, episodes: 0 },
  },
  recipients: {
    top: [
      {
        kind: "api_key",
        label: "das_AbCdEfGh",
        detail: "ci key",
        organization: "acme",
        organization_name: "Acme <Robotics>",
        entries: 5,
        episodes: 29,
      },
      {
        kind: "user",
        label: "rev@example.com",
        detail: "reviewer",
        organization: null,
        organization_name: null,
        entries: 1,
        episodes: 1,
      },
    ],
    count: 2,
    others: { entries: 0, episodes: 0 },
  },
};

const html = renderToStaticMarkup(createElement(OverviewView, { overview }));
const text = html
  .replace(/<[^>]+>/g, " ")
  .replace(/&amp;/g, "&")
  .replace(/&lt;/g, "<")
  .replace(/&gt;/g, ">")
  .replace(/\s+/g, " ");

describe("OverviewView", () => {
  it("shows the period's totals", () => {
    expect(text).toContain("Disclosures 10 7 API · 3 preview");
    for (const figure of [
      "Disclosures 10",
      "Episodes disclosed 55",
      "Organisations 2",
      "Recipients 4",
      "Reviewer previews 1",
    ])
      expect(text).toContain(figure);
  });

  it("draws a linked bar per week in each chart, titled with its figure, and the same figures as a table", () => {
    for (const [from, to] of [
      ["2026-12-30", "2027-01-03"],
      ["2027-01-04", "2027-01-10"],
      ["2027-01-11", "2027-01-12"],
    ]) {
      // Two charts, each with its bar and its table row.
      expect(html.split(`href="/review/disclosures?from=${from}&amp;to=${to}"`).length - 1).toBe(4);
    }
    expect(html).toContain("<title>2026-W53 (2026-12-30 to 2027-01-03): 7 disclosures</title>");
    expect(html).toContain("<title>2027-W02 (2027-01-11 to 2027-01-12): 1 episode disclosed</title>");
    expect(html).toContain('aria-label="2027-W01 (2027-01-04 to 2027-01-10): 14 episodes disclosed"');
    expect(html.match(/<svg[^>]*role="group"/g)).toHaveLength(2);
    // The bars stay out of the tab order; the tables' links (one per bar) are the keyboard's.
    expect(html.match(/<a [^>]*tabindex="-1"/g)).toHaveLength(6);
    expect(
      html.match(/<a [^>]*href="\/review\/disclosures\?from=[^>]*>/g)!.filter((a) => !a.includes("tabindex")),
    ).toHaveLength(6);
    expect(text).toContain("Disclosures per week");
    expect(text).toContain("Episodes disclosed per week");
  });

  it("leads each organisation, version and recipient into the log for the period, escaped", () => {
    expect(html).toContain('href="/review/disclosures?org=acme&amp;from=2026-12-30&amp;to=2027-01-12"');
    // Reviewers' previews, which no organisation holds, lead to the search for no organisation.
    expect(html).toContain('href="/review/disclosures?org=-&amp;from=2026-12-30&amp;to=2027-01-12"');
    expect(html).toContain(
      'href="/review/disclosures?dataset=kitchen&amp;version=1.1.0&amp;from=2026-12-30&amp;to=2027-01-12"',
    );
    expect(html).toContain(
      'href="/review/disclosures?key=das_AbCdEfGh&amp;org=acme&amp;from=2026-12-30&amp;to=2027-01-12"',
    );
    expect(html).toContain('href="/review/disclosures?user=rev%40example.com&amp;from=2026-12-30&amp;to=2027-01-12"');
    expect(html).toContain("Acme &lt;Robotics&gt;");
    expect(html).not.toContain("<Robotics>");
  });

  it("counts reviewers' previews under their own name, and sums the organisations not listed", () => {
    expect(text).toMatch(/Reviewer previews each reviewer under Top recipients 1 1/);
    expect(text).toContain("1 more organisation 3 24");
  });

  it("says so when nothing was disclosed", () => {
    const empty: DisclosureOverview = {
      ...overview,
      totals: { entries: 0, episodes: 0, organizations: 0, recipients: 0, reviewer_previews: 0 },
      channels: [],
      series: overview.series.map((b) => ({ ...b, entries: 0, episodes: 0 })),
      organizations: { top: [], count: 0, others: { entries: 0, episodes: 0 } },
      versions: { top: [], count: 0, others: { entries: 0, episodes: 0 } },
      recipients: { top: [], count: 0, others: { entries: 0, episodes: 0 } },
    };
    const emptyHtml = renderToStaticMarkup(createElement(OverviewView, { overview: empty }));
    expect(emptyHtml.split("Nothing was disclosed in this period.").length - 1).toBe(3);
    // The bars are still there, at zero, and still lead into the log.
    expect(emptyHtml).toContain("<title>2026-W53 (2026-12-30 to 2027-01-03): 0 disclosures</title>");
  });
});

describe("axisTicks", () => {
  it.each([
    [0, [0, 1]],
    [1, [0, 1]],
    [3, [0, 1, 2, 3]],
    [7, [0, 2, 4, 6, 8]],
    [10, [0, 2, 4, 6, 8, 10]],
    [1234, [0, 500, 1000, 1500]],
    [98_765, [0, 20_000, 40_000, 60_000, 80_000, 100_000]],
  ])("reach at least %d at round numbers", (max, ticks) => {
    expect(axisTicks(max)).toEqual(ticks);
  });
});
