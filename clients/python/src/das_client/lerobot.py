"""What a pull of a LeRobot version adds to fetching its files, once every one of them is verified
on disk, as `das pull` does it (lib/client/lerobot-pull.ts). The service decided it all: meta/
comes rendered for the episodes delivered whole, as a file like any other; a v3.0 data file LeRobot
could not open as delivered comes with a `transform`, carried out here from its bytes as fetched,
which stay under .das/original/ (so a later run, or `sync`, writes it again without fetching it,
which would be another disclosure)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any, Optional

import pyarrow as pa
import pyarrow.parquet as pq

from .plan import ORIGINALS_DIR, Plan, PlannedFile, fetched_place, path_inside
from .transfer import sha256_file

RENUMBERED_COLUMNS = ["episode_index", "index"]


class DataRowsError(Exception):
    """A data file the transform does not describe (or that is no data file at all): nothing was written."""


def rewrite_data_rows(source: Path, target: Path, transform: dict[str, Any], label: str) -> dict[str, int]:
    """Writes `source` (a fetched data file) transformed to `target`, as lib/lerobot/data-rows.ts
    does: its rows in their order, the frames of `dropped_episode_indices` left out, each other
    frame's `episode_index` and `index` moved; every other column, the schema, the key/value
    metadata and the row groups as fetched. Every frame is checked against the transform (the plan
    comes from a server the client does not trust): one that does not describe the file is refused."""

    def refuse(why: str) -> DataRowsError:
        return DataRowsError(f"{label}: {why}")

    try:
        parquet = pq.ParquetFile(source)
    except FileNotFoundError:
        raise refuse("file is missing") from None
    except (OSError, pa.ArrowException) as error:
        raise refuse(str(error)) from None
    schema = parquet.schema_arrow
    lacking = [c for c in RENUMBERED_COLUMNS if c not in schema.names]
    if lacking:
        raise refuse(f"no {', '.join(lacking)} column")
    by_original = {e["episode_index"]: e for e in transform["episodes"]}
    dropped = set(transform["dropped_episode_indices"])
    counts: dict[int, int] = {}
    expected = transform["episodes"][0]["new_index_from"] if transform["episodes"] else 0
    rows = left = 0
    try:
        with pq.ParquetWriter(target, schema) as writer:
            for group in range(parquet.num_row_groups):
                table = parquet.read_row_group(group)
                keep: list[int] = []
                new_episode: list[int] = []
                new_index: list[int] = []
                originals = table.column("episode_index").to_pylist()
                for i, (original, index) in enumerate(zip(originals, table.column("index").to_pylist())):
                    e = by_original.get(int(original))
                    if e is None:
                        if int(original) not in dropped:
                            raise refuse(f"holds frames of episode {original}, which the plan does not name")
                        left += 1
                        continue
                    if not e["index_from"] <= index < e["index_from"] + e["length"]:
                        raise refuse(
                            f"frame index {index} of episode {original} is outside the plan's {e['index_from']}..{e['index_from'] + e['length']}"
                        )
                    renumbered = e["new_index_from"] + (index - e["index_from"])
                    if renumbered != expected:
                        raise refuse(f"frame index {index} of episode {original} is not in the plan's order")
                    expected += 1
                    counts[e["episode_index"]] = counts.get(e["episode_index"], 0) + 1
                    keep.append(i)
                    new_episode.append(e["new_episode_index"])
                    new_index.append(renumbered)
                kept = table.take(pa.array(keep, pa.int64()))
                for column, values in (("episode_index", new_episode), ("index", new_index)):
                    position = kept.schema.get_field_index(column)
                    field = kept.schema.field(column)
                    kept = kept.set_column(position, field, pa.array(values, pa.int64()).cast(field.type))
                if kept.num_rows:
                    writer.write_table(kept, row_group_size=max(1, kept.num_rows))
                rows += kept.num_rows
        for e in transform["episodes"]:
            n = counts.get(e["episode_index"], 0)
            if n != e["length"]:
                raise refuse(f"episode {e['episode_index']} has {n} frames, the plan says {e['length']}")
    except DataRowsError:
        target.unlink(missing_ok=True)
        raise
    except (OSError, ValueError, TypeError, pa.ArrowException) as error:
        target.unlink(missing_ok=True)
        raise refuse(str(error)) from None
    return {"rows": rows, "dropped": left}


def write_transformed(root: Path, plan: Plan, earlier: Optional[dict[str, Any]]) -> dict[str, Any]:
    """Writes every transformed file of the plan from its bytes as fetched. A file an earlier run
    wrote from the same bytes with the same transform, still as it wrote it, is kept."""
    out: dict[str, Any] = {"written": [], "rewritten": 0, "kept": 0, "failed": []}
    lerobot = plan["lerobot"] or {}
    left_out = set(lerobot.get("left_out") or [])
    renumbered = bool(lerobot.get("renumbering"))
    for file in plan["files"]:
        transform = file.get("transform")
        if not transform:
            continue
        try:
            target = path_inside(root, file["path"])
            before = next((w for w in (earlier or {}).get("written") or [] if w.get("path") == file["path"]), None)
            if (
                before
                and (before.get("from") or {}).get("sha256") == file["sha256"]
                and _canonical(before.get("transform")) == _canonical(transform)
                and target.is_file()
                and sha256_file(target) == before.get("sha256")
            ):
                out["written"].append({**before, "change": _change_of(file, left_out, renumbered)})
                out["kept"] += 1
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f"{target.name}.{secrets.token_hex(6)}.tmp")
            try:
                rewrite_data_rows(path_inside(root, fetched_place(file)), temporary, transform, file["path"])
                os.replace(temporary, target)
            finally:
                temporary.unlink(missing_ok=True)
            out["written"].append(
                {
                    "path": file["path"],
                    "sha256": sha256_file(target),
                    "from": {"path": fetched_place(file), "sha256": file["sha256"]},
                    "transform": transform,
                    "change": _change_of(file, left_out, renumbered),
                }
            )
            out["rewritten"] += 1
        except (OSError, ValueError, DataRowsError) as error:
            out["failed"].append({"path": file["path"], "reason": str(error)})
    return out


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _change_of(file: PlannedFile, left_out: set[str], renumbered_subset: bool) -> str:
    transform = file["transform"]
    dropped = [e for e in file["episode_ids"] if e in left_out]
    changes = [
        f"the frames of {', '.join(dropped)} (not in meta/: not every file of theirs was delivered) left out" if dropped else None,
        # A renumbered subset writes each data file renumbered, one whose episodes keep their indices too.
        f"{' and '.join(transform['changed_columns'])} renumbered as in renumbering.episodes" if renumbered_subset else None,
    ]
    listed = "; ".join(c for c in changes if c)
    rest = " (less the rows left out)" if dropped else ""
    return f"{listed}; every other column, the schema, the key/value metadata and the row groups as delivered{rest}"


def remove_leftovers(root: Path, plan: Plan, earlier: Optional[dict[str, Any]]) -> None:
    """What an earlier run left that the plan no longer wants: a file under meta/ it does not list
    (meta/ must describe exactly what LeRobot finds), a copy under .das/original/ of a file now kept
    at its path, and an older pull's copy of the version's meta/ under .das/original/meta."""
    planned = {f["path"] for f in plan["files"]}
    recorded = [f.get("path") for f in (earlier or {}).get("files") or []] + [
        w.get("path") for w in (earlier or {}).get("written") or []
    ]
    for relative in dict.fromkeys(recorded):
        if isinstance(relative, str) and relative.startswith("meta/") and relative not in planned:
            path_inside(root, relative).unlink(missing_ok=True)
    originals = path_inside(root, ORIGINALS_DIR)
    if originals.is_dir() and any(originals.iterdir()):
        for file in plan["files"]:
            if not file.get("transform"):
                path_inside(root, f"{ORIGINALS_DIR}/{file['path']}").unlink(missing_ok=True)
    old_meta = path_inside(root, f"{ORIGINALS_DIR}/meta")
    if old_meta.is_dir():
        shutil.rmtree(old_meta)


def lerobot_result(plan: Plan, outcome: dict[str, Any], root: Path, provenance: Path, keep_original_indices: bool):
    """The summary of a LeRobot pull: the plan's, with what this run wrote."""
    lr = plan["lerobot"]
    if not lr:
        return None
    transformed = [f for f in plan["files"] if f.get("transform")]
    left_out = set(lr["left_out"])
    dropped = sorted({e for f in transformed for e in f["episode_ids"] if e in left_out}, key=lambda s: s.encode())
    counts = {"data_files_written": outcome["rewritten"], "data_files_kept": outcome["kept"]}
    where, repo = json.dumps(str(root.resolve())), json.dumps(plan["dataset_id"])
    if not lr["episode_indices"]:
        open_with = None
    elif lr["loads_as_is"]:
        open_with = f"LeRobotDataset({repo}, root={where})"
    elif lr.get("open_with_episodes") is not None:
        open_with = f"LeRobotDataset({repo}, root={where}, episodes=[{', '.join(map(str, lr['open_with_episodes']))}])"
    else:
        open_with = None
    note = [
        lr.get("note"),
        "das pull writes the data files renumbered 0..k-1 for LeRobot without --keep-original-indices."
        if keep_original_indices and not lr["loads_as_is"]
        else None,
    ]
    return {
        "codebase_version": lr["codebase_version"],
        "episode_indices": lr["episode_indices"],
        "requested": lr["requested"],
        "co_delivered": lr["co_delivered"],
        "left_out": lr["left_out"],
        "meta": lr["meta"],
        "cameras": lr["cameras"],
        "data_rewritten": {"written": outcome["rewritten"], "kept": outcome["kept"], "dropped_episodes": dropped}
        if transformed
        else None,
        "renumbered": {"episodes": lr["renumbering"], **counts} if lr.get("renumbering") else None,
        "missing_files": lr["missing_files"],
        "loads_as_is": lr["loads_as_is"],
        "loads_with_episode_list": lr["loads_with_episode_list"],
        "note": " ".join(n for n in note if n) or None,
        "open_with": open_with,
        "provenance": str(provenance),
    }
