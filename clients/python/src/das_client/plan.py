"""Splitting a pull into download requests, as `das pull` does (lib/client/plan.ts).

A request names a scope (episodes, a filter, or the whole version, each narrowed by streams) and
the server resolves it to every file of that scope; so a request is sized by what it resolves to,
and stays within the server's 10,000 files and its 1 MB body.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

MAX_FILES_PER_DOWNLOAD = 10_000
MAX_BODY_CHARS = 900_000

File = dict[str, Any]


@dataclass
class Scope:
    dataset_id: str
    version: str
    episode_ids: Optional[list[str]] = None
    filter: Optional[dict[str, Any]] = None
    streams: Optional[list[str]] = None
    include_version_files: bool = False


@dataclass
class PlannedRequest:
    body: dict[str, Any]
    files: list[File]
    resolves: int = 0
    split: bool = False


@dataclass
class Plan:
    requests: list[PlannedRequest] = field(default_factory=list)
    unplannable: list[tuple[File, str]] = field(default_factory=list)


def files_in_scope(manifest: dict[str, Any], scope: Scope, episodes: Optional[set[str]]) -> list[File]:
    """The files of the manifest in the scope: every file holding one of the episodes (and of the streams)."""
    out = []
    for f in manifest["files"]:
        if scope.include_version_files and not f["episode_ids"]:
            out.append(f)
        elif (episodes is None or any(e in episodes for e in f["episode_ids"])) and (
            scope.streams is None or (f["stream"] is not None and f["stream"] in scope.streams)
        ):
            out.append(f)
    return out


def plan_requests(
    scope: Scope,
    in_scope: list[File],
    pending: list[File],
    *,
    filter_covers: bool = False,
    limit: int = MAX_FILES_PER_DOWNLOAD,
    episodes: Optional[set[str]] = None,
) -> Plan:
    """Requests that together cover `pending`; a file shared by several chosen episodes is fetched with the first."""
    chosen = episodes if episodes is not None else (set(scope.episode_ids) if scope.episode_ids else None)
    base: dict[str, Any] = {"dataset_id": scope.dataset_id, "version": scope.version}
    if scope.streams:
        base["streams"] = list(scope.streams)

    def with_version_files(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "include_version_files": True} if scope.include_version_files else body

    plan = Plan()
    if not pending:
        return plan
    if len(pending) == len(in_scope) and len(in_scope) <= limit:
        if not scope.episode_ids and not scope.filter:
            plan.requests.append(PlannedRequest(with_version_files(base), list(pending)))
            return plan
        if filter_covers and scope.filter and not scope.episode_ids:
            plan.requests.append(PlannedRequest(with_version_files({**base, "filter": scope.filter}), list(pending)))
            return plan

    version_level = [f for f in pending if not f["episode_ids"]]
    version_level_in_scope = sum(1 for f in in_scope if not f["episode_ids"])
    if version_level and not scope.include_version_files:
        whole = len(in_scope)
        if not scope.episode_ids and not scope.filter and whole <= limit:
            plan.requests.append(PlannedRequest(base, version_level, whole))
        else:
            for f in version_level:
                plan.unplannable.append(
                    (f, f"only a download of the whole version holds it, and that is {whole} files (more than {limit})")
                )

    def requestable(f: File) -> list[str]:
        return [e for e in f["episode_ids"] if chosen is None or e in chosen]

    per_episode: dict[str, list[File]] = {}
    for f in in_scope:
        for e in requestable(f):
            per_episode.setdefault(e, []).append(f)
    pending_by_episode: dict[str, list[File]] = {}
    for f in pending:
        ids = requestable(f)
        if ids:
            pending_by_episode.setdefault(ids[0], []).append(f)

    batch: dict[str, Any] = {"ids": [], "files": [], "resolved": set(), "chars": 0}

    def flush() -> None:
        nonlocal batch
        if batch["ids"]:
            plan.requests.append(
                PlannedRequest({**base, "episode_ids": batch["ids"]}, batch["files"], len(batch["resolved"]))
            )
        batch = {"ids": [], "files": [], "resolved": set(), "chars": 0}

    for episode_id, files in pending_by_episode.items():
        resolving = per_episode[episode_id]
        if len(resolving) > limit:
            groups: dict[Optional[str], list[File]] = {}
            for f in files:
                groups.setdefault(f["stream"], []).append(f)
            for stream, of_stream in groups.items():
                stream_total = sum(1 for f in resolving if f["stream"] == stream)
                if stream is None or stream_total > limit:
                    what = f" of stream {stream}" if stream else " without a stream"
                    for f in of_stream:
                        plan.unplannable.append(
                            (f, f"episode {episode_id} has {stream_total} files{what}, more than one download holds ({limit})")
                        )
                else:
                    plan.requests.append(
                        PlannedRequest({**base, "episode_ids": [episode_id], "streams": [stream]}, of_stream, stream_total, True)
                    )
            continue
        chars = len(episode_id) + 3
        adds = sum(1 for f in resolving if f["path"] not in batch["resolved"])
        if len(batch["resolved"]) + adds > limit or batch["chars"] + chars > MAX_BODY_CHARS or len(batch["ids"]) >= limit:
            flush()
        batch["ids"].append(episode_id)
        batch["files"].extend(files)
        batch["resolved"].update(f["path"] for f in resolving)
        batch["chars"] += chars
    flush()

    if version_level and scope.include_version_files:
        carriers = sorted((r for r in plan.requests if "episode_ids" in r.body and not r.split), key=lambda r: r.resolves)
        carrier = carriers[0] if carriers else None
        if carrier and carrier.resolves + version_level_in_scope <= limit:
            carrier.body = {**carrier.body, "include_version_files": True}
            carrier.files.extend(version_level)
        else:
            smallest = sorted(per_episode.items(), key=lambda kv: len(kv[1]))[0] if per_episode else None
            if smallest and len(smallest[1]) + version_level_in_scope <= limit:
                plan.requests.append(
                    PlannedRequest(
                        {**base, "episode_ids": [smallest[0]], "include_version_files": True},
                        version_level,
                        len(smallest[1]) + version_level_in_scope,
                    )
                )
            elif not smallest and not scope.episode_ids and not scope.filter and version_level_in_scope <= limit:
                plan.requests.append(PlannedRequest(with_version_files(base), version_level, len(in_scope)))
            else:
                for f in version_level:
                    plan.unplannable.append(
                        (f, f"no request for the chosen episodes has room for the {version_level_in_scope} files of the whole version (at most {limit})")
                    )
    return plan


def narrowed(body: dict[str, Any], files: list[File]) -> dict[str, Any]:
    """The same request for fewer files: its episode list cut down to theirs (files of the whole version keep the first)."""
    if "episode_ids" not in body:
        return body
    episodes = {e for f in files for e in f["episode_ids"]}
    kept = [e for e in body["episode_ids"] if e in episodes]
    return {**body, "episode_ids": kept or body["episode_ids"][:1]}
