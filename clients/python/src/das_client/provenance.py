"""`das-provenance.json`, field for field as `das pull` writes it (lib/client/provenance.ts): the
plan's revision and request, every file of the plan with the download that delivered it and where
its fetched bytes are kept, each file written from them, and what `sync` did."""

from __future__ import annotations

import json
import os
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from .plan import PROVENANCE_FILE, Plan, fetched_place, path_inside

# A provenance is a few hundred bytes per file: this is millions of files, and bounds what is read.
PROVENANCE_MAX_BYTES = 512 * 1024 * 1024


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def read_provenance(root: Path) -> Optional[dict[str, Any]]:
    """The directory's provenance as a dict, or None when there is none readable."""
    try:
        file = path_inside(root, PROVENANCE_FILE)
        if file.stat().st_size > PROVENANCE_MAX_BYTES:
            return None
        document = json.loads(file.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def earlier_provenance(root: Path, dataset_id: str, version: str) -> Optional[dict[str, Any]]:
    """The directory's provenance if it is of this version (a pull into a directory of another starts afresh)."""
    document = read_provenance(root)
    if document and document.get("dataset_id") == dataset_id and document.get("version") == version:
        return document
    return None


def provenance_of(
    plan: Plan,
    request: dict[str, Any],
    earlier: Optional[dict[str, Any]],
    delivered_by: dict[str, str],
    downloads: list[dict[str, Any]],
    written: list[dict[str, Any]],
) -> dict[str, Any]:
    """The provenance of a plan carried out: every file of the plan, the downloads of this run after
    those of earlier runs, and for a file this run did not fetch, the download an earlier run
    recorded for the same bytes. Sync records (`withdrawals`) are kept."""
    earlier = earlier or {}
    before = {f"{f.get('path')}\0{f.get('sha256')}": f.get("download_id") for f in earlier.get("files") or []}
    all_downloads = list(earlier.get("downloads") or [])
    for d in downloads:
        if not any(e.get("download_id") == d["download_id"] for e in all_downloads):
            all_downloads.append(d)
    lerobot = plan["lerobot"]
    document: dict[str, Any] = {
        "dataset_id": plan["dataset_id"],
        "version": plan["version"],
        "revision": plan["revision"],
        "source_format": "lerobot" if lerobot else "files",
    }
    if lerobot:
        document["codebase_version"] = lerobot["codebase_version"]
    document["written_at"] = now_iso()
    document["request"] = request
    if lerobot:
        document["episodes"] = {k: lerobot[k] for k in ("requested", "co_delivered", "left_out", "episode_indices")}
    document["downloads"] = all_downloads
    document["files"] = [
        {
            "path": f["path"],
            "sha256": f["sha256"],
            "size_bytes": f["size_bytes"],
            "episode_ids": f["episode_ids"],
            "download_id": delivered_by.get(f["path"]) or before.get(f"{f['path']}\0{f['sha256']}"),
            "stored_at": fetched_place(f),
        }
        for f in plan["files"]
    ]
    if lerobot:
        document["renumbering"] = renumbering_of(plan)
        document["written"] = written
    if earlier.get("withdrawals"):
        document["withdrawals"] = earlier["withdrawals"]
    return document


def renumbering_of(plan: Plan) -> Optional[dict[str, Any]]:
    """Each renumbered episode's index and frame range before and after, from the plan's transforms."""
    mapping = (plan["lerobot"] or {}).get("renumbering")
    if not mapping:
        return None
    id_of = {e["original_episode_index"]: e["episode_id"] for e in mapping}
    transforms = [f["transform"] for f in plan["files"] if f.get("transform")]
    episodes = sorted((e for t in transforms for e in t["episodes"]), key=lambda e: e["new_episode_index"])
    return {
        "changed_columns": transforms[0]["changed_columns"] if transforms else [],
        "episodes": [
            {
                "episode_id": id_of.get(e["episode_index"], ""),
                "original_episode_index": e["episode_index"],
                "episode_index": e["new_episode_index"],
                "original_dataset_from_index": e["index_from"],
                "original_dataset_to_index": e["index_from"] + e["length"],
                "dataset_from_index": e["new_index_from"],
                "dataset_to_index": e["new_index_from"] + e["length"],
            }
            for e in episodes
        ],
    }


def write_atomically(target: Path, content: bytes) -> None:
    """Written beside its place and renamed there: a reader never sees half of it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f"{target.name}.{secrets.token_hex(6)}.tmp")
    try:
        temporary.write_bytes(content)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def write_provenance(root: Path, document: dict[str, Any]) -> Path:
    file = path_inside(root, PROVENANCE_FILE)
    write_atomically(file, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())
    return file
