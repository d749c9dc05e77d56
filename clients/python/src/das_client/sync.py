"""`Client.sync`: a pulled directory brought in line with the withdrawal notices, as `das sync` does.

It reads the directory's das-provenance.json (which download delivered which file of which
episodes), takes the notices naming one of those downloads, deletes every file that holds a
withdrawn episode (a shared LeRobot v3.0 file takes the other episodes it holds with it), writes a
LeRobot directory's meta/ again for the episodes left, cuts the version's meta/ kept under
.das/original/ down to them, records what it did in the provenance (counts only: no withdrawn
episode's id stays in the directory) and acknowledges each notice with the paths it deleted.

The server is not trusted: every path is checked to stay inside the directory (no `..`, no
absolute path, no symbolic link on the way) before anything is touched, notices are read a page at
a time and only those naming this directory's downloads are kept, and nothing is written outside
the directory.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional, Union

from .errors import DasError
from .lerobot import (
    ORIGINALS_DIR,
    PROVENANCE_FILE,
    RENUMBERED_COLUMNS,
    _is_prefix,
    _trim_original_meta,
    write_atomically,
    write_subset_meta,
)
from .transfer import destination, sha256_file

if TYPE_CHECKING:
    from .client import Client

# A provenance is a few hundred bytes per file: this is millions of files, and bounds what is read.
PROVENANCE_MAX_BYTES = 512 * 1024 * 1024
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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _byte_key(s: str) -> bytes:
    return s.encode()


def _inside(root: Path, relative: str) -> Path:
    try:
        return destination(root, relative)
    except ValueError as error:
        raise SyncError(f"{PROVENANCE_FILE}: {str(error).replace('in the manifest', 'in the provenance')}") from None


def _read_provenance(root: Path) -> dict[str, Any]:
    file = _inside(root, PROVENANCE_FILE)
    try:
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
        _inside(root, f["path"])
        if f.get("stored_at"):
            _inside(root, f["stored_at"])
    for w in document.get("written") or []:
        _inside(root, w["path"])
    return document


def _notices_concerning(client: "Client", downloads: set[str]) -> Iterator[dict[str, Any]]:
    """The organisation's notices that name one of these downloads, read a page at a time (the
    client's own paging, which stops a list that would never end)."""
    for page in client._pages("/notices", page_size=NOTICE_PAGE):
        for notice in page.get("notices", []):
            if any(d.get("download_id") in downloads for d in notice.get("deliveries", [])):
                yield notice


def _video_keys_of(root: Path) -> Optional[list[str]]:
    try:
        info = json.loads((root / "meta" / "info.json").read_text("utf-8"))
        return [k for k, f in (info.get("features") or {}).items() if isinstance(f, dict) and f.get("dtype") == "video"]
    except (OSError, ValueError):
        return None


def sync(client: "Client", directory: Union[str, Path], dry_run: bool = False, statement: Optional[str] = None) -> SyncResult:
    root = Path(directory)
    provenance = _read_provenance(root)
    files: list[dict[str, Any]] = provenance["files"]
    ours = {d["download_id"] for d in provenance.get("downloads") or []} | {f["download_id"] for f in files if f.get("download_id")}
    in_directory = {e for f in files for e in f["episode_ids"]}
    notices: list[dict[str, Any]] = []
    for notice in _notices_concerning(client, ours):
        # Only what concerns this directory is kept of a notice, however many episodes it names.
        notices.append({**notice, "episode_ids": [e for e in notice.get("episode_ids", []) if e in in_directory]})
    withdrawn = {e for n in notices for e in n["episode_ids"]}
    doomed = [f for f in files if any(e in withdrawn for e in f["episode_ids"])]
    doomed_ids = {id(f) for f in doomed}
    removed_episodes = {e for f in doomed for e in f["episode_ids"]}

    # Every place a doomed file is kept: where it was delivered to, its copy as delivered, and what the pull wrote from it.
    doomed_places = {p for f in doomed for p in (f["path"], f.get("stored_at")) if p}
    written_from = [
        w
        for w in provenance.get("written") or []
        if w["path"] in doomed_places or ((w.get("from") or {}).get("path") in doomed_places)
    ]
    candidates = sorted(doomed_places | {w["path"] for w in written_from}, key=_byte_key)
    deleted = [p for p in candidates if _inside(root, p).exists()]

    lerobot = provenance if provenance.get("source_format") == "lerobot" else None
    dataset_id = provenance["dataset_id"]
    id_of = lambda e: f"{dataset_id}-{e:06d}"  # noqa: E731
    remaining = [e for e in (lerobot or {}).get("episodes", {}).get("episode_indices", []) if id_of(e) not in removed_episodes]
    result = SyncResult(
        dir=str(root),
        dataset_id=dataset_id,
        version=provenance["version"],
        dry_run=dry_run,
        notices=[SyncNotice(n["notice_id"], list(n["episode_ids"])) for n in notices],
        withdrawn_episodes=sorted(withdrawn, key=_byte_key),
        also_removed=sorted((e for e in removed_episodes if e not in withdrawn), key=_byte_key),
        deleted=deleted,
        meta=("rewritten" if remaining else "removed") if lerobot and doomed else None,
    )
    if dry_run or not notices:
        return result

    for relative in deleted:
        _inside(root, relative).unlink(missing_ok=True)
    kept_files = [f for f in files if id(f) not in doomed_ids]
    written: dict[str, dict[str, Any]] = {}
    renumbered: Optional[dict[str, Any]] = None
    trimmed: Optional[dict[str, Any]] = None
    if lerobot and doomed:
        meta = _inside(root, "meta")
        staging = _inside(root, f".das/sync.{secrets.token_hex(6)}.tmp")
        try:
            if remaining:
                data_files = [f for f in kept_files if f["path"].startswith("data/") and f["episode_ids"]]
                rewrite = lerobot.get("codebase_version") == "v3.0" and (
                    lerobot.get("renumbering") is not None or not _is_prefix(remaining)
                )
                if rewrite:
                    # v3.0 opens by position: the data files are renumbered from the copies as delivered.
                    for f in data_files:
                        if f.get("stored_at") != f["path"]:
                            continue
                        kept = _inside(root, f"{ORIGINALS_DIR}/{f['path']}")
                        kept.parent.mkdir(parents=True, exist_ok=True)
                        os.replace(_inside(root, f["path"]), kept)
                        f["stored_at"] = f"{ORIGINALS_DIR}/{f['path']}"
                subset = write_subset_meta(
                    _inside(root, ORIGINALS_DIR), staging, remaining, _video_keys_of(root), rewrite_data=rewrite
                )
                shutil.rmtree(meta, ignore_errors=True)
                os.replace(staging / "meta", meta)
                by_path = {f["path"]: f for f in data_files}
                for relative in subset["written"]:
                    into = _inside(root, relative)
                    if not relative.startswith("meta/"):
                        into.parent.mkdir(parents=True, exist_ok=True)
                        os.replace(staging / relative, into)
                    delivered = by_path.get(relative)
                    written[relative] = {
                        "sha256": sha256_file(into),
                        "from": {"path": delivered["stored_at"], "sha256": delivered["sha256"]}
                        if delivered and delivered.get("stored_at")
                        else None,
                    }
                rewritten = subset.get("rewrite")
                renumbered = rewritten if rewritten and rewritten.get("renumbered") else None
            else:
                shutil.rmtree(meta, ignore_errors=True)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        # The version's meta/ kept under .das/original/ still lists the withdrawn episodes: cut down to those left.
        meta_files = [f for f in kept_files if not f["episode_ids"] and f["path"].startswith("meta/")]
        trimmed = _trim_original_meta(root, meta_files, remaining)

    synced_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    cut_down = {f["path"] for f in (trimmed or {}).get("files", []) if f["kept_sha256"] != f["sha256"]}
    following = dict(provenance)
    following["downloads"] = [
        {**d, "co_delivered_episode_ids": [e for e in d.get("co_delivered_episode_ids", []) if e not in removed_episodes]}
        for d in provenance.get("downloads") or []
    ]
    following["files"] = [{**f, "stored_at": None} if f["path"] in cut_down else f for f in kept_files]
    following["withdrawals"] = [_without_episode_ids(w) for w in provenance.get("withdrawals") or []] + [
        {"notice_id": n.notice_id, "episodes": len(n.episode_ids), "deleted_files": len(deleted), "synced_at": synced_at}
        for n in result.notices
    ]
    if lerobot:
        kept_written = [w for w in provenance.get("written") or [] if w["path"] not in deleted and w["path"] not in written]
        following["written"] = sorted(
            kept_written
            + [
                {
                    "path": relative,
                    "sha256": w["sha256"],
                    "from": w["from"],
                    "change": f"written again by das sync for the episodes left after a withdrawal: {' and '.join(RENUMBERED_COLUMNS)} renumbered as in renumbering.episodes, the frames of episodes not left dropped"
                    if w["from"]
                    else f"written again by das sync for the episodes left after a withdrawal, from the version's meta/ in {ORIGINALS_DIR}/meta",
                }
                for relative, w in written.items()
            ],
            key=lambda w: _byte_key(w["path"]),
        )
        if trimmed:
            following["meta_originals_trimmed"] = trimmed
        episodes = lerobot.get("episodes", {})
        following["episodes"] = {
            "requested": [e for e in episodes.get("requested", []) if e not in removed_episodes],
            "co_delivered": [e for e in episodes.get("co_delivered", []) if e not in removed_episodes],
            "left_out": [e for e in episodes.get("left_out", []) if e not in removed_episodes],
            "episode_indices": remaining,
        }
        following["renumbering"] = (
            {
                "changed_columns": list(RENUMBERED_COLUMNS),
                "episodes": [
                    {
                        "episode_id": id_of(e["original"]),
                        "original_episode_index": e["original"],
                        "episode_index": e["index"],
                        "original_dataset_from_index": e["original_from"],
                        "original_dataset_to_index": e["original_to"],
                        "dataset_from_index": e["from"],
                        "dataset_to_index": e["to"],
                    }
                    for e in renumbered["episodes"]
                ],
            }
            if renumbered
            else None
        )
    write_atomically(
        _inside(root, PROVENANCE_FILE), (json.dumps(following, indent=2, ensure_ascii=False) + "\n").encode()
    )

    said = statement or (
        f"das sync deleted {len(deleted)} file(s) of the withdrawn episodes from a pulled copy of {dataset_id}@{provenance['version']}."
    )
    # Each notice is told which of the files its own downloads delivered went, by their manifest's
    # paths (the service takes no other); one acknowledged already only when this run deleted some.
    gone = set(deleted)
    for entry, notice in zip(result.notices, notices):
        paths = _delivered_files_deleted(notice, doomed, gone, written_from)
        if notice.get("acknowledged_at") and not paths:
            continue
        made = client.acknowledge(entry.notice_id, said, paths)
        entry.acknowledgement_id = made["acknowledgement_id"]
    return result


def _delivered_files_deleted(
    notice: dict[str, Any], doomed: list[dict[str, Any]], gone: set[str], written_from: list[dict[str, Any]]
) -> list[str]:
    """The files holding one of a notice's episodes of which this run deleted a copy (where it was
    delivered to, its copy as delivered, or what the pull wrote from it), by the path the download's
    manifest names, in byte order: what the notice's acknowledgement lists."""
    episodes = set(notice["episode_ids"])
    paths = []
    for f in doomed:
        if not episodes.intersection(f["episode_ids"]):
            continue
        places = {p for p in (f["path"], f.get("stored_at")) if p}
        if places & gone or any(
            w["path"] in gone and (w["path"] in places or (w.get("from") or {}).get("path") in places)
            for w in written_from
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
