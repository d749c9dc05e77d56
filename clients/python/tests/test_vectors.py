"""Shared test vectors: `das pull` (the Node client) and the Python pull, run with the same arguments
against the same server, must leave equivalent trees: the same files, the same bytes for every
delivered file, the same content read back for what they write (meta/, rewritten data files, the
provenance less its times and download ids), and the same summary."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from das_client import Client

from conftest import REPO
from helpers import close, content, files_under

DAS = REPO / "scripts" / "bin" / "das.mjs"


def ep(service, version: str, *indices: int) -> list[str]:
    return [f"{service['lerobot'][version]}-{i:06d}" for i in indices]


VECTORS: dict[str, Any] = {
    "plain, two episodes, one stream": lambda s: (s["plain"]["dataset_id"], {"episodes": "first2", "streams": ["cam"]}),
    "plain, the whole version": lambda s: (s["plain"]["dataset_id"], {}),
    "v2.1, failures": lambda s: (s["lerobot"]["v2.1"], {"outcome": "failure"}),
    "v2.1, episodes and one camera": lambda s: (
        s["lerobot"]["v2.1"],
        {"episodes": ep(s, "v2.1", 0, 3), "streams": ["data", "observation.images.front"]},
    ),
    "v3.0, failures (co-delivered, renumbered)": lambda s: (s["lerobot"]["v3.0"], {"outcome": "failure"}),
    "v3.0, failures, original indices": lambda s: (
        s["lerobot"]["v3.0"],
        {"outcome": "failure", "keep_original_indices": True},
    ),
    "v3.0, episodes 0 and 1": lambda s: (s["lerobot"]["v3.0"], {"episodes": ep(s, "v3.0", 0, 1)}),
    "v3.0, one episode, data and one camera": lambda s: (
        s["lerobot"]["v3.0"],
        {"episodes": ep(s, "v3.0", 3), "streams": ["data", "observation.images.wrist"]},
    ),
}


def das_pull(service, dataset_id: str, dest: Path, args: dict[str, Any]) -> dict[str, Any]:
    command = ["node", str(DAS), "pull", f"{dataset_id}@1.0.0", "--dir", str(dest), "--json"]
    if "episodes" in args:
        command += ["--episodes", ",".join(args["episodes"])]
    if "streams" in args:
        command += ["--streams", ",".join(args["streams"])]
    if "outcome" in args:
        command += ["--outcome", args["outcome"]]
    if args.get("keep_original_indices"):
        command.append("--keep-original-indices")
    env = {**os.environ, "DAS_API_URL": service["url"], "DAS_API_KEY": service["keys"]["node"]}
    run = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def comparable_provenance(document: dict[str, Any]) -> dict[str, Any]:
    document = dict(document)
    document.pop("written_at")
    document.pop("downloads")
    document["files"] = [{k: v for k, v in f.items() if k != "download_id"} for f in document["files"]]
    # Files the clients write are compared by content below; their bytes (parquet writers) may differ.
    if "written" in document:  # a LeRobot subset's; a pull of plain files writes none
        document["written"] = [{k: v for k, v in w.items() if k != "sha256"} for w in document["written"]]
    return document


def comparable_lerobot(result: dict[str, Any] | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {k: v for k, v in result.items() if k not in ("provenance", "open_with")}


@pytest.mark.parametrize("name", list(VECTORS))
def test_node_and_python_pulls_leave_the_same_tree(service, tmp_path, name):
    dataset_id, args = VECTORS[name](service)
    client = Client(service["keys"]["vectors"], service["url"])
    if args.get("episodes") == "first2":
        args = {**args, "episodes": [e["episode_id"] for e in client.episodes(dataset_id, "1.0.0")][:2]}
    node_dir, python_dir = tmp_path / "node", tmp_path / "python"
    node = das_pull(service, dataset_id, node_dir, args)
    python = client.pull(dataset_id, "1.0.0", python_dir, progress=False, **args).to_dict()

    assert python["failed"] == node["failed"] == []
    for field in ("revision", "files", "bytes", "downloaded", "co_delivered_episode_ids"):
        assert python[field] == node[field], field
    assert len(python["downloads"]) == len(node["downloads"])
    assert comparable_lerobot(python["lerobot"]) == comparable_lerobot(node["lerobot"])

    assert files_under(python_dir) == files_under(node_dir)
    manifest = client.manifest(dataset_id, "1.0.0")
    delivered = {f["path"] for f in manifest["files"]}
    provenance = python_dir / "das-provenance.json"
    written = set()
    if provenance.exists():
        p = json.loads(provenance.read_text())
        n = json.loads((node_dir / "das-provenance.json").read_text())
        assert comparable_provenance(p) == comparable_provenance(n)
        written = {w["path"] for w in p.get("written", [])}
    for relative in files_under(python_dir):
        a, b = python_dir / relative, node_dir / relative
        if relative == "das-provenance.json":
            continue
        if relative in written:
            assert close(content(a), content(b)), relative
        else:
            # Delivered as it is (at its path or kept under .das/original/): byte for byte.
            assert relative in delivered or relative.removeprefix(".das/original/") in delivered, relative
            assert a.read_bytes() == b.read_bytes(), relative
    # LeRobot's loader reads meta/'s parquet files through pandas first (tasks.parquet keeps the task
    # as its index): every one must read back, with the pandas metadata it carries.
    for relative in files_under(python_dir):
        if relative.startswith("meta/") and relative.endswith(".parquet"):
            frame = pd.read_parquet(python_dir / relative)
            if relative == "meta/tasks.parquet":
                assert frame.index.name == "task" and list(frame.columns) == ["task_index"], relative
