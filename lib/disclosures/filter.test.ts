import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { disclosureFilter, entryConditions, parseTimeBound, searchQuery, type DisclosureFilter } from "./filter";

// The one filter of the log: what the portal's search, its exports and `das-admin disclosures
// export` mean by each field. The time range is closed: `from` and `to` both include their ends.

const at = (iso: string) => new Date(iso);

describe("parseTimeBound", () => {
  it("reads a date as its whole UTC day and an instant with its zone as itself", () => {
    expect(parseTimeBound("2026-11-21")).toEqual({ at: at("2026-11-21T00:00:00Z"), wholeDay: true });
    expect(parseTimeBound("2026-11-21T09:30:00Z")).toEqual({ at: at("2026-11-21T09:30:00Z"), wholeDay: false });
    expect(parseTimeBound("2026-11-21T09:30Z")).toEqual({ at: at("2026-11-21T09:30:00Z"), wholeDay: false });
    expect(parseTimeBound("2026-11-21T09:30:00.250+01:00")).toEqual({
      at: at("2026-11-21T08:30:00.250Z"),
      wholeDay: false,
    });
    expect(parseTimeBound("2024-02-29")).toEqual({ at: at("2024-02-29T00:00:00Z"), wholeDay: true });
  });

  it.each([
    ["yesterday"],
    ["1"],
    ["12/01/2026"],
    ["2026-13-45"],
    ["2026-02-30"],
    ["2025-02-29"],
    ["2026-11-21T25:00:00Z"],
    // An instant without its zone would mean whatever zone the reading machine is in.
    ["2026-11-21T09:30:00"],
    ["2026-11-21 09:30:00Z"],
    [" 2026-11-21"],
    [""],
  ])("refuses %j", (text) => {
    expect(parseTimeBound(text)).toBeNull();
  });

  it("never accepts a date that is not on the calendar", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1970, max: 2200 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 31 }),
        (y, m, d) => {
          const text = `${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
          const real = new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d;
          expect(parseTimeBound(text) !== null).toBe(real);
        },
      ),
    );
  });
});

describe("disclosureFilter", () => {
  it("turns a search into a filter: trimmed text, the organisation by slug, from and to as a closed range", () => {
    const { filter, problems } = disclosureFilter({
      org: " acme ",
      key: "das_AbCdEfGh",
      user: "Alice@Example.com",
      dataset: "kitchen-pick-place",
      version: "1.1.0",
      from: "2026-11-01",
      to: "2026-11-21",
      episode: "kpp-000042",
      contributor: "op-7",
    });
    expect(problems).toEqual([]);
    expect(filter).toEqual({
      organization: "acme",
      apiKeyPrefix: "das_AbCdEfGh",
      userEmail: "Alice@Example.com",
      datasetId: "kitchen-pick-place",
      version: "1.1.0",
      from: at("2026-11-01T00:00:00Z"),
      // The whole of 21 November: everything before the 22nd begins.
      to: { beforeDay: at("2026-11-22T00:00:00Z") },
      episodeId: "kpp-000042",
      contributor: "op-7",
    });
  });

  it("keeps an instant `to` as an inclusive end", () => {
    expect(disclosureFilter({ to: "2026-11-21T09:30:00Z" }).filter.to).toEqual({ through: at("2026-11-21T09:30:00Z") });
  });

  it("leaves out empty and blank fields", () => {
    const { filter, problems } = disclosureFilter({ org: "", key: "  ", from: " ", to: undefined });
    expect(problems).toEqual([]);
    expect(Object.values(filter).filter((v) => v !== undefined)).toEqual([]);
  });

  it("allows a range of one day or one instant, and names a range that starts after it ends", () => {
    expect(disclosureFilter({ from: "2026-11-21", to: "2026-11-21" }).problems).toEqual([]);
    expect(disclosureFilter({ from: "2026-11-21T09:30:00Z", to: "2026-11-21T09:30:00Z" }).problems).toEqual([]);
    expect(disclosureFilter({ from: "2026-11-21T23:59:59Z", to: "2026-11-21" }).problems).toEqual([]);
    expect(disclosureFilter({ from: "2026-11-22", to: "2026-11-21" }).problems).toEqual(["From must not be after To."]);
    expect(disclosureFilter({ from: "2026-11-21T09:30:01Z", to: "2026-11-21T09:30:00Z" }).problems).toEqual([
      "From must not be after To.",
    ]);
  });

  it("names every field that is not a date or an instant, and every one with a control character", () => {
    expect(disclosureFilter({ from: "yesterday", to: "2026-02-30" }).problems).toEqual([
      "From must be a date like 2026-11-21 or an instant like 2026-11-21T09:30:00Z.",
      "To must be a date like 2026-11-21 or an instant like 2026-11-21T09:30:00Z.",
    ]);
    expect(disclosureFilter({ org: "a\u0000b", contributor: "x\ny" }).problems).toEqual([
      "Organisation must not contain control characters.",
      "Contributor must not contain control characters.",
    ]);
  });
});

describe("disclosureFilter: the channel", () => {
  it("takes api, portal, preview or hub, and names the choices for anything else", () => {
    for (const channel of ["api", "portal", "preview", "hub"] as const)
      expect(disclosureFilter({ channel })).toEqual({ filter: expect.objectContaining({ channel }), problems: [] });
    expect(disclosureFilter({ channel: " preview " }).filter.channel).toBe("preview");
    expect(disclosureFilter({ channel: "" }).filter.channel).toBeUndefined();
    for (const channel of ["email", "API", "previews"]) {
      expect(disclosureFilter({ channel }).problems, channel).toEqual([
        "Channel must be one of api, portal, preview, hub.",
      ]);
    }
  });
});

describe("entryConditions: the range as the database applies it", () => {
  // Entries on either side of every edge, to the microsecond (the column's precision).
  const TIMES = [
    "2026-11-20T23:59:59.999999Z",
    "2026-11-21T00:00:00Z",
    "2026-11-21T09:29:59.999999Z",
    "2026-11-21T09:30:00Z",
    "2026-11-21T09:30:00.000001Z",
    "2026-11-21T23:59:59.999999Z",
    "2026-11-22T00:00:00Z",
  ];

  async function matching(search: Parameters<typeof disclosureFilter>[0]): Promise<string[]> {
    const { filter, problems } = disclosureFilter(search);
    expect(problems).toEqual([]);
    return select(filter);
  }

  async function select(filter: DisclosureFilter): Promise<string[]> {
    const sql = getDb().$client;
    const rows = await sql<{ t: string }[]>`
      select to_char(d.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') as t
      from unnest(string_to_array(${TIMES.join(",")}, ',')::timestamptz[]) as d(occurred_at)
      where ${entryConditions(sql, filter, null)}
      order by d.occurred_at`;
    return rows.map((r) => `${r.t.replace(/\.000000$/, "")}Z`);
  }

  const times = (...indexes: number[]) => indexes.map((i) => TIMES[i]!.replace(/\.000000/, ""));

  it("from a date: from the day's first instant on", async () => {
    expect(await matching({ from: "2026-11-21" })).toEqual(times(1, 2, 3, 4, 5, 6));
  });

  it("to a date: the whole day, up to (not including) the next day's first instant", async () => {
    expect(await matching({ to: "2026-11-21" })).toEqual(times(0, 1, 2, 3, 4, 5));
  });

  it("from and to the same date: exactly that day", async () => {
    expect(await matching({ from: "2026-11-21", to: "2026-11-21" })).toEqual(times(1, 2, 3, 4, 5));
  });

  it("from an instant: it and everything after", async () => {
    expect(await matching({ from: "2026-11-21T09:30:00Z" })).toEqual(times(3, 4, 5, 6));
  });

  it("to an instant: everything up to and including it", async () => {
    expect(await matching({ to: "2026-11-21T09:30:00Z" })).toEqual(times(0, 1, 2, 3));
  });

  it("from and to the same instant: the entries of that instant", async () => {
    expect(await matching({ from: "2026-11-21T09:30:00Z", to: "2026-11-21T09:30:00+00:00" })).toEqual(times(3));
  });

  it("no range: everything", async () => {
    expect(await select({})).toEqual(times(0, 1, 2, 3, 4, 5, 6));
  });
});

describe("searchQuery", () => {
  it("repeats the search's non-empty fields, trimmed, with extras such as the export format", () => {
    expect(
      searchQuery(
        { org: " acme ", key: "", from: "2026-11-01", to: "2026-11-21T09:30:00Z" },
        { format: "csv", before: undefined },
      ),
    ).toBe("org=acme&from=2026-11-01&to=2026-11-21T09%3A30%3A00Z&format=csv");
    // What it writes, the filter reads back to the same filter.
    const search = { org: "acme", from: "2026-11-01", to: "2026-11-21T09:30:00Z", contributor: "op 7&x" };
    const back = Object.fromEntries(new URLSearchParams(searchQuery(search)));
    expect(disclosureFilter(back)).toEqual(disclosureFilter(search));
  });
});
