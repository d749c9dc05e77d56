import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { byteOrder, randomEpisodes, uniqueId, writeImportDir, type TestVersion } from "@/lib/testing/fixtures";
import { catalogRows, NOTHING } from "@/lib/testing/catalog-rows";
import { FREE_TEXT_DESCRIPTION } from "@/lib/characters";
import { importVersion } from "./import-version";
import { OUTSIDE } from "@/lib/local-path";
import { ImportError } from "./problems";
import type { AnnotationLine, EpisodeLine, FileLine } from "./records";

const sql = () => getDb().$client;
const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const jsonl = (...lines: unknown[]) => lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n");

// version.json as an operator would write it, so a problem's line is known: version on line 2,
// released_at on line 3, the second changelog entry's type on line 6.
const versionJson = (
  fields: { version?: string; released_at?: string; secondType?: string; secondDescription?: string } = {},
) => `{
  "version": ${JSON.stringify(fields.version ?? "1.2.0")},
  "released_at": ${JSON.stringify(fields.released_at ?? "2026-02-01T12:00:00+02:00")},
  "changelog": [
    { "type": "added", "description": "Kitchen episodes" },
    { "type": ${JSON.stringify(fields.secondType ?? "fixed")}, "description": ${JSON.stringify(fields.secondDescription ?? "Wrist camera timestamps")} }
  ]
}
`;

/** A small, fully known version whose episode ids and file paths all start with the dataset id. */
function sample(ds: string) {
  const id = (n: number) => `${ds}.e${n}`;
  const episodes: EpisodeLine[] = [
    {
      episode_id: id(1),
      task: "pick cube",
      environment: "kitchen",
      duration_s: 10.5,
      outcome: "success",
      has_recovery: false,
      contributor: "c-ana",
      streams: ["cam_front", "joints"],
    },
    {
      episode_id: id(2),
      task: "pick cube",
      environment: "lab",
      duration_s: 20,
      outcome: "failure",
      has_recovery: true,
      contributor: "c-ben",
      streams: ["audio", "cam_front", "joints"],
    },
    {
      episode_id: id(3),
      task: "open drawer",
      environment: "kitchen",
      duration_s: 7.25,
      outcome: "failure",
      has_recovery: false,
      contributor: "c-ana",
      streams: ["wrist"],
    },
  ];
  const annotations: AnnotationLine[] = [
    { episode_id: id(1), label: "reach", start_s: 0, end_s: 4.5, attributes: { hand: "left", confidence: 0.9 } },
    { episode_id: id(1), label: "grasp", start_s: 4.5, end_s: 10.5 },
    { episode_id: id(3), label: "pull", start_s: 1, end_s: 1 },
  ];
  const files: FileLine[] = [
    { path: `${ds}/e1/cam_front.mp4`, episode_id: id(1), stream: "cam_front", size_bytes: 1000, sha256: sha("a") },
    { path: `${ds}/e1/joints.parquet`, episode_id: id(1), stream: "joints", size_bytes: 250, sha256: sha("b") },
    { path: `${ds}/e3/wrist.bin`, episode_id: id(3), stream: "wrist", size_bytes: 5_000_000_000, sha256: sha("c") },
    { path: `${ds}/README.md`, size_bytes: 42, sha256: sha("d"), media_type: "text/markdown" },
  ];
  const version: TestVersion = {
    version: "1.2.0",
    released_at: "2026-02-01T12:00:00+02:00",
    changelog: [
      { type: "added", description: "Kitchen episodes" },
      { type: "fixed", description: "Wrist camera timestamps" },
    ],
    episodes,
    annotations,
    files,
  };
  return { ds, id, episodes, annotations, files, version };
}
type Sample = ReturnType<typeof sample>;

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** The sample's directory, with some files replaced by raw text and some removed. */
function sampleDir(s: Sample, raw: Record<string, string> = {}, remove: string[] = []): string {
  const dir = writeImportDir(s.ds, s.version, raw);
  made.push(dir);
  for (const name of remove) rmSync(path.join(dir, name));
  return dir;
}

async function refused(dir: string): Promise<ImportError> {
  try {
    await importVersion(sql(), dir);
  } catch (error) {
    if (error instanceof ImportError) return error;
    throw error;
  }
  throw new Error(`the import of ${dir} was expected to be refused, but it succeeded`);
}

async function versionRow(ds: string, version = "1.2.0") {
  const [row] = await sql()`
    select id, major, minor, patch, to_char(released_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as released_at, episode_count, file_count, total_bytes::text as total_bytes, streams,
           facet_counts, content_sha256, imported_at
    from dataset_versions where dataset_id = ${ds} and version = ${version}`;
  return row!;
}

async function storedContent(versionId: number) {
  // Plain arrays, so that comparisons see rows and not postgres.js's result metadata.
  const rows = async (query: Promise<object[]>) => [...(await query)];
  return {
    changelog: await rows(
      sql()`select position, type, description from changelog_entries where version_id = ${versionId} order by position`,
    ),
    episodes: await rows(sql()`
      select episode_id, task, environment, duration_s, outcome, has_recovery, contributor, streams
      from episodes where version_id = ${versionId} order by episode_id`),
    annotations: await rows(
      sql()`select episode_id, label, start_s, end_s, attributes from annotations where version_id = ${versionId} order by id`,
    ),
    files: await rows(sql()`
      select path, episode_id, stream, size_bytes::float8 as size_bytes, sha256, media_type
      from files where version_id = ${versionId} order by path`),
  };
}

describe("importVersion: a good directory", () => {
  it("imports every record, with the version's totals, streams and facet counts", async () => {
    const s = sample(uniqueId("ds"));
    const result = await importVersion(sql(), sampleDir(s));
    expect(result).toEqual({
      status: "imported",
      datasetId: s.ds,
      version: "1.2.0",
      episodes: 3,
      annotations: 3,
      files: 4,
      // A first version: nobody holds an earlier one to be told of it.
      versionNotices: 0,
    });

    const [dataset] = await sql()`select title, description from datasets where id = ${s.ds}`;
    expect(dataset).toEqual({ title: `Dataset ${s.ds}`, description: "test data" });
    const version = await versionRow(s.ds);
    expect(version).toMatchObject({
      major: 1,
      minor: 2,
      patch: 0,
      released_at: "2026-02-01T10:00:00Z",
      episode_count: 3,
      file_count: 4,
      total_bytes: String(1000 + 250 + 5_000_000_000 + 42),
      streams: ["audio", "cam_front", "joints", "wrist"],
      facet_counts: {
        outcome: { success: 1, failure: 2 },
        environment: { kitchen: 2, lab: 1 },
        pairs: { '["success","kitchen"]': 1, '["failure","lab"]': 1, '["failure","kitchen"]': 1 },
      },
    });
    expect(version.content_sha256).toMatch(/^[0-9a-f]{64}$/);

    const stored = await storedContent(version.id);
    expect(stored.changelog).toEqual([
      { position: 0, type: "added", description: "Kitchen episodes" },
      { position: 1, type: "fixed", description: "Wrist camera timestamps" },
    ]);
    expect(stored.episodes).toEqual([...s.episodes].sort((a, b) => byteOrder(a.episode_id, b.episode_id)));
    expect(stored.annotations).toEqual(s.annotations.map((a) => ({ ...a, attributes: a.attributes ?? {} })));
    // media_type is the declared one, else guessed from the extension, else application/octet-stream.
    expect(stored.files).toEqual([
      {
        path: `${s.ds}/README.md`,
        episode_id: null,
        stream: null,
        size_bytes: 42,
        sha256: sha("d"),
        media_type: "text/markdown",
      },
      {
        path: `${s.ds}/e1/cam_front.mp4`,
        episode_id: s.id(1),
        stream: "cam_front",
        size_bytes: 1000,
        sha256: sha("a"),
        media_type: "video/mp4",
      },
      {
        path: `${s.ds}/e1/joints.parquet`,
        episode_id: s.id(1),
        stream: "joints",
        size_bytes: 250,
        sha256: sha("b"),
        media_type: "application/vnd.apache.parquet",
      },
      {
        path: `${s.ds}/e3/wrist.bin`,
        episode_id: s.id(3),
        stream: "wrist",
        size_bytes: 5_000_000_000,
        sha256: sha("c"),
        media_type: "application/octet-stream",
      },
    ]);
    expect(await catalogRows(s.ds)).toEqual({
      datasets: 1,
      versions: 1,
      changelog: 2,
      episodes: 3,
      annotations: 3,
      files: 4,
    });
  });

  it("needs no annotations.jsonl or files.jsonl, and counts a missing one as empty", async () => {
    const s = sample(uniqueId("ds"));
    const result = await importVersion(sql(), sampleDir(s, {}, ["annotations.jsonl", "files.jsonl"]));
    expect(result).toMatchObject({ status: "imported", episodes: 3, annotations: 0, files: 0 });
    expect(await versionRow(s.ds)).toMatchObject({ file_count: 0, total_bytes: "0" });
    const again = await importVersion(sql(), sampleDir(s, { "annotations.jsonl": "", "files.jsonl": "\n" }));
    expect(again.status).toBe("unchanged");
  });

  it("skips blank lines but counts them, and reads CRLF line endings in every file", async () => {
    const s = sample(uniqueId("ds"));
    const dir = sampleDir(s, {
      "episodes.jsonl": `\n${jsonl(s.episodes[0])}\n   \n${jsonl(...s.episodes.slice(1))}\n\n`,
      "version.json": versionJson(),
    });
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      writeFileSync(file, readFileSync(file, "utf8").replace(/\n/g, "\r\n"));
    }
    expect(await importVersion(sql(), dir)).toMatchObject({
      status: "imported",
      episodes: 3,
      annotations: 3,
      files: 4,
    });
    const stored = await storedContent((await versionRow(s.ds)).id);
    expect(stored.episodes).toEqual([...s.episodes].sort((a, b) => byteOrder(a.episode_id, b.episode_id)));
    expect(stored.changelog.map((c) => (c as { description: string }).description)).toEqual([
      "Kitchen episodes",
      "Wrist camera timestamps",
    ]);

    const bad = sample(uniqueId("ds"));
    const crlf = (text: string) => text.replace(/\n/g, "\r\n");
    const error = await refused(
      sampleDir(bad, {
        "episodes.jsonl": crlf(`${jsonl(bad.episodes[0])}\n\n${jsonl({ ...bad.episodes[1], duration_s: -2 })}\n`),
        "version.json": crlf(versionJson({ released_at: "yesterday" })),
        "annotations.jsonl": "",
        "files.jsonl": "",
      }),
    );
    expect(error.problems).toEqual([
      { file: "episodes.jsonl", line: 3, message: "duration_s must be at least 0" },
      {
        file: "version.json",
        line: 3,
        message: expect.stringContaining("released_at must be an ISO 8601 date-time with a time zone"),
      },
    ]);
    expect(await catalogRows(bad.ds)).toEqual(NOTHING);
  });

  it("keeps line breaks and tabs in free text: titles, descriptions, tasks, labels and changelogs are not identifiers", async () => {
    const s = sample(uniqueId("ds"));
    const task = "pick the cube,\nthen place it\tleft of the mug";
    const label = "reach\r\n(slowly)";
    const description = "Recorded in two kitchens.\n\n\tSee the README.\u2028End.";
    const dir = sampleDir(s, {
      "dataset.json": JSON.stringify({ id: s.ds, title: "Pick\tand\nplace", description }),
      "episodes.jsonl": jsonl({ ...s.episodes[0], task }, ...s.episodes.slice(1)),
      "annotations.jsonl": jsonl({ ...s.annotations[0], label }, ...s.annotations.slice(1)),
      "version.json": versionJson({ secondDescription: "Fixed:\n- timestamps\n- colours" }),
    });
    expect(await importVersion(sql(), dir)).toMatchObject({ status: "imported" });
    const [dataset] = await sql()`select title, description from datasets where id = ${s.ds}`;
    expect(dataset).toEqual({ title: "Pick\tand\nplace", description });
    const stored = await storedContent((await versionRow(s.ds)).id);
    expect(stored.episodes.map((e) => (e as { task: string }).task)).toContain(task);
    expect((stored.annotations[0] as { label: string }).label).toBe(label);
    expect((stored.changelog[1] as { description: string }).description).toBe("Fixed:\n- timestamps\n- colours");
  });

  it("keeps free text byte for byte, edge spaces included: labels and tasks of 300 and 10,000 characters, a 100,000-character description", async () => {
    const s = sample(uniqueId("ds"));
    // Multi-byte characters and an emoji (two UTF-16 units, one character), so that "characters" and "byte for byte" are both tested.
    const long300 = `  Pick up the blue mug by its handle — carefully — and place it on the coaster ☕ ${"then wait. ".repeat(25)}`;
    const long10k = `🤖 ${"fold the towel in half, then in half again; ".repeat(230)}`
      .padEnd(10_001, "é")
      .slice(0, 10_001);
    expect(long300.length).toBeGreaterThan(300);
    expect([...long10k].length).toBe(10_000);
    const changelog = "Recalibrated the wrist camera".padEnd(9_996, ".");
    const description = "d".repeat(99_999) + "\n";
    const dir = sampleDir(s, {
      "dataset.json": JSON.stringify({ id: s.ds, title: ` ${long300} `, description }),
      "episodes.jsonl": jsonl({ ...s.episodes[0], task: long10k }, { ...s.episodes[1], task: long300 }, s.episodes[2]),
      "annotations.jsonl": jsonl(
        { ...s.annotations[0], label: long10k },
        { ...s.annotations[1], label: long300 },
        s.annotations[2],
      ),
      "version.json": versionJson({ secondDescription: `  ${changelog}  ` }),
    });
    expect(await importVersion(sql(), dir)).toMatchObject({ status: "imported" });
    const [dataset] = await sql()`select title, description from datasets where id = ${s.ds}`;
    expect(dataset).toEqual({ title: ` ${long300} `, description });
    const stored = await storedContent((await versionRow(s.ds)).id);
    expect(stored.changelog[1]).toEqual({ position: 1, type: "fixed", description: `  ${changelog}  ` });
    const tasks = new Map(
      stored.episodes.map((e) => [(e as { episode_id: string }).episode_id, (e as { task: string }).task]),
    );
    expect(Buffer.from(tasks.get(s.id(1))!)).toEqual(Buffer.from(long10k));
    expect(tasks.get(s.id(2))).toBe(long300);
    expect(stored.annotations.map((a) => (a as { label: string }).label)).toEqual([long10k, long300, "pull"]);
  });

  it("refuses free text over 10,000 characters, or empty or only white space, and identifiers with white space at an end", async () => {
    const s = sample(uniqueId("ds"));
    // Episode 2 has no annotations or files, so its line's problem stays its own; lines 4 and 5 are new episodes.
    const error = await refused(
      sampleDir(s, {
        "episodes.jsonl": jsonl(
          s.episodes[0],
          { ...s.episodes[1], task: "x".repeat(10_001) },
          s.episodes[2],
          { ...s.episodes[1], episode_id: s.id(4), task: " \t\n" },
          { ...s.episodes[1], episode_id: s.id(5), environment: "kitchen " },
        ),
        "annotations.jsonl": jsonl({ ...s.annotations[0], label: "" }, ...s.annotations.slice(1)),
      }),
    );
    expect(error.problems).toEqual([
      { file: "annotations.jsonl", line: 1, message: "label must not be empty or only white space" },
      { file: "episodes.jsonl", line: 2, message: "task must be at most 10,000 characters" },
      { file: "episodes.jsonl", line: 4, message: "task must not be empty or only white space" },
      { file: "episodes.jsonl", line: 5, message: "environment must not start or end with white space" },
    ]);
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });

  it("refuses terminal controls and right-to-left overrides in every free text: ESC, C1, U+202E, an isolate", async () => {
    const s = sample(uniqueId("ds"));
    const error = await refused(
      sampleDir(s, {
        "dataset.json": JSON.stringify({ id: s.ds, title: "Pick\u001b]0;owned\u0007", description: "ok \u2067x" }),
        "episodes.jsonl": jsonl(
          s.episodes[0],
          { ...s.episodes[1], task: "pick \u009b2J the cube" },
          { ...s.episodes[2], task: "clip\u202e4pm.exe" },
        ),
        "annotations.jsonl": jsonl(
          { ...s.annotations[0], label: "reach\u001b[2J" },
          { ...s.annotations[1], attributes: { note: "a\u202eb" } },
          ...s.annotations.slice(2),
        ),
        "version.json": versionJson({ secondDescription: "Fixed\u0085colours" }),
      }),
    );
    const rule = `must not contain ${FREE_TEXT_DESCRIPTION}`;
    expect(error.problems).toEqual(
      expect.arrayContaining([
        { file: "dataset.json", line: 1, message: `title: title ${rule}` },
        { file: "dataset.json", line: 1, message: `description: description ${rule}` },
        { file: "episodes.jsonl", line: 2, message: `task ${rule}` },
        { file: "episodes.jsonl", line: 3, message: `task ${rule}` },
        { file: "annotations.jsonl", line: 1, message: `label ${rule}` },
        { file: "annotations.jsonl", line: 2, message: `attributes ${rule}` },
        { file: "version.json", line: 6, message: `changelog.1.description: description ${rule}` },
      ]),
    );
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });

  it("reads no file through a link that leads out of the import directory, and says the same whether the target exists or not", async () => {
    const outside = mkdtempSync(path.join(tmpdir(), "das-outside-"));
    made.push(outside);
    const secret = path.join(outside, "secret.jsonl");
    const s = sample(uniqueId("ds"));
    // A link on the path (a directory) and a link as the file itself: neither is followed out.
    const dir = sampleDir(s);
    writeFileSync(secret, `${JSON.stringify({ ...s.episodes[0], task: "the operator's own file" })}\n`);
    rmSync(path.join(dir, "episodes.jsonl"));
    symlinkSync(secret, path.join(dir, "episodes.jsonl"));
    rmSync(path.join(dir, "annotations.jsonl"));
    symlinkSync(outside, path.join(dir, "sub"));
    symlinkSync("sub/annotations.jsonl", path.join(dir, "annotations.jsonl"));
    const expected = [
      { file: "annotations.jsonl", line: 0, message: `not read: ${OUTSIDE}` },
      { file: "episodes.jsonl", line: 0, message: `not read: ${OUTSIDE}` },
    ];
    const first = await refused(dir);
    expect(first.problems.filter((p) => p.line === 0 && p.message.startsWith("not read"))).toEqual(expected);
    rmSync(secret);
    const second = await refused(dir);
    expect(second.problems).toEqual(first.problems);
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });

  it("streams a large file through COPY in several chunks", async () => {
    const ds = uniqueId("ds");
    const episodes = randomEpisodes(20_000, 11, `${ds}.`);
    const dir = writeImportDir(ds, { version: "1.0.0", episodes });
    made.push(dir);
    expect(await importVersion(sql(), dir)).toMatchObject({ status: "imported", episodes: 20_000 });
    const version = await versionRow(ds, "1.0.0");
    expect(version.episode_count).toBe(20_000);
    const failures = episodes.filter((e) => e.outcome === "failure").length;
    expect(version.facet_counts.outcome.failure).toBe(failures);
    const [totals] =
      await sql()`select count(*)::int as n, sum(duration_s) as seconds from episodes where version_id = ${version.id}`;
    expect(totals!.n).toBe(20_000);
    expect(totals!.seconds).toBeCloseTo(
      episodes.reduce((sum, e) => sum + e.duration_s, 0),
      3,
    );
  });
});

describe("importVersion: files of several episodes", () => {
  const fileEpisodes = async (versionId: number) => [
    ...(await sql()`select path, episode_id, start_s, end_s, from_frame::float8 as from_frame, to_frame::float8 as to_frame
      from file_episodes where version_id = ${versionId} order by path, episode_id`),
  ];

  it("records which episodes each file holds: one (0 to its duration), several by episode_ids, or several with their places", async () => {
    const s = sample(uniqueId("ds"));
    const shared = {
      path: `${s.ds}/shared/cam_front.mp4`,
      stream: "cam_front",
      size_bytes: 9,
      sha256: sha("s"),
      episode_ids: [s.id(2), s.id(1)],
    };
    const placed = {
      path: `${s.ds}/shared/joints.parquet`,
      stream: "joints",
      size_bytes: 7,
      sha256: sha("p"),
      episodes: [
        { episode_id: s.id(1), start_s: 0, end_s: 10.5, from_frame: 0, to_frame: 105 },
        { episode_id: s.id(2), start_s: 10.5, end_s: 30.5 },
      ],
    };
    const dir = sampleDir(s, { "files.jsonl": jsonl(...s.files, shared, placed) });
    expect(await importVersion(sql(), dir)).toMatchObject({ status: "imported", files: 6 });
    const version = await versionRow(s.ds);
    expect(await fileEpisodes(version.id)).toEqual([
      {
        path: `${s.ds}/e1/cam_front.mp4`,
        episode_id: s.id(1),
        start_s: 0,
        end_s: 10.5,
        from_frame: null,
        to_frame: null,
      },
      {
        path: `${s.ds}/e1/joints.parquet`,
        episode_id: s.id(1),
        start_s: 0,
        end_s: 10.5,
        from_frame: null,
        to_frame: null,
      },
      { path: `${s.ds}/e3/wrist.bin`, episode_id: s.id(3), start_s: 0, end_s: 7.25, from_frame: null, to_frame: null },
      // Several episodes named without their places: where each lies is not known.
      { path: shared.path, episode_id: s.id(1), start_s: null, end_s: null, from_frame: null, to_frame: null },
      { path: shared.path, episode_id: s.id(2), start_s: null, end_s: null, from_frame: null, to_frame: null },
      { path: placed.path, episode_id: s.id(1), start_s: 0, end_s: 10.5, from_frame: 0, to_frame: 105 },
      { path: placed.path, episode_id: s.id(2), start_s: 10.5, end_s: 30.5, from_frame: null, to_frame: null },
    ]);
    // files.episode_id is the episode only when the file holds exactly one.
    const stored = await storedContent(version.id);
    const episodeOf = new Map(
      stored.files.map((f) => [(f as { path: string }).path, (f as { episode_id: string | null }).episode_id]),
    );
    expect(episodeOf.get(shared.path)).toBeNull();
    expect(episodeOf.get(placed.path)).toBeNull();
    expect(episodeOf.get(`${s.ds}/e1/cam_front.mp4`)).toBe(s.id(1));
    expect(episodeOf.get(`${s.ds}/README.md`)).toBeNull();

    // The same content again is unchanged; another place is different content.
    expect(
      (await importVersion(sql(), sampleDir(s, { "files.jsonl": jsonl(...s.files, shared, placed) }))).status,
    ).toBe("unchanged");
    const moved = { ...placed, episodes: [placed.episodes[0], { ...placed.episodes[1], start_s: 11 }] };
    const error = await refused(sampleDir(s, { "files.jsonl": jsonl(...s.files, shared, moved) }));
    expect(error.problems[0]!.message).toContain("already released with different content");
  });

  it("checks each episode of a shared file: it exists, has the file's stream, is named once; one way of naming them per line", async () => {
    const s = sample(uniqueId("ds"));
    const base = { stream: "cam_front", size_bytes: 1, sha256: sha("x") };
    const error = await refused(
      sampleDir(s, {
        "files.jsonl": jsonl(
          ...s.files,
          { ...base, path: `${s.ds}/a.mp4`, episode_ids: [s.id(1), s.id(9)] },
          { ...base, path: `${s.ds}/b.mp4`, episode_ids: [s.id(1), s.id(3)] },
          { ...base, path: `${s.ds}/c.mp4`, episode_ids: [s.id(1), s.id(1)] },
          { ...base, path: `${s.ds}/d.mp4`, episode_id: s.id(1), episode_ids: [s.id(2)] },
          { ...base, path: `${s.ds}/e.mp4`, episodes: [{ episode_id: s.id(1), start_s: 3, end_s: 2 }] },
          { ...base, path: `${s.ds}/f.mp4`, episodes: [{ episode_id: s.id(1) }] },
        ),
      }),
    );
    expect(error.problems).toEqual([
      { file: "files.jsonl", line: 5, message: `episode_id '${s.id(9)}' is not in episodes.jsonl` },
      { file: "files.jsonl", line: 6, message: `stream 'cam_front' is not one of the streams of episode '${s.id(3)}'` },
      { file: "files.jsonl", line: 7, message: "episode_ids must not repeat an episode" },
      { file: "files.jsonl", line: 8, message: "give one of episode_id, episode_ids or episodes, not several" },
      { file: "files.jsonl", line: 9, message: "start_s must not be after end_s, nor from_frame after to_frame" },
      { file: "files.jsonl", line: 10, message: "missing field 'episodes.0.start_s'" },
      { file: "files.jsonl", line: 10, message: "missing field 'episodes.0.end_s'" },
    ]);
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });
});

describe("importVersion: released versions are immutable", () => {
  it("re-importing identical content, however it is formatted, is 'unchanged' and writes nothing", async () => {
    const s = sample(uniqueId("ds"));
    await importVersion(sql(), sampleDir(s));
    const before = await versionRow(s.ds);
    const rowsBefore = await catalogRows(s.ds);

    expect(await importVersion(sql(), sampleDir(s))).toEqual({
      status: "unchanged",
      datasetId: s.ds,
      version: "1.2.0",
      episodes: 3,
      annotations: 3,
      files: 4,
      versionNotices: 0,
    });
    // Key order, whitespace, number spelling and blank lines are not content.
    const reordered = (record: object) =>
      JSON.stringify(Object.fromEntries(Object.entries(record).reverse()), null, 1).replace(/\n/g, " ");
    const reformatted = sampleDir(s, {
      "episodes.jsonl": `${s.episodes.map(reordered).join("\n\n")}\n`.replace('"duration_s": 20', '"duration_s": 20.0'),
      "annotations.jsonl": s.annotations.map(reordered).join("\r\n"),
      "version.json": versionJson(),
    });
    expect((await importVersion(sql(), reformatted)).status).toBe("unchanged");

    const after = await versionRow(s.ds);
    expect(after).toEqual(before);
    expect(await catalogRows(s.ds)).toEqual(rowsBefore);
  });

  it("two imports of the same new version at once: one imports, the other finds it unchanged", async () => {
    const s = sample(uniqueId("ds"));
    const dir = sampleDir(s);
    const results = await Promise.all([importVersion(sql(), dir), importVersion(sql(), dir)]);
    expect(results.map((r) => r.status).sort()).toEqual(["imported", "unchanged"]);
    expect(await catalogRows(s.ds)).toEqual({
      datasets: 1,
      versions: 1,
      changelog: 2,
      episodes: 3,
      annotations: 3,
      files: 4,
    });
  });

  it.each([
    [
      "an episode's outcome",
      (s: Sample) => ({
        "episodes.jsonl": jsonl(s.episodes[0], { ...s.episodes[1], outcome: "success" }, s.episodes[2]),
      }),
    ],
    [
      "one more episode",
      (s: Sample) => ({ "episodes.jsonl": jsonl(...s.episodes, { ...s.episodes[0], episode_id: s.id(4) }) }),
    ],
    [
      "a file's checksum",
      (s: Sample) => ({ "files.jsonl": jsonl({ ...s.files[0], sha256: sha("z") }, ...s.files.slice(1)) }),
    ],
    ["the changelog", () => ({ "version.json": versionJson({ secondType: "changed" }) })],
    ["the release time", () => ({ "version.json": versionJson({ released_at: "2026-02-01T12:00:00Z" }) })],
  ])("refuses different content (%s) for a released version and changes nothing", async (_what, change) => {
    const s = sample(uniqueId("ds"));
    await importVersion(sql(), sampleDir(s));
    const before = await versionRow(s.ds);
    const contentBefore = await storedContent(before.id);

    const error = await refused(sampleDir(s, change(s)));
    expect(error.problems).toEqual([
      {
        file: "version.json",
        line: 1,
        message: expect.stringContaining(
          `version 1.2.0 of dataset '${s.ds}' is already released with different content`,
        ),
      },
    ]);
    expect(error.message).toContain("released versions are immutable");
    expect(await versionRow(s.ds)).toEqual(before);
    expect(await storedContent(before.id)).toEqual(contentBefore);
  });

  it("a changed version imports as a new version beside the released one", async () => {
    const s = sample(uniqueId("ds"));
    await importVersion(sql(), sampleDir(s));
    const next = sampleDir(s, {
      "version.json": versionJson({ version: "1.3.0" }),
      "episodes.jsonl": jsonl(...s.episodes.slice(0, 2)),
      "annotations.jsonl": jsonl(s.annotations[0]),
      "files.jsonl": "",
    });
    expect(await importVersion(sql(), next)).toMatchObject({ status: "imported", version: "1.3.0", episodes: 2 });
    expect(await catalogRows(s.ds)).toMatchObject({ versions: 2, episodes: 5 });
  });
});

type BadCase = {
  raw?: (s: Sample) => Record<string, string>;
  remove?: string[];
  file: string;
  line: number;
  message: (s: Sample) => string;
};

const episodesWith = (s: Sample, line: number, replacement: unknown) => ({
  "episodes.jsonl": jsonl(...s.episodes.map((e, i) => (i === line - 1 ? replacement : e))),
});
const annotationsWith = (s: Sample, line: number, replacement: unknown) => ({
  "annotations.jsonl": jsonl(...s.annotations.map((a, i) => (i === line - 1 ? replacement : a))),
});
const filesWith = (s: Sample, line: number, replacement: unknown) => ({
  "files.jsonl": jsonl(...s.files.map((f, i) => (i === line - 1 ? replacement : f))),
});
const { contributor: _dropped, ...withoutContributor } = sample("x").episodes[1]!;

const BAD: Record<string, BadCase> = {
  "invalid JSON line": {
    raw: (s) => episodesWith(s, 2, `{"episode_id": "${s.id(2)}", "task": `),
    file: "episodes.jsonl",
    line: 2,
    message: () => "invalid JSON (",
  },
  "missing field": {
    raw: (s) => episodesWith(s, 2, { ...withoutContributor, episode_id: s.id(2) }),
    file: "episodes.jsonl",
    line: 2,
    message: () => "missing field 'contributor'",
  },
  "unknown field": {
    raw: (s) => episodesWith(s, 2, { ...s.episodes[1], colour: "red" }),
    file: "episodes.jsonl",
    line: 2,
    message: () => "unknown field 'colour'",
  },
  "wrong type (string for a number)": {
    raw: (s) => episodesWith(s, 2, { ...s.episodes[1], duration_s: "20" }),
    file: "episodes.jsonl",
    line: 2,
    message: () => "duration_s must be a number of seconds",
  },
  "wrong type (string for a boolean)": {
    raw: (s) => episodesWith(s, 2, { ...s.episodes[1], has_recovery: "yes" }),
    file: "episodes.jsonl",
    line: 2,
    message: () => "has_recovery must be true or false",
  },
  "wrong type (string for an array)": {
    raw: (s) => episodesWith(s, 2, { ...s.episodes[1], streams: "audio" }),
    file: "episodes.jsonl",
    line: 2,
    message: () => "streams must be an array of stream names",
  },
  "bad episode_id": {
    raw: (s) => episodesWith(s, 2, { ...s.episodes[1], episode_id: `${s.ds}/e 2` }),
    file: "episodes.jsonl",
    line: 2,
    message: () => "episode_id must be letters, digits, '.', '_', ':', '~' or '-'",
  },
  "duplicate episode_id (reports the second line, names the first)": {
    raw: (s) => ({ "episodes.jsonl": jsonl(...s.episodes, { ...s.episodes[1], task: "again" }) }),
    file: "episodes.jsonl",
    line: 4,
    message: (s) => `duplicate episode_id '${s.id(2)}' (first on line 2)`,
  },
  "negative duration": {
    raw: (s) => episodesWith(s, 2, { ...s.episodes[1], duration_s: -0.5 }),
    file: "episodes.jsonl",
    line: 2,
    message: () => "duration_s must be at least 0",
  },
  "text PostgreSQL cannot store (NUL)": {
    raw: (s) => episodesWith(s, 2, { ...s.episodes[1], task: "pick\u0000cube" }),
    file: "episodes.jsonl",
    line: 2,
    message: () => "task: text must not contain a NUL character",
  },
  "bad version string": {
    raw: () => ({ "version.json": versionJson({ version: "1.2" }) }),
    file: "version.json",
    line: 2,
    message: () => "version must be three dot-separated numbers, e.g. 1.2.0",
  },
  "version with a pre-release suffix": {
    raw: () => ({ "version.json": versionJson({ version: "1.2.0-rc.1" }) }),
    file: "version.json",
    line: 2,
    message: () => "version must be three dot-separated numbers",
  },
  "released_at that is not a date": {
    raw: () => ({ "version.json": versionJson({ released_at: "last tuesday" }) }),
    file: "version.json",
    line: 3,
    message: () => "released_at must be an ISO 8601 date-time with a time zone",
  },
  "released_at without a time zone": {
    raw: () => ({ "version.json": versionJson({ released_at: "2026-02-01T12:00:00" }) }),
    file: "version.json",
    line: 3,
    message: () => "released_at must be an ISO 8601 date-time with a time zone",
  },
  "changelog description over 10,000 characters": {
    raw: () => ({ "version.json": versionJson({ secondDescription: "x".repeat(10_001) }) }),
    file: "version.json",
    line: 6,
    message: () => "changelog.1.description: description must be at most 10,000 characters",
  },
  "bad changelog type (reported at its line inside version.json)": {
    raw: () => ({ "version.json": versionJson({ secondType: "improved" }) }),
    file: "version.json",
    line: 6,
    message: () => "changelog.1.type: type must be one of added, changed, fixed, removed, deprecated, security",
  },
  "invalid JSON in version.json": {
    raw: () => ({ "version.json": versionJson().replace('"released_at"', "released_at") }),
    file: "version.json",
    line: 3,
    message: () => "invalid JSON",
  },
  "missing dataset.json": { remove: ["dataset.json"], file: "dataset.json", line: 0, message: () => "file is missing" },
  "missing version.json": { remove: ["version.json"], file: "version.json", line: 0, message: () => "file is missing" },
  "missing episodes.jsonl": {
    raw: () => ({ "annotations.jsonl": "", "files.jsonl": "" }),
    remove: ["episodes.jsonl"],
    file: "episodes.jsonl",
    line: 0,
    message: () => "file is missing",
  },
  "annotation for an unknown episode": {
    raw: (s) => annotationsWith(s, 2, { ...s.annotations[1], episode_id: s.id(9) }),
    file: "annotations.jsonl",
    line: 2,
    message: (s) => `episode_id '${s.id(9)}' is not in episodes.jsonl`,
  },
  "span with start_s > end_s": {
    raw: (s) => annotationsWith(s, 2, { ...s.annotations[1], start_s: 6, end_s: 5 }),
    file: "annotations.jsonl",
    line: 2,
    message: () => "start_s must not be after end_s",
  },
  "span with end_s > duration_s": {
    raw: (s) => annotationsWith(s, 3, { ...s.annotations[2], end_s: 7.5 }),
    file: "annotations.jsonl",
    line: 3,
    message: (s) => `span ends at 7.5 s, after the end of episode '${s.id(3)}' (duration_s 7.25)`,
  },
  "span with start_s < 0": {
    raw: (s) => annotationsWith(s, 1, { ...s.annotations[0], start_s: -1 }),
    file: "annotations.jsonl",
    line: 1,
    message: () => "start_s must be at least 0",
  },
  "annotation attributes that are not an object": {
    raw: (s) => annotationsWith(s, 1, { ...s.annotations[0], attributes: ["left"] }),
    file: "annotations.jsonl",
    line: 1,
    message: () => "attributes must be an object",
  },
  "annotation attributes with an unpaired surrogate": {
    raw: (s) => annotationsWith(s, 1, { ...s.annotations[0], attributes: { note: "\ud800" } }),
    file: "annotations.jsonl",
    line: 1,
    message: () => "attributes.note: text must not contain a NUL character (\\u0000) or an unpaired surrogate",
  },
  "file for an unknown episode": {
    raw: (s) => filesWith(s, 2, { ...s.files[1], episode_id: s.id(9), stream: null }),
    file: "files.jsonl",
    line: 2,
    message: (s) => `episode_id '${s.id(9)}' is not in episodes.jsonl`,
  },
  "file with an empty episode_id": {
    raw: (s) => filesWith(s, 4, { ...s.files[3], episode_id: "" }),
    file: "files.jsonl",
    line: 4,
    message: () => "episode_id must not be empty",
  },
  "duplicate file path": {
    raw: (s) => filesWith(s, 4, { ...s.files[3], path: s.files[1]!.path }),
    file: "files.jsonl",
    line: 4,
    message: (s) => `duplicate path '${s.files[1]!.path}' (first on line 2)`,
  },
  "sha256 in upper case": {
    raw: (s) => filesWith(s, 1, { ...s.files[0], sha256: sha("a").toUpperCase() }),
    file: "files.jsonl",
    line: 1,
    message: () => "sha256 must be 64 lower-case hex digits",
  },
  "sha256 too short": {
    raw: (s) => filesWith(s, 3, { ...s.files[2], sha256: sha("c").slice(1) }),
    file: "files.jsonl",
    line: 3,
    message: () => "sha256 must be 64 lower-case hex digits",
  },
  "negative size": {
    raw: (s) => filesWith(s, 2, { ...s.files[1], size_bytes: -1 }),
    file: "files.jsonl",
    line: 2,
    message: () => "size_bytes must be at least 0",
  },
  "fractional size": {
    raw: (s) => filesWith(s, 2, { ...s.files[1], size_bytes: 2.5 }),
    file: "files.jsonl",
    line: 2,
    message: () => "size_bytes must be a whole number",
  },
  "file stream not among the episode's streams": {
    raw: (s) => filesWith(s, 3, { ...s.files[2], stream: "cam_front" }),
    file: "files.jsonl",
    line: 3,
    message: (s) => `stream 'cam_front' is not one of the streams of episode '${s.id(3)}'`,
  },
  "media_type that is not type/subtype": {
    raw: (s) => filesWith(s, 4, { ...s.files[3], media_type: "markdown" }),
    file: "files.jsonl",
    line: 4,
    message: () => "media_type must look like type/subtype",
  },
};

// Identifiers go into URLs, filters, file names and generated scripts: no control characters,
// line or paragraph separators or bidirectional controls (docs/import-format.md).
const UNSAFE_IDENTIFIER =
  "must not contain control characters (U+0000-U+001F, U+007F-U+009F), line or paragraph separators (U+2028, U+2029) or bidirectional controls";
const HOSTILE_PATHS: Record<string, string> = {
  "the review's here-document exploit": "DS/a.bin\nSHA256SUMS\ntouch /tmp/PWNED\n: <<'SHA256SUMS'",
  "aria2c option lines": "DS/a.bin\n  dir=/tmp\n  out=evil",
  "a CR": "DS/a\rb.bin",
  "a tab": "DS/a\tb.bin",
  DEL: "DS/a\u007fb.bin",
  "a C1 control (NEL)": "DS/a\u0085b.bin",
  "a line separator": "DS/a\u2028b.bin",
  "a paragraph separator": "DS/a\u2029b.bin",
  "a right-to-left override": "DS/clip\u202E4pm.exe",
  "a left-to-right mark": "DS/a\u200eb.bin",
  "a first strong isolate": "DS/a\u2068b.bin",
  "an Arabic letter mark": "DS/a\u061cb.bin",
};
for (const [what, hostile] of Object.entries(HOSTILE_PATHS)) {
  BAD[`path with ${what}`] = {
    raw: (s) => filesWith(s, 2, { ...s.files[1], path: hostile.replace("DS", s.ds) }),
    file: "files.jsonl",
    line: 2,
    message: () => `path ${UNSAFE_IDENTIFIER}`,
  };
}
for (const [field, value] of [
  ["environment", "kitchen\nlab"],
  ["outcome", "fail\u0007ure"],
  ["contributor", "op-07\u202E"],
  ["contributor", "op\t07"],
] as const) {
  BAD[`${field} with ${JSON.stringify(value)}`] = {
    raw: (s) => episodesWith(s, 2, { ...s.episodes[1], [field]: value }),
    file: "episodes.jsonl",
    line: 2,
    message: () => `${field} ${UNSAFE_IDENTIFIER}`,
  };
}
BAD["annotation episode_id with a line break"] = {
  raw: (s) => annotationsWith(s, 2, { ...s.annotations[1], episode_id: `${s.id(1)}\nx` }),
  file: "annotations.jsonl",
  line: 2,
  message: () => `episode_id ${UNSAFE_IDENTIFIER}`,
};
BAD["file episode_id with a line break"] = {
  raw: (s) => filesWith(s, 2, { ...s.files[1], episode_id: `${s.id(1)}\n` }),
  file: "files.jsonl",
  line: 2,
  message: () => `episode_id ${UNSAFE_IDENTIFIER}`,
};
for (const spaced of [" DS/e1.mp4", "DS/e1.mp4 ", "DS/e1.mp4\u00a0"]) {
  BAD[`path ${JSON.stringify(spaced)} with a space at an end`] = {
    raw: (s) => filesWith(s, 2, { ...s.files[1], path: spaced.replace("DS", s.ds) }),
    file: "files.jsonl",
    line: 2,
    message: () => "path must not start or end with a space",
  };
}

const UNSAFE_PATHS = [
  "../x",
  "/abs/file.mp4",
  "DS/../../etc/passwd",
  "DS//e1.mp4",
  "DS/./e1.mp4",
  "DS\\e1.mp4",
  "DS/e1/",
];
for (const unsafe of UNSAFE_PATHS) {
  BAD[`unsafe path ${unsafe}`] = {
    raw: (s) => filesWith(s, 2, { ...s.files[1], path: unsafe.replace("DS", s.ds) }),
    file: "files.jsonl",
    line: 2,
    message: () => "path must be relative, with '/' separators and no empty, '.' or '..' segments",
  };
}

// Each import waits on a few round trips; the cases share nothing, so they run side by side.
describe.concurrent("importVersion: bad input is reported as file:line: message and nothing is written", () => {
  it.for(Object.entries(BAD))("%s", async ([, bad], { expect }) => {
    const s = sample(uniqueId("ds"));
    const error = await refused(sampleDir(s, bad.raw?.(s), bad.remove));
    expect(error.problems).toEqual([
      { file: bad.file, line: bad.line, message: expect.stringContaining(bad.message(s)) },
    ]);
    expect(error.total).toBe(1);
    const [heading, shown, ...rest] = error.message.split("\n");
    expect(heading).toBe("Import refused, nothing was written:");
    expect(shown!.startsWith(`${bad.file}:${bad.line}: `)).toBe(true);
    expect(shown).toContain(bad.message(s));
    expect(rest).toEqual([]);
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });
});

describe("importVersion: problem reports", () => {
  it("refuses an episode id that belongs to another dataset", async () => {
    const owner = sample(uniqueId("ds"));
    await importVersion(sql(), sampleDir(owner));
    const ownerRows = await catalogRows(owner.ds);

    const s = sample(uniqueId("ds"));
    const error = await refused(sampleDir(s, episodesWith(s, 2, { ...s.episodes[1], episode_id: owner.id(2) })));
    expect(error.problems).toEqual([
      {
        file: "episodes.jsonl",
        line: 2,
        message: `episode_id '${owner.id(2)}' already belongs to dataset '${owner.ds}'; episode ids are unique across datasets`,
      },
    ]);
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
    expect(await catalogRows(owner.ds)).toEqual(ownerRows);
  });

  it("reports every problem of an import, sorted by file and then line", async () => {
    const s = sample(uniqueId("ds"));
    const error = await refused(
      sampleDir(s, {
        "version.json": versionJson({ version: "1.2" }),
        "episodes.jsonl": jsonl(
          s.episodes[0],
          { ...s.episodes[1], has_recovery: "yes" },
          s.episodes[2],
          { ...s.episodes[0], task: "again" },
          "",
          "not json",
        ),
        "annotations.jsonl": jsonl({ ...s.annotations[0], episode_id: s.id(7) }, s.annotations[1], {
          ...s.annotations[2],
          start_s: -1,
        }),
        "files.jsonl": jsonl(
          s.files[0],
          { ...s.files[1], sha256: "abc" },
          { ...s.files[2], stream: "joints" },
          s.files[3],
        ),
      }),
    );
    expect(error.problems.map((p) => `${p.file}:${p.line}`)).toEqual([
      "annotations.jsonl:1",
      "annotations.jsonl:3",
      "episodes.jsonl:2",
      "episodes.jsonl:4",
      "episodes.jsonl:6",
      "files.jsonl:2",
      "files.jsonl:3",
      "version.json:2",
    ]);
    expect(error.problems[3]!.message).toBe(`duplicate episode_id '${s.id(1)}' (first on line 1)`);
    expect(error.problems[4]!.message).toMatch(/^invalid JSON/);
    expect(error.total).toBe(8);
    expect(error.message.split("\n").slice(1)).toEqual(error.problems.map((p) => `${p.file}:${p.line}: ${p.message}`));
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });

  it("shows the first 200 problems of a file with 500 bad lines and counts the rest", async () => {
    const s = sample(uniqueId("ds"));
    const lines = Array.from({ length: 500 }, (_, i) => ({ ...withoutContributor, episode_id: `${s.ds}.bad${i}` }));
    const error = await refused(
      sampleDir(s, { "episodes.jsonl": jsonl(...lines), "annotations.jsonl": "", "files.jsonl": "" }),
    );
    expect(error.total).toBe(500);
    expect(error.problems).toHaveLength(200);
    expect(error.problems.map((p) => p.line)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(
      error.problems.every((p) => p.file === "episodes.jsonl" && p.message === "missing field 'contributor'"),
    ).toBe(true);
    expect(error.message.split("\n").at(-1)).toBe("... and 300 more problems");
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });

  it("counts cross-record problems beyond those it lists", async () => {
    const s = sample(uniqueId("ds"));
    const spans = Array.from({ length: 250 }, (_, i) => ({
      episode_id: `${s.ds}.ghost${i}`,
      label: "reach",
      start_s: 0,
      end_s: 1,
    }));
    const error = await refused(sampleDir(s, { "annotations.jsonl": jsonl(...spans) }));
    expect(error.total).toBe(250);
    expect(error.problems).toHaveLength(200);
    expect(error.problems[0]).toEqual({
      file: "annotations.jsonl",
      line: 1,
      message: `episode_id '${s.ds}.ghost0' is not in episodes.jsonl`,
    });
    expect(error.message).toMatch(/\n\.\.\. and 50 more problems$/);
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });
});

describe("importVersion: bytes that are not UTF-8 text, and lines over the limit", () => {
  /** The sample's directory with one file replaced by raw bytes. */
  function withBytes(s: Sample, name: string, bytes: Buffer): string {
    const dir = sampleDir(s);
    writeFileSync(path.join(dir, name), bytes);
    return dir;
  }
  const lines = (...parts: (string | Buffer)[]) =>
    Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : p)));

  it.each([
    ["a byte that starts no character", [0xff]],
    ["a surrogate encoded in UTF-8", [0xed, 0xa0, 0x80]],
    ["an overlong encoding", [0xc0, 0xaf]],
  ])("refuses an episodes.jsonl line with %s, at its line, and writes nothing", async (_what, bad) => {
    const s = sample(uniqueId("ds"));
    const [first, second, third] = [s.episodes[0], { ...s.episodes[1], task: "pick @ cube" }, s.episodes[2]].map((e) =>
      JSON.stringify(e),
    );
    const [before, after] = second!.split("@");
    const dir = withBytes(s, "episodes.jsonl", lines(`${first}\n${before}`, Buffer.from(bad), `${after}\n${third}\n`));
    const error = await refused(dir);
    expect(error.problems).toEqual([{ file: "episodes.jsonl", line: 2, message: "line is not valid UTF-8" }]);
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });

  it("refuses invalid UTF-8 in dataset.json and version.json at its line", async () => {
    const s = sample(uniqueId("ds"));
    const dataset = `{\n  "id": "${s.ds}",\n  "title": "Caf`;
    const dir = withBytes(s, "dataset.json", lines(dataset, Buffer.from([0xe9]), '",\n  "description": ""\n}\n'));
    const [head, tail] = versionJson().split("Kitchen episodes");
    writeFileSync(path.join(dir, "version.json"), lines(`${head}Kitchen `, Buffer.from([0x80]), `${tail}`));
    const error = await refused(dir);
    expect(error.problems).toEqual([
      { file: "dataset.json", line: 3, message: "line is not valid UTF-8" },
      { file: "version.json", line: 5, message: "line is not valid UTF-8" },
    ]);
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });

  it("refuses a 20 MB line with its number, still checks the lines after it, and writes nothing", async () => {
    const s = sample(uniqueId("ds"));
    const huge = JSON.stringify({ ...s.episodes[1], task: "x".repeat(20 * 1024 * 1024) });
    const dir = sampleDir(s, {
      "episodes.jsonl": [JSON.stringify(s.episodes[0]), huge, JSON.stringify(s.episodes[2]), "not json"].join("\n"),
    });
    const error = await refused(dir);
    expect(error.problems).toEqual([
      { file: "episodes.jsonl", line: 2, message: "line is longer than 1,048,576 bytes, the limit for a line" },
      { file: "episodes.jsonl", line: 4, message: expect.stringMatching(/^invalid JSON/) },
    ]);
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });

  it("refuses a dataset.json over 8 MiB at the line that crosses the limit, without reading on", async () => {
    const s = sample(uniqueId("ds"));
    // Whitespace is valid JSON: only the size is wrong with this file.
    const padding = `${" ".repeat(1_000_000)}\n`.repeat(20);
    const dir = sampleDir(s, { "dataset.json": `{\n${padding}"id": "${s.ds}", "title": "t", "description": ""}\n` });
    const error = await refused(dir);
    expect(error.problems).toEqual([
      { file: "dataset.json", line: 10, message: "file is longer than 8,388,608 bytes, the limit for dataset.json" },
    ]);
    expect(await catalogRows(s.ds)).toEqual(NOTHING);
  });

  it("takes a line of exactly 1 MiB", async () => {
    const s = sample(uniqueId("ds"));
    const record = JSON.stringify({ ...s.annotations[0], attributes: { note: "" } });
    const padded = record.replace('"note":""', `"note":"${"n".repeat(1024 * 1024 - record.length)}"`);
    expect(Buffer.byteLength(padded)).toBe(1024 * 1024);
    const dir = sampleDir(s, { "annotations.jsonl": jsonl(padded, ...s.annotations.slice(1)) });
    expect(await importVersion(sql(), dir)).toMatchObject({ status: "imported", annotations: 3 });
  });
});
