"""`Client.sync`: a pulled directory brought in line with the withdrawal notices, as `das sync` does
it (lib/client/sync.ts).

It reads the directory's das-provenance.json (which download delivered which file of which
episodes), takes the notices naming one of those downloads, deletes every file that holds a
withdrawn episode (a shared LeRobot v3.0 file takes the other episodes it holds with it), has a
LeRobot directory's meta/ (and the data files written for it) made again for the episodes left by
carrying out the service's plan of them (it fetches no file of an episode: they are all on disk),
records what it did in the provenance (counts only: no withdrawn episode's id stays in the
directory) and acknowledges each notice with the paths it deleted.

The server is not trusted: every path the provenance names is checked to stay inside the directory
(no `..`, no absolute path, no symbolic link out) before anything is touched, the plan is checked as
a pull checks it, notices are read a page at a time and only those naming this directory's
downloads are kept.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional, Union

from .errors import DasError
from .plan import ORIGINALS_DIR, PROVENANCE_FILE, path_inside
from .provenance import PROVENANCE_MAX_BYTES, now_iso, write_provenance

if TYPE_CHECKING:
    from .client import Client

NOTICE_PAGE = 100


class SyncError(DasError):
    """A directory `sync` cannot work on: no provenance, one from before episodes were recorded, or an unsafe one."""


@dataclass
class SyncNotice:
    notice_id: str
    episode_ids: list[str]
    acknowledgement_id: Optional[str] = None


@dataclass
class SyncResult:
    """What `sync` did (or, with dry_run, would do), field for field as `das sync --json` prints it."""

    dir: str
    dataset_id: str
    version: str
    dry_run: bool
    notices: list[SyncNotice] = field(default_factory=list)
    withdrawn_episodes: list[str] = field(default_factory=list)
    also_removed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    meta: Optional[str] = None
    # Why meta/ was removed although episodes are left (the service would not plan them), or None.
    note: Optional[str] = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _byte_key(s: str) -> bytes:
    return s.encode()


def _inside(root: Path, relative: Any) -> Path:
    try:
        return path_inside(root, relative if isinstance(relative, str) else "")
    except ValueError as error:
        raise SyncError(f"{PROVENANCE_FILE}: {error}") from None


def _read_provenance(root: Path) -> dict[str, Any]:
    try:
        file = path_inside(root, PROVENANCE_FILE)
        size = file.stat().st_size
        if size > PROVENANCE_MAX_BYTES:
            raise SyncError(f"{file} is {size} bytes, more than a provenance of any pull ({PROVENANCE_MAX_BYTES})")
        document = json.loads(file.read_text("utf-8"))
    except (OSError, ValueError):
        raise SyncError(
            f"{root} has no readable {PROVENANCE_FILE}: sync works on a directory a pull wrote (it says which download delivered which file)."
        ) from None
    files = document.get("files") if isinstance(document, dict) else None
    if not isinstance(files, list) or any(not isinstance(f, dict) or not isinstance(f.get("episode_ids"), list) for f in files):
        raise SyncError(
            f"{PROVENANCE_FILE} in {root} does not say which episodes each file holds (an older pull wrote it): pull the version again into a new directory."
        )
    # Every path it names is checked before anything is deleted or written.
    for f in files:
        _inside(root, f.get("path"))
        if f.get("stored_at"):
            _inside(root, f["stored_at"])
    for w in document.get("written") or []:
        _inside(root, w.get("path"))
    return document


def _notices_concerning(client: "Client", downloads: set[str]) -> Iterator[dict[str, Any]]:
    """The organisation's withdrawal notices that name one of these downloads, read a page at a
    time (the client's own paging, which stops a list that would never end)."""
    for page in client._pages("/notices", page_size=NOTICE_PAGE):
        for notice in page.get("notices", []):
            if notice.get("kind", "withdrawal") == "withdrawal" and any(
                d.get("download_id") in downloads for d in notice.get("deliveries", [])
            ):
                yield notice


def sync(client: "Client", directory: Union[str, Path], dry_run: bool = False, statement: Optional[str] = None) -> SyncResult:
    root = Path(directory)
    provenance = _read_provenance(root)
    files: list[dict[str, Any]] = provenance["files"]
    ours = {d.get("download_id") for d in provenance.get("downloads") or []} | {
        f["download_id"] for f in files if f.get("download_id")
    }
    notices = list(_notices_concerning(client, ours))
    withdrawn = {e for n in notices for e in n.get("episode_ids", [])}
    doomed = [f for f in files if any(e in withdrawn for e in f["episode_ids"])]
    removed_episodes = {e for f in doomed for e in f["episode_ids"]}
    in_directory = {e for f in files for e in f["episode_ids"]}

    # Every place a doomed file is kept: where it was delivered to, its copy as fetched, and what the pull wrote from it.
    doomed_places = {p for f in doomed for p in (f["path"], f.get("stored_at")) if p}
    written_from = [
        w
        for w in provenance.get("written") or []
        if w["path"] in doomed_places or (w.get("from") or {}).get("path") in doomed_places
    ]
    candidates = sorted(doomed_places | {w["path"] for w in written_from}, key=_byte_key)
    deleted = [p for p in candidates if _inside(root, p).exists()]

    lerobot = provenance.get("source_format") == "lerobot"
    listed = [e for e in _listed_episodes(provenance) if e not in removed_episodes] if lerobot else []
    result = SyncResult(
        dir=str(root),
        dataset_id=provenance["dataset_id"],
        version=provenance["version"],
        dry_run=dry_run,
        notices=[SyncNotice(n["notice_id"], [e for e in n.get("episode_ids", []) if e in in_directory]) for n in notices],
        withdrawn_episodes=sorted((e for e in withdrawn if e in in_directory), key=_byte_key),
        also_removed=sorted((e for e in removed_episodes if e not in withdrawn), key=_byte_key),
        deleted=deleted,
        meta=("rewritten" if listed else "removed") if lerobot and doomed else None,
    )
    if dry_run or not notices:
        return result

    made, why = _rewrite_for(client, root, provenance, listed) if lerobot and doomed and listed else (None, None)
    for relative in deleted:
        _inside(root, relative).unlink(missing_ok=True)
    if lerobot and doomed and made is None:
        shutil.rmtree(_inside(root, "meta"), ignore_errors=True)
        shutil.rmtree(_inside(root, f"{ORIGINALS_DIR}/meta"), ignore_errors=True)
        if listed:
            result.meta = "removed"
            result.note = why

    following = dict(made or provenance)
    following["request"] = _without_episodes(provenance.get("request"), removed_episodes)
    following["downloads"] = [
        {**d, "co_delivered_episode_ids": [e for e in d.get("co_delivered_episode_ids", []) if e not in removed_episodes]}
        for d in provenance.get("downloads") or []
    ]
    synced_at = now_iso()
    following["withdrawals"] = [_without_episode_ids(w) for w in provenance.get("withdrawals") or []] + [
        {"notice_id": n.notice_id, "episodes": len(n.episode_ids), "deleted_files": len(deleted), "synced_at": synced_at}
        for n in result.notices
    ]
    if made is None:
        following["files"] = [f for f in files if f not in doomed]
        if following.get("written") is not None:
            following["written"] = [
                w for w in following["written"] if w["path"] not in deleted and not w["path"].startswith("meta/")
            ]
    episodes = provenance.get("episodes")
    if episodes:
        left = set(episodes.get("left_out", [])) | set(((made or {}).get("episodes") or {}).get("left_out", []))
        following["episodes"] = {
            "requested": [e for e in episodes.get("requested", []) if e not in removed_episodes],
            "co_delivered": [e for e in episodes.get("co_delivered", []) if e not in removed_episodes],
            "left_out": sorted((e for e in left if e not in removed_episodes), key=_byte_key),
            "episode_indices": ((made or {}).get("episodes") or {}).get("episode_indices", []),
        }
    write_provenance(root, following)
    _acknowledge(client, statement, provenance, notices, result, doomed, deleted, written_from)
    return result


def _listed_episodes(provenance: dict[str, Any]) -> list[str]:
    """The episodes meta/ lists: those delivered whole (every one delivered, less those left out of meta/)."""
    episodes = provenance.get("episodes")
    if not episodes:
        return []
    left_out = set(episodes.get("left_out", []))
    delivered = list(episodes.get("requested", [])) + list(episodes.get("co_delivered", []))
    return sorted((e for e in delivered if e not in left_out), key=_byte_key)


def _rewrite_for(client: "Client", root: Path, provenance: dict[str, Any], listed: list[str]):
    """The service's plan of the episodes left, in the streams pulled, carried out without fetching
    any file of an episode: meta/ rendered for them comes by URL, data files are transformed again
    from their copies as fetched. (None, why) when the service would not plan them (a licence
    ended, say) or a file of theirs is not on disk."""
    from .client import plan_request
    from .pull import ask_for_plan, carry_out_plan

    recorded = provenance.get("request") or {}
    request = plan_request(
        episode_ids=listed,
        streams=recorded.get("streams") if "streams" in recorded else _pulled_streams(root),
        keep_original_indices=bool(recorded.get("keep_original_indices")),
    )
    dataset_id, version = provenance["dataset_id"], provenance["version"]
    gone = "so it was removed: nothing in the directory describes a withdrawn episode. Pull the version again to get it back."
    try:
        plan = ask_for_plan(client, dataset_id, version, request)
        summary, made = carry_out_plan(client, plan, root, dataset_id, version, request, downloads=False, progress=False)
    except DasError as error:
        return None, f"meta/ could not be made again for the episodes left ({error}), {gone}"
    if made is not None:
        return made, None
    failed = summary.failed[0] if summary.failed else {"path": "?", "reason": "interrupted"}
    return None, f"meta/ could not be made again for the episodes left ({failed['path']}: {failed['reason']}), {gone}"


def _pulled_streams(root: Path) -> Optional[list[str]]:
    """The streams an older pull wrote (it did not record its request): the data and the cameras meta/info.json declares."""
    try:
        info = json.loads(path_inside(root, "meta/info.json").read_text("utf-8"))
        features = info.get("features") or {}
        return ["data", *(k for k, f in features.items() if isinstance(f, dict) and f.get("dtype") == "video")]
    except (OSError, ValueError, AttributeError):
        return None


def _without_episodes(request: Optional[dict[str, Any]], gone: set[str]) -> Optional[dict[str, Any]]:
    """The request as recorded, less the withdrawn episodes it named (nothing in the directory names them any more)."""
    if not request or not request.get("episode_ids"):
        return request
    rest = {k: v for k, v in request.items() if k != "episode_ids"}
    left = [e for e in request["episode_ids"] if e not in gone]
    return {**rest, "episode_ids": left} if left else rest


def _acknowledge(client, statement, provenance, notices, result, doomed, deleted, written_from) -> None:
    """Each notice is told which of the files its own downloads delivered went, by the paths the
    service named (it takes no other); one acknowledged already only when this run deleted some."""
    said = statement or (
        f"das sync deleted {len(deleted)} file(s) of the withdrawn episodes from a pulled copy of {provenance['dataset_id']}@{provenance['version']}."
    )
    gone = set(deleted)
    for entry, notice in zip(result.notices, notices):
        paths = _delivered_files_deleted(notice, doomed, gone, written_from)
        if notice.get("acknowledged_at") and not paths:
            continue
        made = client.acknowledge(entry.notice_id, said, paths)
        entry.acknowledgement_id = made["acknowledgement_id"]


def _delivered_files_deleted(
    notice: dict[str, Any], doomed: list[dict[str, Any]], gone: set[str], written_from: list[dict[str, Any]]
) -> list[str]:
    """The files holding one of a notice's episodes of which this run deleted a copy (where it was
    delivered to, its copy as fetched, or what the pull wrote from it), by their paths, in byte
    order: what the notice's acknowledgement lists."""
    episodes = set(notice.get("episode_ids", []))
    paths = []
    for f in doomed:
        if not episodes.intersection(f["episode_ids"]):
            continue
        places = {p for p in (f["path"], f.get("stored_at")) if p}
        if places & gone or any(
            w["path"] in gone and (w["path"] in places or (w.get("from") or {}).get("path") in places) for w in written_from
        ):
            paths.append(f["path"])
    return sorted(paths, key=_byte_key)


def _without_episode_ids(record: dict[str, Any]) -> dict[str, Any]:
    """A record an earlier sync wrote with the episodes' ids and paths, reduced to what is kept now."""
    if "episode_ids" not in record:
        return record
    return {
        "notice_id": record["notice_id"],
        "episodes": len(record["episode_ids"]),
        "deleted_files": len(record.get("deleted", [])),
        "synced_at": record["synced_at"],
    }
