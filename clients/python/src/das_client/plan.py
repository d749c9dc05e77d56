"""The plan of a pull as the service sends it (POST .../plan), checked before anything is fetched
or written, as `das pull` checks it (lib/client/plan.ts, docs/decisions/0129): what the pull writes
is decided by the service; the client checks only that the plan is one it can carry out without
leaving the directory or overwriting its own records. Plus the two things a client derives from a
plan: where a file's fetched bytes are kept, and a download cut down to the files still missing."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable

from .errors import TransportError
from .transfer import shown

PROVENANCE_FILE = "das-provenance.json"
OWN_DIR = ".das"
# Where a file written transformed keeps its bytes as fetched (verified against the plan on every run).
ORIGINALS_DIR = f"{OWN_DIR}/original"
PARTIAL_SUFFIX = ".das-partial"
TRANSFORM_KIND = "lerobot_v3_data_rows"
# The largest body a narrowed download may have (the API's is 1 MB).
MAX_BODY_CHARS = 900_000

# The characters no path may hold (lib/characters.ts UNSAFE_RANGE): controls, line and paragraph
# separators, bidirectional marks, embeddings, overrides and isolates.
_UNSAFE = re.compile("[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_REVISION = re.compile(r"^[0-9a-f]{40}$")

Plan = dict[str, Any]
PlannedFile = dict[str, Any]


def fetched_place(file: PlannedFile) -> str:
    """Where the bytes as fetched of a planned file are kept, relative to the directory."""
    return f"{ORIGINALS_DIR}/{file['path']}" if file.get("transform") else file["path"]


def other_place(file: PlannedFile) -> str:
    """The other place an earlier run may have kept the same bytes (the plan then said otherwise about a transform)."""
    return file["path"] if file.get("transform") else f"{ORIGINALS_DIR}/{file['path']}"


class UnsafePath(ValueError):
    """A path refused by `safe_path_problem` or `path_inside`; its message shows the path escaped."""

    def __init__(self, relative: str, problem: str) -> None:
        super().__init__(f"unsafe path {shown(repr(relative))}: {problem}")


def safe_path_problem(relative: str) -> str | None:
    """Why `relative` is not a safe relative file path, or None (lib/safe-path.ts safePathProblem)."""
    if relative == "":
        return "it is empty"
    if _UNSAFE.search(relative):
        return "it contains control characters, line or paragraph separators or bidirectional controls"
    if relative != relative.strip(" "):
        return "it starts or ends with a space"
    if relative.startswith("/"):
        return "it is absolute"
    if "\\" in relative:
        return "it contains '\\'"
    if any(s in ("", ".", "..") for s in relative.split("/")):
        return "it has an empty, '.' or '..' segment"
    return None


def path_inside(root: Path, relative: str) -> Path:
    """Where `relative` lies under `root` once every symbolic link on the way is resolved: refused
    (UnsafePath) when its shape is unsafe, when a link leads out of `root`, or when a link is
    dangling (writing through it would create its target, wherever that is)."""
    problem = safe_path_problem(relative)
    if problem:
        raise UnsafePath(relative, problem)
    segments = relative.split("/")
    if not root.exists():
        return root.resolve().joinpath(*segments)
    top = root.resolve(strict=True)
    current = top
    for i, segment in enumerate(segments):
        following = current / segment
        if not os.path.lexists(following):
            return following.joinpath(*segments[i + 1 :])
        if not following.is_symlink():
            current = following
            continue
        try:
            target = following.resolve(strict=True)
        except (OSError, RuntimeError):
            raise UnsafePath(relative, "a symbolic link on its way leads nowhere") from None
        if target != top and top not in target.parents:
            raise UnsafePath(relative, "a symbolic link on its way leads out of the directory")
        current = target
    return current


def _shape_problem(plan: Any) -> str | None:
    """What in the plan's JSON is not the API's Plan schema (the parts the client acts on)."""

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    def strings(v: Any) -> bool:
        return isinstance(v, list) and all(isinstance(s, str) for s in v)

    if not isinstance(plan, dict):
        return "is not a JSON object"
    for key, test in (
        ("dataset_id", lambda v: isinstance(v, str)),
        ("version", lambda v: isinstance(v, str)),
        ("revision", lambda v: isinstance(v, str) and bool(_REVISION.match(v))),
        ("downloads", lambda v: isinstance(v, list) and all(isinstance(d, dict) for d in v)),
        ("files", lambda v: isinstance(v, list)),
        ("unplannable", lambda v: isinstance(v, list) and all(isinstance(u, dict) for u in v)),
        ("expires_at", lambda v: isinstance(v, str)),
        ("lerobot", lambda v: v is None or isinstance(v, dict)),
    ):
        if key not in plan or not test(plan[key]):
            return f"has no valid {key}"
    for i, f in enumerate(plan["files"]):
        get = f.get("get") if isinstance(f, dict) else None
        if (
            not isinstance(f, dict)
            or not isinstance(f.get("path"), str)
            or not is_int(f.get("size_bytes"))
            or not isinstance(f.get("sha256"), str)
            or not _SHA256.match(f["sha256"])
            or not strings(f.get("episode_ids"))
            or not isinstance(get, dict)
            or not (
                (is_int(get.get("download")) and isinstance(get.get("episode_id"), str))
                or isinstance(get.get("url"), str)
            )
        ):
            return f"has a file (files[{i}]) that is not the API's PlannedFile"
        transform = f.get("transform")
        if transform is not None and _transform_problem(transform):
            return f"has a transform of {shown(repr(f['path']))} this client does not know ({_transform_problem(transform)})"
    return None


def _transform_problem(t: Any) -> str | None:
    if not isinstance(t, dict) or t.get("kind") != TRANSFORM_KIND:
        kind = t.get("kind") if isinstance(t, dict) else t
        return f"kind {shown(repr(kind))}"
    numbers = ("episode_index", "new_episode_index", "index_from", "new_index_from", "length")
    episodes = t.get("episodes")
    if not isinstance(episodes, list) or not all(
        isinstance(e, dict) and all(isinstance(e.get(k), int) and not isinstance(e.get(k), bool) and e[k] >= 0 for k in numbers)
        for e in episodes
    ):
        return "its episodes are not episode ranges"
    dropped = t.get("dropped_episode_indices")
    if not isinstance(dropped, list) or not all(isinstance(d, int) and d >= 0 for d in dropped):
        return "its dropped_episode_indices are not episode indices"
    if not isinstance(t.get("changed_columns"), list):
        return "no changed_columns"
    return None


def check_plan(plan: Any, dataset_id: str, version: str) -> Plan:
    """Refuses (TransportError) a plan the client cannot carry out as it is: one not of the API's
    shape or for another version, a path that would leave the directory (or holds unsafe characters) or
    land on the client's own files, a path given twice or under another file, a download it does
    not list, a URL that is not HTTP(S), a download body for another dataset, a transform it does
    not know. Where each path lies once links are resolved is checked per file (`path_inside`).
    Nothing has been fetched or written when it raises."""

    def refuse(why: str) -> TransportError:
        return TransportError(f"The service's plan for {dataset_id}@{version} {why}: nothing was fetched.")

    problem = _shape_problem(plan)
    if problem:
        raise refuse(problem)
    if plan["dataset_id"] != dataset_id or plan["version"] != version:
        raise refuse(f"is for {shown(plan['dataset_id'] + '@' + plan['version'])}")
    for body in plan["downloads"]:
        if body.get("dataset_id") != dataset_id or body.get("version") != version:
            raise refuse(f"lists a download of {shown(str(body.get('dataset_id')) + '@' + str(body.get('version')))}")
    paths: set[str] = set()
    for file in plan["files"]:
        relative = file["path"]
        named = shown(repr(relative))
        problem = safe_path_problem(relative)
        if problem:
            raise refuse(f"names an unsafe path: unsafe path {named}: {problem}")
        if relative == PROVENANCE_FILE or relative.startswith(f"{OWN_DIR}/") or relative.endswith(PARTIAL_SUFFIX):
            raise refuse(f"names {named}, which is where das keeps its own records")
        if relative in paths:
            raise refuse(f"names {named} twice")
        paths.add(relative)
        get = file["get"]
        if "download" in get and get["download"] >= len(plan["downloads"]):
            raise refuse(f"fetches {named} with download {get['download']}, which it does not list")
        if "url" in get and not re.match(r"^https?://", get["url"], re.IGNORECASE):
            raise refuse(f"fetches {named} from a URL that is not HTTP(S)")
    # A path that is a directory of another cannot be written beside it.
    for relative in paths:
        segments = relative.split("/")
        for n in range(1, len(segments)):
            parent = "/".join(segments[:n])
            if parent in paths:
                raise refuse(f"names both {shown(repr(parent))} and a file under it")
    return plan


def narrowed(body: dict[str, Any], files: list[PlannedFile], whole: bool) -> list[dict[str, Any]]:
    """The download `body` for only `files` of it (the rest are on disk): its episodes set to those
    the plan requests these files with (`get.episode_id`), in place of a filter or of the whole
    version, in as many bodies as the API's body size takes."""
    if whole:
        return [body]
    ids = list(dict.fromkeys(f["get"]["episode_id"] for f in files if f["get"].get("episode_id")))
    if not ids:
        return [body]
    scope = {k: v for k, v in body.items() if k not in ("filter", "episode_ids")}
    bodies: list[dict[str, Any]] = []
    batch: list[str] = []
    chars = 0
    for episode_id in ids:
        if batch and chars + len(episode_id) + 3 > MAX_BODY_CHARS:
            bodies.append({**scope, "episode_ids": batch})
            batch, chars = [], 0
        batch.append(episode_id)
        chars += len(episode_id) + 3
    bodies.append({**scope, "episode_ids": batch})
    return bodies


def by_key(items: list[Any], key: Callable[[Any], Any]) -> dict[Any, list[Any]]:
    grouped: dict[Any, list[Any]] = {}
    for item in items:
        grouped.setdefault(key(item), []).append(item)
    return grouped
