"""A LeRobot version pulled as a LeRobot dataset of the delivered episodes, as `das pull` writes it
(lib/client/lerobot-pull.ts and lib/lerobot/subset.ts; docs/lerobot.md says what and why):

- the version's `meta/` kept as delivered under `.das/original/`, and `meta/` written for the
  complete episodes (those whose every file of the streams pulled was delivered);
- video files byte for byte at their paths, and data files too, except in v3.0 where LeRobot could
  not open them as delivered (a subset other than episodes 0..k-1, or frames of episodes meta/
  leaves out): then kept as delivered under `.das/original/` and written again, renumbered 0..k-1
  without those frames;
- `das-provenance.json` naming the download behind every file, its sha256 and where it is kept.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

import pyarrow as pa
import pyarrow.parquet as pq

from .transfer import destination as safe_destination, sha256_file

ORIGINALS_DIR = ".das/original"
PROVENANCE_FILE = "das-provenance.json"
RENUMBERED_COLUMNS = ["episode_index", "index"]
INFO_PATH = "meta/info.json"
STATS_PATH = "meta/stats.json"
V2_EPISODES_PATH = "meta/episodes.jsonl"
V2_TASKS_PATH = "meta/tasks.jsonl"
V2_EPISODES_STATS_PATH = "meta/episodes_stats.jsonl"
V3_TASKS_PATH = "meta/tasks.parquet"
V3_EPISODES_DIR = "meta/episodes"
SUBTASKS_PATH = "meta/subtasks.parquet"


class SubsetError(Exception):
    pass


def _byte_key(s: str) -> bytes:
    return s.encode()


def _is_data_file(f: dict[str, Any]) -> bool:
    return f["stream"] == "data" and bool(f["episode_ids"])


def _original(relative: str) -> str:
    return f"{ORIGINALS_DIR}/{relative}"


def episode_index_of(dataset_id: str, episode_id: str) -> int:
    rest = episode_id[len(dataset_id) + 1 :] if episode_id.startswith(f"{dataset_id}-") else ""
    if not rest.isdigit():
        raise SubsetError(f"episode {episode_id} is not named <dataset>-<episode_index>, as a LeRobot import names them")
    return int(rest)


def _is_prefix(episodes: list[int]) -> bool:
    return len(set(episodes)) == len(episodes) and all(e < len(episodes) for e in episodes)


@dataclass
class Layout:
    rewrite: bool
    keep_original_indices: bool
    video_keys: Optional[list[str]]
    delivered: list[str]
    complete: list[str]
    incomplete: list[str]
    indices: list[int]
    id_of: dict[int, str]
    version: str
    trimmed: Optional[dict[str, Optional[str]]] = None

    def trimmed_copy_of(self, f: dict[str, Any]) -> Optional[tuple[Optional[str]]]:
        """A meta/ file an earlier pull cut down to the episodes it delivered: (the sha256 it kept,), or None."""
        if self.trimmed is None:
            return None
        key = f"{f['path']}\0{f['sha256']}"
        return (self.trimmed[key],) if key in self.trimmed else None

    def place_of(self, f: dict[str, Any]) -> str:
        if (not f["episode_ids"] and f["path"].startswith("meta/")) or (self.rewrite and _is_data_file(f)):
            return _original(f["path"])
        return f["path"]

    def alternatives_of(self, f: dict[str, Any]) -> list[str]:
        if self.version == "v3.0" and _is_data_file(f):
            return [f["path"] if self.rewrite else _original(f["path"])]
        return []


def layout(
    manifest: dict[str, Any],
    in_scope: list[dict[str, Any]],
    *,
    keep_original_indices: bool,
    streams: Optional[list[str]],
    trimmed: Optional[dict[str, Any]] = None,
) -> Layout:
    fmt = manifest["format"]
    version = fmt["codebase_version"]
    cameras = [c["key"] for c in fmt.get("cameras", []) if c.get("storage") == "video"]
    video_keys = [k for k in cameras if k in streams] if streams and any(k not in streams for k in cameras) else None
    pulled = streams if streams is not None else manifest["streams"]
    delivered = sorted({e for f in in_scope for e in f["episode_ids"]}, key=_byte_key)
    in_scope_paths = {f["path"] for f in in_scope}
    lacking: set[str] = set()
    for f in manifest["files"]:
        if f["stream"] is not None and f["stream"] in pulled and f["path"] not in in_scope_paths:
            lacking.update(f["episode_ids"])
    complete = [e for e in delivered if e not in lacking]
    id_of = {episode_index_of(manifest["dataset_id"], e): e for e in complete}
    indices = sorted(id_of)
    complete_set = set(complete)
    holds_others = any(_is_data_file(f) and any(e not in complete_set for e in f["episode_ids"]) for f in in_scope)
    rewrite = (
        not keep_original_indices
        and version == "v3.0"
        and any(_is_data_file(f) for f in in_scope)
        and (not _is_prefix(indices) or holds_others)
    )
    trimmed_for = set((trimmed or {}).get("episode_indices", []))
    trimmed_files = (
        {f"{f['path']}\0{f['sha256']}": f["kept_sha256"] for f in trimmed["files"]}
        if trimmed and all(episode_index_of(manifest["dataset_id"], e) in trimmed_for for e in delivered)
        else None
    )
    return Layout(
        trimmed=trimmed_files,
        rewrite=rewrite,
        keep_original_indices=keep_original_indices,
        video_keys=video_keys,
        delivered=delivered,
        complete=complete,
        incomplete=[e for e in delivered if e in lacking],
        indices=indices,
        id_of=id_of,
        version=version,
    )


# -- statistics and splits, as LeRobot computes them ---------------------------------------------


def _zip(trees: list[Any], f: Callable[[list[float]], float]) -> Any:
    arrays = [t for t in trees if isinstance(t, list)]
    if not arrays:
        return f(trees)
    length = max(len(a) for a in arrays)
    return [_zip([(t[i] if i < len(t) else t[-1]) if isinstance(t, list) else t for t in trees], f) for i in range(length)]


def _scalar_count(value: Any) -> float:
    while isinstance(value, list):
        value = value[0] if value else 0
    return value if isinstance(value, (int, float)) else 0


def _weighted(values: list[float], weights: list[float]) -> float:
    total = sum(weights)
    if total == 0:
        return sum(values) / max(len(values), 1)
    return sum(v * w for v, w in zip(values, weights)) / total


def aggregate_stats(stats_list: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """LeRobot's aggregate_stats: min/max element-wise, means weighted by count, std by the parallel-variance formula."""
    features: list[str] = []
    for stats in stats_list:
        features += [k for k in stats if k not in features]
    out: dict[str, dict[str, Any]] = {}
    for feature in features:
        parts = [s[feature] for s in stats_list if feature in s]
        counts = [_scalar_count(p.get("count")) for p in parts]
        total = sum(counts)
        names: list[str] = []
        for p in parts:
            names += [k for k in p if k not in names]
        result: dict[str, Any] = {}
        for name in names:
            have = [(p[name], counts[i]) for i, p in enumerate(parts) if name in p]
            values = [v for v, _ in have]
            if name == "count":
                result["count"] = [total]
            elif name == "min":
                result["min"] = _zip(values, min)
            elif name == "max":
                result["max"] = _zip(values, max)
            elif name == "std":
                continue
            else:
                weights = [n for _, n in have]
                result[name] = _zip(values, lambda xs, w=weights: _weighted(xs, w))
        if all("mean" in p and "std" in p for p in parts):
            mean = result.get("mean") or _zip([p["mean"] for p in parts], lambda xs: _weighted(xs, counts))
            terms = [_zip([p["std"], p["mean"], mean], lambda x: x[0] * x[0] + (x[1] - x[2]) ** 2) for p in parts]
            result["std"] = _zip(terms, lambda xs: math.sqrt(_weighted(xs, counts)))
        out[feature] = result
    return out


def _runs(sorted_values: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for n in sorted_values:
        if out and out[-1][1] == n:
            out[-1][1] = n + 1
        else:
            out.append([n, n + 1])
    return out


def splits_for(original: Optional[dict[str, str]], episodes: list[int], renumbered: Optional[dict[int, int]] = None):
    ordered = sorted(set(episodes))
    splits = original if original else {"train": f"0:{(ordered[-1] if ordered else -1) + 1}"}
    out: dict[str, str] = {}
    for name, spec in splits.items():
        ranges = [tuple(int(x) for x in part.split(":")) for part in spec.split(",")]
        in_split = [e for e in ordered if any(a <= e < b for a, b in ranges)]
        named = sorted(renumbered[e] for e in in_split) if renumbered else in_split
        if named:
            out[name] = ",".join(f"{a}:{b}" for a, b in _runs(named))
    return out


def _stats_from_row(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    stats: dict[str, dict[str, Any]] = {}
    for column, value in row.items():
        if not column.startswith("stats/") or value is None:
            continue
        rest = column[len("stats/") :]
        cut = rest.rfind("/")
        if cut <= 0:
            continue
        stats.setdefault(rest[:cut], {})[rest[cut + 1 :]] = value
    return stats


def _without(stats: dict[str, Any], dropped: list[str]) -> dict[str, Any]:
    return {k: v for k, v in stats.items() if k not in dropped}


def write_atomically(target: Path, content: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f"{target.name}.{secrets.token_hex(6)}.tmp")
    try:
        temporary.write_bytes(content)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def _json4(value: Any) -> bytes:
    return json.dumps(value, indent=4, ensure_ascii=False).encode()


def _read_info(root: Path) -> dict[str, Any]:
    try:
        return json.loads((root / INFO_PATH).read_text("utf-8"))
    except FileNotFoundError:
        raise SubsetError(f"{INFO_PATH}: file is missing") from None
    except ValueError as error:
        raise SubsetError(f"{INFO_PATH}: invalid JSON ({error})") from None


def _video_template(info: dict[str, Any]) -> Optional[str]:
    return info.get("video_path") or (info.get("videos") or {}).get("videos_path")


def _video_keys(info: dict[str, Any]) -> list[str]:
    return [k for k, f in info["features"].items() if f.get("dtype") == "video"]


def _jsonl(root: Path, relative: str) -> list[tuple[str, dict[str, Any]]]:
    try:
        text = (root / relative).read_text("utf-8")
    except FileNotFoundError:
        raise SubsetError(f"{relative}: file is missing") from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            raise SubsetError(f"{relative}:{number}: not a JSON object")
        out.append((line, record))
    return out


def _parquet_files_under(root: Path, relative_dir: str) -> list[str]:
    base = root / relative_dir
    if not base.is_dir():
        return []
    out = []
    for chunk in base.iterdir():
        if chunk.is_dir():
            out += [f"{relative_dir}/{chunk.name}/{f.name}" for f in chunk.iterdir() if f.is_file() and f.name.endswith(".parquet")]
    return sorted(out)


def _path_order(p: str) -> list[bytes]:
    return [s.encode() for s in p.split("/")]


def listed_episodes(root: Path) -> tuple[list[int], list[str]]:
    """The episodes a dataset's meta/ lists, and the data and video files it places them in."""
    info = _read_info(root)
    template = _video_template(info)
    keys = _video_keys(info) if template else []
    episodes: list[int] = []
    files: set[str] = set()
    if info["codebase_version"] != "v3.0":
        chunks = info.get("chunks_size") or 1000
        for _, record in _jsonl(root, V2_EPISODES_PATH):
            e = record["episode_index"]
            episodes.append(e)
            values = {"episode_chunk": e // chunks, "episode_index": e}
            files.add(info["data_path"].format(**values))
            files.update(template.format(**values, video_key=k) for k in keys)
    else:
        for relative in _parquet_files_under(root, V3_EPISODES_DIR):
            for row in pq.read_table(root / relative).to_pylist():
                episodes.append(row["episode_index"])
                files.add(info["data_path"].format(chunk_index=row["data/chunk_index"], file_index=row["data/file_index"]))
                files.update(
                    template.format(
                        video_key=k, chunk_index=row[f"videos/{k}/chunk_index"], file_index=row[f"videos/{k}/file_index"]
                    )
                    for k in keys
                )
    return sorted(episodes), sorted(files)


# -- the subset's meta/ ----------------------------------------------------------------------------


def write_subset_meta(
    source: Path,
    target: Path,
    episodes: list[int],
    video_keys: Optional[list[str]] = None,
    rewrite_data: bool = False,
    unchanged: Optional[Callable[[str], bool]] = None,
) -> dict[str, Any]:
    """meta/ (and, for a rewritten v3.0 subset, the data files) of `source` for `episodes`, written under `target`."""
    selected = sorted(set(episodes))
    if not selected:
        raise SubsetError("a subset needs at least one episode")
    info = _read_info(source)
    v3 = info["codebase_version"] == "v3.0"
    all_keys = _video_keys(info)
    unknown = [k for k in (video_keys or []) if k not in all_keys]
    if unknown:
        raise SubsetError(f"{INFO_PATH} has no video feature {', '.join(unknown)}")
    dropped = [k for k in all_keys if k not in video_keys] if video_keys is not None else []
    plan = _plan_v3(source, info, selected, rewrite_data, dropped) if v3 else _plan_v2(source, info, selected, dropped)

    info["total_episodes"] = len(selected)
    info["total_frames"] = plan["total_frames"]
    info["total_tasks"] = plan["total_tasks"]
    rewrite = plan.get("rewrite")
    renumbered = {e["original"]: e["index"] for e in rewrite["episodes"]} if rewrite and rewrite["renumbered"] else None
    info["splits"] = splits_for(info.get("splits"), selected, renumbered)
    if "total_videos" in info:
        info["total_videos"] = len(plan["video_files"])
    if "total_chunks" in info:
        info["total_chunks"] = plan["max_chunk"] + 1
    info["features"] = {k: v for k, v in info["features"].items() if k not in dropped}
    if (source / SUBTASKS_PATH).is_file():
        content = (source / SUBTASKS_PATH).read_bytes()
        plan["writes"].append((SUBTASKS_PATH, lambda t, c=content: write_atomically(t, c)))

    written: list[str] = []
    data_files = _rewrite_data_files(source, target, rewrite, unchanged) if rewrite else []
    written += [f["path"] for f in data_files if f["written"]]
    for relative, write in plan["writes"]:
        write(target / relative)
        written.append(relative)
    write_atomically(target / INFO_PATH, _json4(info))
    written.append(INFO_PATH)
    if v3:
        for relative in _parquet_files_under(target, V3_EPISODES_DIR):
            if relative not in written:
                (target / relative).unlink()
    in_place = _is_prefix(selected) or bool(rewrite)
    shared = [] if rewrite else plan["shared"]
    opens_as_is = in_place and not shared
    if opens_as_is:
        note = None
    elif not v3:
        note = "LeRobot expects episodes 0..total_episodes-1 unless it is given the list: LeRobotDataset(repo_id, root=D, episodes=[...])"
    elif not in_place:
        note = "LeRobot looks v3.0 episodes up by position (meta.episodes[episode_index]), so a subset other than episodes 0..k-1 opens only with its episodes renumbered 0..k-1 in the data files and the episode metadata"
    else:
        note = f"data files also hold frames of episodes the metadata does not list ({', '.join(f['path'] for f in shared)}), which LeRobot would serve without an episode list; it opens with the list, or with those frames dropped from the data files"
    return {
        "written": written,
        "referenced_files": sorted(plan["data_files"] + plan["video_files"]),
        "rewrite": {**rewrite, "data_files": data_files} if rewrite else None,
        "loads_as_is": opens_as_is,
        "loads_with_episode_list": in_place or not v3,
        "note": note,
    }


def _plan_v2(root: Path, info: dict[str, Any], selected: list[int], dropped: list[str]) -> dict[str, Any]:
    wanted = set(selected)
    lines = [(line, r) for line, r in _jsonl(root, V2_EPISODES_PATH) if r.get("episode_index") in wanted]
    found = {r["episode_index"] for _, r in lines}
    missing = [e for e in selected if e not in found]
    if missing:
        raise SubsetError(f"{V2_EPISODES_PATH} has no episode {', '.join(map(str, missing[:20]))}")
    used = {t for _, r in lines for t in r["tasks"]}
    total_frames = sum(r["length"] for _, r in lines)
    tasks = [line for line, r in _jsonl(root, V2_TASKS_PATH) if r.get("task") in used]
    episode_text = ("\n".join(line for line, _ in lines) + "\n").encode()
    task_text = ("\n".join(tasks) + "\n").encode()
    writes: list[tuple[str, Callable[[Path], None]]] = [
        (V2_EPISODES_PATH, lambda t: write_atomically(t, episode_text)),
        (V2_TASKS_PATH, lambda t: write_atomically(t, task_text)),
    ]
    if info["codebase_version"] == "v2.1":
        stats_lines = [(line, r) for line, r in _jsonl(root, V2_EPISODES_STATS_PATH) if r.get("episode_index") in wanted]
        no_stats = [e for e in selected if e not in {r["episode_index"] for _, r in stats_lines}]
        if no_stats:
            raise SubsetError(f"{V2_EPISODES_STATS_PATH} has no stats for episode {', '.join(map(str, no_stats[:20]))}")
        episode_stats = [_without(r["stats"], dropped) for _, r in stats_lines]
        aggregated = aggregate_stats(episode_stats)
        out_lines = (
            [json.dumps({**r, "stats": episode_stats[i]}, separators=(",", ":")) for i, (_, r) in enumerate(stats_lines)]
            if dropped
            else [line for line, _ in stats_lines]
        )
        stats_text = ("\n".join(out_lines) + "\n").encode()
        writes.append((V2_EPISODES_STATS_PATH, lambda t: write_atomically(t, stats_text)))
        writes.append((STATS_PATH, lambda t: write_atomically(t, _json4(aggregated))))
    elif (root / STATS_PATH).is_file():
        original = json.loads((root / STATS_PATH).read_text("utf-8"))
        writes.append((STATS_PATH, lambda t: write_atomically(t, _json4(_without(original, dropped)))))
    chunks = info.get("chunks_size") or 1000
    template = _video_template(info)
    keys = [k for k in _video_keys(info) if k not in dropped] if template else []
    data_files, video_files = [], []
    for e in selected:
        values = {"episode_chunk": e // chunks, "episode_index": e}
        data_files.append(info["data_path"].format(**values))
        video_files += [template.format(**values, video_key=k) for k in keys]
    return {
        "total_frames": total_frames,
        "total_tasks": len(tasks),
        "data_files": data_files,
        "video_files": video_files,
        "max_chunk": selected[-1] // chunks,
        "writes": writes,
        "shared": [],
    }


def _plan_v3(root: Path, info: dict[str, Any], selected: list[int], rewrite: bool, dropped: list[str]) -> dict[str, Any]:
    wanted = set(selected)
    found: set[int] = set()
    writes: list[tuple[str, Callable[[Path], None]]] = []
    located: dict[int, dict[str, Any]] = {}
    placed_in: dict[str, list[int]] = {}
    kept_by_file: list[tuple[str, pa.Table, list[int]]] = []
    stats: list[dict[str, Any]] = []
    data_files: list[str] = []
    video_files: list[str] = []
    total_frames = 0
    max_chunk = 0
    template = _video_template(info)
    keys = [k for k in _video_keys(info) if k not in dropped] if template else []
    episode_files = _parquet_files_under(root, V3_EPISODES_DIR)
    if not episode_files:
        raise SubsetError(f"no episode metadata under {V3_EPISODES_DIR}")
    for relative in episode_files:
        table = pq.read_table(root / relative)
        kept: list[int] = []
        for i, row in enumerate(table.to_pylist()):
            episode = int(row["episode_index"])
            data_file = info["data_path"].format(chunk_index=row["data/chunk_index"], file_index=row["data/file_index"])
            placed_in.setdefault(data_file, []).append(episode)
            if episode not in wanted:
                continue
            if episode in found:
                raise SubsetError(f"{relative}: episode {episode} appears twice in the episode metadata")
            found.add(episode)
            kept.append(i)
            total_frames += row["length"]
            stats.append(_without(_stats_from_row(row), dropped))
            if data_file not in data_files:
                data_files.append(data_file)
            located[episode] = {
                "data_file": data_file,
                "from": row.get("dataset_from_index"),
                "to": row.get("dataset_to_index"),
                "length": row["length"],
            }
            max_chunk = max(max_chunk, row["data/chunk_index"])
            for k in keys:
                video = template.format(
                    video_key=k, chunk_index=row[f"videos/{k}/chunk_index"], file_index=row[f"videos/{k}/file_index"]
                )
                if video not in video_files:
                    video_files.append(video)
        if kept:
            kept_by_file.append((relative, table, kept))
    missing = [e for e in selected if e not in found]
    if missing:
        raise SubsetError(f"{V3_EPISODES_DIR} has no episode {', '.join(map(str, missing[:20]))}")
    shared = [
        {"path": f, "other_episodes": sorted(e for e in placed_in[f] if e not in wanted)}
        for f in sorted(data_files, key=_path_order)
        if any(e not in wanted for e in placed_in[f])
    ]
    rewriting = _plan_rewrite(selected, located, placed_in) if rewrite and (not _is_prefix(selected) or shared) else None
    by_original = {e["original"]: e for e in rewriting["episodes"]} if rewriting else {}
    for relative, table, kept in kept_by_file:
        subset = table.take(pa.array(kept, pa.int64()))
        if rewriting:
            originals = [int(x) for x in subset.column("episode_index").to_pylist()]
            for column, value in (("episode_index", "index"), ("dataset_from_index", "from"), ("dataset_to_index", "to")):
                position = subset.schema.get_field_index(column)
                values = pa.array([by_original[o][value] for o in originals]).cast(subset.schema.field(column).type)
                subset = subset.set_column(position, subset.schema.field(column), values)
        writes.append((relative, lambda t, s=subset: _write_table(t, s)))
    tasks = root / V3_TASKS_PATH
    if not tasks.is_file():
        raise SubsetError(f"{V3_TASKS_PATH} is missing")
    task_bytes = tasks.read_bytes()
    total_tasks = pq.ParquetFile(tasks).metadata.num_rows
    writes.append((V3_TASKS_PATH, lambda t: None if t.resolve() == tasks.resolve() else write_atomically(t, task_bytes)))
    if any(s for s in stats):
        aggregated = aggregate_stats(stats)
        writes.append((STATS_PATH, lambda t: write_atomically(t, _json4(aggregated))))
    elif (root / STATS_PATH).is_file():
        original = json.loads((root / STATS_PATH).read_text("utf-8"))
        writes.append((STATS_PATH, lambda t: write_atomically(t, _json4(_without(original, dropped)))))
    return {
        "total_frames": total_frames,
        "total_tasks": total_tasks,
        "data_files": data_files,
        "video_files": video_files,
        "max_chunk": max_chunk,
        "writes": writes,
        "rewrite": rewriting,
        "shared": shared,
    }


def _write_table(target: Path, table: pa.Table) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f"{target.name}.{secrets.token_hex(6)}.tmp")
    pq.write_table(table, temporary)
    os.replace(temporary, target)


def _plan_rewrite(selected: list[int], located: dict[int, dict[str, Any]], placed_in: dict[str, list[int]]):
    """Episodes 0..k-1 in ascending original index; `index` 0..N-1 in the order LeRobot reads the frames."""
    wanted = set(selected)
    files: dict[str, list[int]] = {}
    for e in selected:
        where = located[e]
        if not isinstance(where["from"], int) or not isinstance(where["to"], int):
            raise SubsetError(f"episode {e} has no dataset_from_index / dataset_to_index, which rewriting the data files needs")
        files.setdefault(where["data_file"], []).append(e)
    new_index = {e: i for i, e in enumerate(selected)}
    data_files = []
    following = 0
    for data_file in sorted(files, key=_path_order):
        entries = []
        for e in sorted(files[data_file], key=lambda x: located[x]["from"]):
            where = located[e]
            if where["to"] - where["from"] != where["length"]:
                raise SubsetError(
                    f"episode {e}: dataset_from_index..dataset_to_index ({where['from']}..{where['to']}) is not its length ({where['length']})"
                )
            entries.append(
                {
                    "original": e,
                    "index": new_index[e],
                    "original_from": where["from"],
                    "original_to": where["to"],
                    "from": following,
                    "to": following + where["length"],
                    "length": where["length"],
                }
            )
            following += where["length"]
        data_files.append({"path": data_file, "episodes": entries, "others": [e for e in placed_in[data_file] if e not in wanted]})
    episodes = sorted((e for f in data_files for e in f["episodes"]), key=lambda e: e["index"])
    renumbered = any(e["index"] != e["original"] or e["from"] != e["original_from"] for e in episodes)
    return {"episodes": episodes, "renumbered": renumbered, "files": data_files}


def _rewrite_data_files(source: Path, target: Path, plan: dict[str, Any], unchanged: Optional[Callable[[str], bool]]):
    done = []
    staged: list[tuple[Path, Path]] = []
    try:
        for entry in plan["files"]:
            relative = entry["path"]
            rows = sum(e["length"] for e in entry["episodes"])
            others = sorted(entry["others"])
            if unchanged and unchanged(relative):
                done.append({"path": relative, "rows": rows, "written": False, "dropped_episodes": others, "dropped_frames": 0})
                continue
            destination = target / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            temporary = destination.with_name(f"{destination.name}.{secrets.token_hex(6)}.tmp")
            staged.append((temporary, destination))
            dropped = _rewrite_data_file(source, relative, temporary, entry["episodes"], set(others))
            done.append({"path": relative, "rows": rows, "written": True, "dropped_episodes": others, "dropped_frames": dropped})
    except BaseException:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
        raise
    for temporary, destination in staged:
        os.replace(temporary, destination)
    return done


def _rewrite_data_file(source: Path, relative: str, temporary: Path, episodes: list[dict[str, Any]], others: set[int]) -> int:
    """The subset's frames renumbered, the frames of `others` dropped, row group by row group; the schema and metadata kept."""
    try:
        parquet = pq.ParquetFile(source / relative)
    except FileNotFoundError:
        raise SubsetError(f"{relative}: file is missing") from None
    schema = parquet.schema_arrow
    lacking = [c for c in RENUMBERED_COLUMNS if c not in schema.names]
    if lacking:
        raise SubsetError(f"{relative}: no {', '.join(lacking)} column")
    by_original = {e["original"]: e for e in episodes}
    counts: dict[int, int] = {}
    expected = episodes[0]["from"] if episodes else 0
    dropped = 0
    with pq.ParquetWriter(temporary, schema) as writer:
        for group in range(parquet.num_row_groups):
            table = parquet.read_row_group(group)
            keep: list[int] = []
            new_episode: list[int] = []
            new_index: list[int] = []
            for i, (original, index) in enumerate(
                zip(table.column("episode_index").to_pylist(), table.column("index").to_pylist())
            ):
                e = by_original.get(int(original))
                if e is None:
                    if int(original) not in others:
                        raise SubsetError(
                            f"{relative}: holds frames of episode {original}, which its episode metadata does not place there"
                        )
                    dropped += 1
                    continue
                if not e["original_from"] <= index < e["original_to"]:
                    raise SubsetError(
                        f"{relative}: frame index {index} of episode {original} is outside its dataset_from_index..dataset_to_index ({e['original_from']}..{e['original_to']})"
                    )
                renumbered = e["from"] + (index - e["original_from"])
                if renumbered != expected:
                    raise SubsetError(f"{relative}: frame index {index} of episode {original} is not stored in index order")
                expected += 1
                counts[e["original"]] = counts.get(e["original"], 0) + 1
                keep.append(i)
                new_episode.append(e["index"])
                new_index.append(renumbered)
            if not keep:
                continue
            kept = table.take(pa.array(keep, pa.int64()))
            for column, values in (("episode_index", new_episode), ("index", new_index)):
                position = kept.schema.get_field_index(column)
                field = kept.schema.field(column)
                kept = kept.set_column(position, field, pa.array(values).cast(field.type))
            writer.write_table(kept)
    for e in episodes:
        if counts.get(e["original"], 0) != e["length"]:
            raise SubsetError(
                f"{relative}: episode {e['original']} has {counts.get(e['original'], 0)} frames, its metadata says {e['length']}"
            )
    return dropped


# -- the end of a pull ----------------------------------------------------------------------------


def _copy_tree(source: Path, target: Path) -> None:
    for entry in source.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            _copy_tree(entry, target / entry.name)
        elif entry.is_file() and not entry.is_symlink():
            target.mkdir(parents=True, exist_ok=True)
            temporary = target / f"{entry.name}.{secrets.token_hex(6)}.tmp"
            shutil.copyfile(entry, temporary)
            os.replace(temporary, target / entry.name)


def earlier_trimmed_originals(root: Path, manifest: dict[str, Any]) -> Optional[dict[str, Any]]:
    """What an earlier pull into `root` kept of the version's meta/ when it cut it down, or None."""
    earlier = _earlier_provenance(root / PROVENANCE_FILE, manifest)
    return (earlier or {}).get("meta_originals_trimmed")


def _trim_original_meta(root: Path, in_scope: list[dict[str, Any]], delivered: list[int]) -> Optional[dict[str, Any]]:
    """Cuts the version's meta/ kept under .das/original/ down to the delivered episodes, when it lists others:
    what stays in the directory is metadata of the episodes delivered (and so disclosed) only."""
    originals = root / ORIGINALS_DIR
    listed = listed_episodes(originals)[0]
    kept_set = set(delivered)
    keep = [e for e in listed if e in kept_set]
    if len(keep) == len(listed):
        return None
    meta_files = [f for f in in_scope if not f["episode_ids"] and f["path"].startswith("meta/")]
    staging = root / f"{ORIGINALS_DIR}.{secrets.token_hex(6)}.tmp"
    try:
        if keep:
            write_subset_meta(originals, staging, keep)
        files = []
        for f in meta_files:
            place = originals / f["path"]
            cut = staging / f["path"]
            digest = sha256_file(cut) if cut.is_file() else None
            if digest is None:
                place.unlink(missing_ok=True)
            else:
                os.replace(cut, place)
            files.append({"path": f["path"], "sha256": f["sha256"], "kept_sha256": digest})
        # A file of the version's meta/ that is not in the manifest was not delivered: nothing of it stays.
        paths = {f["path"] for f in meta_files}
        for existing in (originals / "meta").rglob("*"):
            if existing.is_file() and existing.relative_to(originals).as_posix() not in paths:
                existing.unlink()
        return {"episode_indices": keep, "files": files}
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _earlier_provenance(file: Path, manifest: dict[str, Any]) -> Optional[dict[str, Any]]:
    try:
        document = json.loads(file.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(document, dict) and document.get("dataset_id") == manifest["dataset_id"] and document.get("version") == manifest["version"]:
        return document
    return None


def finish(
    root: Path,
    fmt: dict[str, Any],
    manifest: dict[str, Any],
    in_scope: list[dict[str, Any]],
    layout: Layout,
    chosen: Optional[set[str]],
    delivered_by: dict[str, str],
    downloads: list[dict[str, Any]],
) -> dict[str, Any]:
    """Writes meta/ for the complete episodes (and the rewritten v3.0 data files) and das-provenance.json."""
    dataset_id = manifest["dataset_id"]
    indices = layout.indices
    requested = [e for e in layout.delivered if chosen is None or e in chosen]
    co_delivered = [e for e in layout.delivered if chosen is not None and e not in chosen]
    provenance_file = root / PROVENANCE_FILE
    earlier = _earlier_provenance(provenance_file, manifest)
    written: dict[str, str] = {}
    same_subset = earlier is not None and (earlier.get("episodes") or {}).get("episode_indices") == indices
    by_path = {f["path"]: f for f in in_scope}

    def unchanged(relative: str) -> bool:
        before = next((w for w in (earlier or {}).get("written", []) if w["path"] == relative), None) if same_subset else None
        if not before or (before.get("from") or {}).get("sha256") != by_path.get(relative, {}).get("sha256"):
            return False
        try:
            now = sha256_file(root / relative)
        except OSError:
            return False
        if now != before["sha256"]:
            return False
        written[relative] = now
        return True

    originals = root / ORIGINALS_DIR
    as_delivered = listed_episodes(originals) if indices else None
    # A copy an earlier run cut down is not the version's own: meta/ is written from it, as that run did.
    whole = (
        as_delivered is not None
        and not (earlier or {}).get("meta_originals_trimmed")
        and not layout.rewrite
        and layout.video_keys is None
        and as_delivered[0] == indices
    )
    subset = None
    if whole:
        _copy_tree(originals / "meta", root / "meta")
    elif indices:
        subset = write_subset_meta(originals, root, indices, layout.video_keys, layout.rewrite, unchanged)
    for relative in (subset or {}).get("written", []):
        written[relative] = sha256_file(root / relative)
    if not layout.rewrite:
        for f in in_scope:
            if _is_data_file(f):
                (root / _original(f["path"])).unlink(missing_ok=True)

    referenced = as_delivered[1] if whole else (subset or {}).get("referenced_files", [])
    missing_files = [r for r in referenced if not (root / r).exists()]
    rewrite = (subset or {}).get("rewrite")
    renumbering = rewrite if rewrite and rewrite["renumbered"] else None
    loads_as_is = not missing_files and (whole or bool(subset and subset["loads_as_is"]))
    loads_with_list = not missing_files and (whole or bool(subset and subset["loads_with_episode_list"]))
    v2 = fmt["codebase_version"] != "v3.0"
    root_text = json.dumps(str(root.resolve()))
    repo = json.dumps(dataset_id)
    if not indices:
        open_with = None
    elif loads_as_is:
        open_with = f"LeRobotDataset({repo}, root={root_text})"
    elif loads_with_list:
        open_with = f"LeRobotDataset({repo}, root={root_text}, episodes=[{', '.join(map(str, indices))}])"
    else:
        open_with = None
    id_of = lambda e: f"{dataset_id}-{e:06d}"  # noqa: E731
    dropped_episodes = [id_of(e) for e in sorted({e for f in (rewrite or {}).get("data_files", []) for e in f["dropped_episodes"]})]
    notes = [
        "LeRobot reads v2.x datasets up to its 0.3 releases (or converts them to v3.0 with its converter)." if v2 else None,
        f"meta/ points at {len(missing_files)} file(s) that are not in the directory ({', '.join(missing_files[:5])}{', ...' if len(missing_files) > 5 else ''}): LeRobot would try to fetch them from the Hub."
        if missing_files
        else None,
        f"Episodes renumbered 0..{len(indices) - 1} for LeRobot (episode_index and index in the data files, the episode rows in meta/episodes); the data files as delivered are in {ORIGINALS_DIR}/, the original indices in {PROVENANCE_FILE}."
        if renumbering
        else None,
        f"The data files LeRobot reads leave out the frames of the episodes meta/ does not list; as delivered they are in {ORIGINALS_DIR}/."
        if rewrite and dropped_episodes
        else None,
        f"meta/info.json declares only the cameras pulled ({', '.join(layout.video_keys) or 'none'}); the others are left out of it and of meta/stats.json, as LeRobot's remove_feature does."
        if layout.video_keys is not None
        else None,
        (subset["note"] + ("; das pull does that without --keep-original-indices." if layout.keep_original_indices else "."))
        if subset and subset["note"]
        else None,
    ]
    mapping = (
        [
            {"episode_id": layout.id_of[e["original"]], "original_episode_index": e["original"], "episode_index": e["index"]}
            for e in renumbering["episodes"]
        ]
        if renumbering
        else None
    )

    # The version's meta/ describes every episode; only the delivered ones may stay in the directory.
    trimmed = _trim_original_meta(root, in_scope, [episode_index_of(dataset_id, e) for e in layout.delivered])

    # The provenance: what das pull writes, field for field.
    before = {f"{f['path']}\0{f['sha256']}": f.get("download_id") for f in (earlier or {}).get("files", [])}
    all_downloads = list((earlier or {}).get("downloads", []))
    for d in downloads:
        if not any(e["download_id"] == d["download_id"] for e in all_downloads):
            all_downloads.append(d)
    # A meta/ file cut down to the delivered episodes is not kept as delivered: no stored_at.
    cut_down = {f["path"] for f in (trimmed or {}).get("files", []) if f["kept_sha256"] != f["sha256"]}
    data_files = {f["path"]: f for f in (rewrite or {}).get("data_files", [])}
    written_entries = []
    for relative, sha in sorted(written.items(), key=lambda kv: kv[0].encode()):
        rewritten = data_files.get(relative)
        delivered = by_path.get(relative) if rewritten else None
        if not rewritten or not delivered:
            written_entries.append(
                {
                    "path": relative,
                    "sha256": sha,
                    "from": None,
                    "change": f"written for the delivered episodes from the version's meta/ in {ORIGINALS_DIR}/meta",
                }
            )
            continue
        changes = [
            f"the frames of {', '.join(id_of(e) for e in rewritten['dropped_episodes'])} (not in meta/: not every file of theirs was delivered) left out"
            if rewritten["dropped_episodes"]
            else None,
            f"{' and '.join(RENUMBERED_COLUMNS)} renumbered as in renumbering.episodes" if renumbering else None,
        ]
        written_entries.append(
            {
                "path": relative,
                "sha256": sha,
                "from": {"path": layout.place_of(delivered), "sha256": delivered["sha256"]},
                "change": "; ".join(c for c in changes if c)
                + "; every other column, the schema, the key/value metadata and the row groups as delivered"
                + (" (less the rows left out)" if rewritten["dropped_episodes"] else ""),
            }
        )
    document = {
        "dataset_id": dataset_id,
        "version": manifest["version"],
        "source_format": "lerobot",
        "codebase_version": fmt["codebase_version"],
        "written_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "episodes": {
            "requested": requested,
            "co_delivered": co_delivered,
            "left_out": layout.incomplete,
            "episode_indices": indices,
        },
        "downloads": all_downloads,
        "files": [
            {
                "path": f["path"],
                "sha256": f["sha256"],
                "size_bytes": f["size_bytes"],
                "episode_ids": f["episode_ids"],
                "download_id": delivered_by.get(f["path"]) or before.get(f"{f['path']}\0{f['sha256']}"),
                "stored_at": None if f["path"] in cut_down else layout.place_of(f),
            }
            for f in in_scope
        ],
        "renumbering": {
            "changed_columns": list(RENUMBERED_COLUMNS),
            "episodes": [
                {
                    "episode_id": layout.id_of[e["original"]],
                    "original_episode_index": e["original"],
                    "episode_index": e["index"],
                    "original_dataset_from_index": e["original_from"],
                    "original_dataset_to_index": e["original_to"],
                    "dataset_from_index": e["from"],
                    "dataset_to_index": e["to"],
                }
                for e in renumbering["episodes"]
            ],
        }
        if renumbering
        else None,
        "written": written_entries,
        "meta_originals": ORIGINALS_DIR,
        "meta_originals_trimmed": trimmed,
    }
    write_atomically(provenance_file, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())
    return {
        "codebase_version": fmt["codebase_version"],
        "episode_indices": indices,
        "requested": requested,
        "co_delivered": co_delivered,
        "left_out": layout.incomplete,
        "meta": "as delivered" if whole else "rewritten",
        "cameras": layout.video_keys,
        "data_rewritten": {
            "written": sum(1 for f in rewrite["data_files"] if f["written"]),
            "kept": sum(1 for f in rewrite["data_files"] if not f["written"]),
            "dropped_episodes": dropped_episodes,
        }
        if rewrite
        else None,
        "renumbered": {
            "episodes": mapping,
            "data_files_written": sum(1 for f in renumbering["data_files"] if f["written"]),
            "data_files_kept": sum(1 for f in renumbering["data_files"] if not f["written"]),
        }
        if renumbering
        else None,
        "missing_files": missing_files,
        "loads_as_is": loads_as_is,
        "loads_with_episode_list": loads_with_list,
        "note": " ".join(n for n in notes if n) or None,
        "open_with": open_with,
        "provenance": str(provenance_file),
    }


def write_files_provenance(
    root: Path,
    manifest: dict[str, Any],
    in_scope: list[dict[str, Any]],
    delivered_by: dict[str, str],
    downloads: list[dict[str, Any]],
) -> None:
    """The provenance of a pull of a version in the service's own format, as `das pull` writes it:
    every download behind the directory and every file with its episodes and the download it came
    from, so that `das sync` can find the files a withdrawal notice concerns."""
    file = safe_destination(root, PROVENANCE_FILE)
    earlier = _earlier_provenance(file, manifest)
    # A resumed or repeated pull keeps what earlier runs recorded for the files it did not fetch again.
    before = {f"{f['path']}\0{f['sha256']}": f.get("download_id") for f in (earlier or {}).get("files", [])}
    all_downloads = list((earlier or {}).get("downloads", []))
    for d in downloads:
        if not any(e["download_id"] == d["download_id"] for e in all_downloads):
            all_downloads.append(d)
    document = {
        "dataset_id": manifest["dataset_id"],
        "version": manifest["version"],
        "source_format": "files",
        "written_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "downloads": all_downloads,
        "files": [
            {
                "path": f["path"],
                "sha256": f["sha256"],
                "size_bytes": f["size_bytes"],
                "episode_ids": f["episode_ids"],
                "download_id": delivered_by.get(f["path"]) or before.get(f"{f['path']}\0{f['sha256']}"),
                "stored_at": f["path"],
            }
            for f in in_scope
        ],
    }
    write_atomically(file, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())
