// The Hugging Face Hub protocol's requests and answers, as schemas (the OpenAPI document's, and
// the router's checks): what huggingface_hub, `datasets` and LeRobot send and read. Paths and
// revisions arrive percent-encoded; the router decodes them.
import { z } from "zod";
import type { ZodOpenApiResponseObject } from "zod-openapi";
import type { ErrorCode } from "../errors";
import { MAX_PATHS_INFO, TREE_PAGE } from "../hub/tree";
import { MAX_SIBLINGS } from "../hub/info";
import { COMMON_HEADERS, errorResponses } from "./openapi-parts";
import { cursorQuery } from "./requests";
import { UNSAFE_CHARACTER_RANGE, WITHOUT_CONTROL_CHARACTERS } from "../characters";

// ---- Requests.

/**
 * What the document says of a revision and of a path, as patterns: a subset of what the server
 * takes (lib/hub/repository.ts's ref rule, lib/safe-path.ts's path rule), simple enough for any
 * regular-expression engine, so that a generated value the document allows is never refused as
 * malformed; a value outside them that the server does take (a path with a space in it, `a./b`)
 * is answered as any name that is not there is, 404 (decision 0110). The server's own checks are
 * unchanged: the Hub's clients read its refusals' X-Error-Code.
 */
const REVISION_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_-]*(?:[./][A-Za-z0-9_-]+)*$";
/** What String.prototype.trim takes from the ends that the unsafe characters do not already hold. */
const TRIMMED_SPACES = "\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000\\ufeff";
const PATH_CHARACTER = `[^/\\\\${TRIMMED_SPACES}${UNSAFE_CHARACTER_RANGE}]`;
const PATH_FIRST = `[^./\\\\${TRIMMED_SPACES}${UNSAFE_CHARACTER_RANGE}]`;
/** Segments of no space or unsafe character, none empty, '.' or '..' (a leading dot only before another character). */
const PATH_SEGMENT = `\\.?${PATH_FIRST}${PATH_CHARACTER}*`;
export const PATH_PATTERN = `^${PATH_SEGMENT}(?:/${PATH_SEGMENT})*$`;
/** Code points: a path of the server's 1,024 UTF-16 units at most, whatever its characters. */
const PATH_MAX_CODE_POINTS = 512;

export const HubRepoPath = z.object({
  namespace: z.string().meta({ description: "Always `das`.", example: "das" }),
  name: z.string().meta({ description: "The dataset's identifier.", example: "kitchen-pick-place" }),
});
export const HubRevisionPath = HubRepoPath.extend({
  revision: z.string().meta({
    description:
      "A branch (`main`: the newest version the key may read), a tag (a version such as `1.0.0`, or a LeRobot codebase version such as `v3.0`) or a revision's 40-hex sha; percent-encoded.",
    example: "main",
    override: { pattern: REVISION_PATTERN, maxLength: 128 },
  }),
});
export const HubFilePath = HubRevisionPath.extend({
  path: z.string().meta({
    description:
      "A file's (or folder's) path in the repository: its segments, each percent-encoded, or the whole path percent-encoded.",
    example: "meta/info.json",
    override: { pattern: PATH_PATTERN, maxLength: PATH_MAX_CODE_POINTS },
  }),
});

/** How the clients send a boolean: `true`/`True`/`1` (requests and httpx differ). */
const Flag = z
  .enum(["true", "false", "True", "False", "1", "0"])
  .optional()
  .transform((v) => v === "true" || v === "True" || v === "1");

export const HubInfoQuery = z.object({
  blobs: Flag.meta({ description: "List each sibling with its size, blob id and LFS facts." }),
});
export const HubTreeQuery = z.object({
  recursive: Flag.meta({ description: "List every file and folder below, not only the folder's own." }),
  expand: Flag.meta({ description: "Add each entry's `lastCommit` (the version's release)." }),
  // The API's own signed cursor: its shape documented, and one the service did not issue 400.
  cursor: cursorQuery('From a `Link: <...>; rel="next"` header of the page before, unchanged.'),
});
export const PathsInfoForm = z.object({
  paths: z
    .array(
      z
        .string()
        .regex(WITHOUT_CONTROL_CHARACTERS, "must not contain control characters")
        .meta({ override: { pattern: PATH_PATTERN, maxLength: PATH_MAX_CODE_POINTS } }),
    )
    .min(1, "name at least one path")
    .meta({ description: `Paths to describe (a form field, repeated), at most ${MAX_PATHS_INFO}.` }),
  expand: Flag,
});

// ---- Answers.

const Sha = z
  .string()
  .regex(/^[0-9a-f]{40}$/)
  .meta({
    description: "A revision's sha: a digest of the view (version, files, withdrawals).",
    example: "3f1c0a9e2b7d4c6a8e0f1b3d5c7e9a2b4d6f8a0c",
  });
const LastCommit = z.object({ id: Sha, title: z.string(), date: z.iso.datetime() });

export const HubTreeEntry = z
  .union([
    z.object({
      type: z.literal("file"),
      oid: z.string().regex(/^[0-9a-f]{40}$/),
      size: z.number().int().nonnegative(),
      path: z.string(),
      lfs: z.object({
        oid: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .meta({ description: "The file's SHA-256." }),
        size: z.number().int().nonnegative(),
        pointerSize: z.number().int().positive(),
      }),
      lastCommit: LastCommit.optional(),
    }),
    z.object({
      type: z.literal("directory"),
      oid: z.string().regex(/^[0-9a-f]{40}$/),
      size: z.literal(0),
      path: z.string(),
      lastCommit: LastCommit.optional(),
    }),
  ])
  .meta({ id: "HubTreeEntry" });
export const HubTreePage = z.array(HubTreeEntry).meta({ id: "HubTreePage" });

export const HubRepoInfo = z
  .object({
    _id: z.string(),
    id: z.string().meta({ example: "das/kitchen-pick-place" }),
    author: z.literal("das"),
    sha: Sha,
    lastModified: z.iso.datetime(),
    createdAt: z.iso.datetime(),
    private: z.literal(true),
    gated: z.literal(false),
    disabled: z.literal(false),
    downloads: z.literal(0),
    likes: z.literal(0),
    tags: z.array(z.string()),
    usedStorage: z.number().nonnegative(),
    cardData: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: "The YAML front matter of the revision's README.md." }),
    siblings: z
      .array(
        z.object({
          rfilename: z.string(),
          size: z.number().int().nonnegative().optional(),
          blobId: z.string().optional(),
          lfs: z.object({ sha256: z.string(), size: z.number().int(), pointerSize: z.number().int() }).optional(),
        }),
      )
      .optional()
      .meta({
        description: `Every file of the revision; left out beyond ${MAX_SIBLINGS.toLocaleString("en")} files (list the tree instead).`,
      }),
  })
  .meta({ id: "HubRepoInfo" });

const RefEntry = z.object({ name: z.string(), ref: z.string(), targetCommit: Sha });
export const HubRefs = z
  .object({ branches: z.array(RefEntry), tags: z.array(RefEntry), converts: z.array(z.never()).max(0) })
  .meta({ id: "HubRefs" });

// ---- Headers.

// Registered as components under their names; the file's ETag under `File-ETag`, the API's own
// ETag (of a JSON answer) being another header.
const header = (id: string, description: string, example: string, required = true) =>
  (required ? z.string() : z.string().optional()).meta({ header: { id, required }, description, example });
const XRepoCommit = header("X-Repo-Commit", "The revision's sha.", "3f1c0a9e2b7d4c6a8e0f1b3d5c7e9a2b4d6f8a0c");
const FileETag = header(
  "File-ETag",
  "`ETag` on a file of the Hub protocol: the file's SHA-256, quoted.",
  `"${"9f".repeat(32)}"`,
);
const LinkedETag = header(
  "X-Linked-Etag",
  "The file's SHA-256, quoted (what the clients key their cache by).",
  `"${"9f".repeat(32)}"`,
);
const LinkedSize = header("X-Linked-Size", "The file's size in bytes.", "52341");
const Location = header(
  "Location",
  "A signed URL of the file in the object store, valid for 15 minutes; HTTP Range works on it. The clients fetch it without the key.",
  "https://store.example/bucket/ds/1.0.0/data/chunk-000/file-000.parquet?X-Amz-Signature=...",
);
const Link = header(
  "Link",
  `The next page (at most ${TREE_PAGE} entries a page): \`<url>; rel="next"\`.`,
  '<https://das.example/hub/api/datasets/das/kitchen-pick-place/tree/main?recursive=true&cursor=...>; rel="next"',
  false,
);
const XErrorCode = header(
  "X-Error-Code",
  "The Hub's error code, which its clients raise as their own exception: `RepoNotFound`, `RevisionNotFound`, `EntryNotFound` or `GatedRepo`.",
  "EntryNotFound",
  false,
);
const XErrorMessage = header(
  "X-Error-Message",
  "The error's message, as one line of ASCII.",
  "No file 'data/x.parquet' in revision 3f1c... of das/kitchen-pick-place.",
);

export const FILE_HEADERS = {
  "X-Repo-Commit": XRepoCommit,
  ETag: FileETag,
  "X-Linked-Etag": LinkedETag,
  "X-Linked-Size": LinkedSize,
};

export function hubOk(
  description: string,
  schema: z.ZodType,
  example: unknown,
  paged = false,
): Record<string, ZodOpenApiResponseObject> {
  return {
    "200": {
      description,
      headers: z.object({ ...COMMON_HEADERS, ...(paged ? { Link } : {}) }),
      content: { "application/json": { schema, example } },
    },
  };
}

export function fileAnswer(status: "200" | "302", description: string): Record<string, ZodOpenApiResponseObject> {
  return {
    [status]: {
      description,
      headers: z.object({ ...COMMON_HEADERS, ...FILE_HEADERS, ...(status === "302" ? { Location } : {}) }),
    },
  };
}

/** The operation's error responses, each with the Hub's X-Error-Code and X-Error-Message beside the envelope. */
export function hubErrorResponses(codes: readonly ErrorCode[]): Record<string, ZodOpenApiResponseObject> {
  return Object.fromEntries(
    Object.entries(errorResponses(codes)).map(([status, response]) => [
      status,
      {
        ...response,
        headers: z.object({
          ...((response.headers as z.ZodObject).shape as Record<string, z.ZodType>),
          "X-Error-Code": XErrorCode,
          "X-Error-Message": XErrorMessage,
        }),
      },
    ]),
  );
}

/** The codes every operation under /hub may answer besides its own (the API's own, less `not_acceptable`: any Accept is fine). */
export const HUB_KEYED: ErrorCode[] = [
  "invalid_parameter",
  "unauthorized",
  "https_required",
  "rate_limited",
  "internal_error",
  "unavailable",
  "not_found",
];

export const HUB_DESCRIPTION =
  "Part of the Hugging Face Hub's read protocol for dataset repositories `das/<dataset_id>` (set `HF_ENDPOINT=<this service>/hub` and `HF_TOKEN=<your key>`). Refusals carry `X-Error-Code` (`RepoNotFound`, `RevisionNotFound`, `EntryNotFound`, `GatedRepo`) and `X-Error-Message` beside the usual envelope; query parameters the operation does not read are ignored.";
