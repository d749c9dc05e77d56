"""Shared sync vectors: one directory pulled, copied twice, episodes withdrawn on the server (a real
withdrawal, so one real notice), then `das sync` (the Node client) on one copy and the Python sync on
the other. Both must leave the same tree (the same files deleted and left, the same bytes of what
stays as delivered, the same content of meta/ and the data files written again), the same
provenance less its times, the same summary, and tell the data owner the same thing: the same
statement and deleted_paths in their acknowledgements of the notice.

Then the branch where meta/ cannot be made again for the episodes left: the service will not plan
them (the licence ended between the pull and the sync), or a file of theirs is not on disk (sync
fetches none). Both remove meta/, delete the withdrawn files all the same, say why, and acknowledge."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from das_client import Client

from conftest import REPO
from helpers import close, content, files_under, sha256

DAS = REPO / "scripts" / "bin" / "das.mjs"
PROVENANCE = "das-provenance.json"


def _ids(dataset_id: str, *indices: int) -> list[str]:
    return [f"{dataset_id}-{i:06d}" for i in indices]


# Each vector: the version (service["sync_vectors"][...]), the pull's arguments, the episodes
# withdrawn, what the sync removes besides them (they share a v3.0 file), and what meta/ becomes.
VECTORS: dict[str, dict[str, Any]] = {
    "plain, the whole version": {
        "version": "plain",
        "pull": lambda d: {},
        "withdraw": lambda s: s["plain_episodes"][1:2],
        "also_removed": lambda d: [],
        "meta": None,
    },
    "v2.1, four episodes and one camera": {
        "version": "v2.1",
        "pull": lambda d: {"episodes": _ids(d, 0, 2, 3, 5), "streams": ["data", "observation.images.front"]},
        "withdraw": lambda s: _ids(s["id"], 2),
        "also_removed": lambda d: [],
        "meta": "rewritten",
    },
    "v3.0, failures (co-delivered, renumbered)": {
        "version": "v3.0",
        "pull": lambda d: {"outcome": "failure"},
        "withdraw": lambda s: _ids(s["id"], 4),
        "also_removed": lambda d: _ids(d, 5),
        "meta": "rewritten",
    },
    "v3.0, four episodes, original indices": {
        "version": "v3.0 kept",
        "pull": lambda d: {"episodes": _ids(d, 0, 1, 2, 3), "keep_original_indices": True},
        "withdraw": lambda s: _ids(s["id"], 1),
        "also_removed": lambda d: _ids(d, 0),
        "meta": "rewritten",
    },
}


def das_sync(service, directory: Path) -> tuple[int, dict[str, Any], str]:
    env = {**os.environ, "DAS_API_URL": service["url"], "DAS_API_KEY": service["keys"]["sync_vectors_node"]}
    run = subprocess.run(
        ["node", str(DAS), "sync", str(directory), "--json"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    return run.returncode, json.loads(run.stdout) if run.stdout.strip() else {}, run.stderr


def comparable_result(result: dict[str, Any]) -> dict[str, Any]:
    # The directories differ by name; each client's acknowledgement is its own.
    return {
        **{k: v for k, v in result.items() if k != "dir"},
        "notices": [{k: v for k, v in n.items() if k != "acknowledgement_id"} for n in result["notices"]],
    }


def comparable_provenance(document: dict[str, Any]) -> dict[str, Any]:
    document = dict(document)
    document.pop("written_at")
    document["withdrawals"] = [{k: v for k, v in w.items() if k != "synced_at"} for w in document["withdrawals"]]
    # Files the clients write are compared by content; their bytes (parquet writers) may differ.
    if "written" in document:
        document["written"] = [{k: v for k, v in w.items() if k != "sha256"} for w in document["written"]]
    return document


def without_request_id(note: str) -> str:
    return re.sub(r"\(req_[0-9A-Za-z_-]+\)", "(req_…)", note)


def pulled_twice(client: Client, dataset_id: str, args: dict[str, Any], tmp_path: Path) -> tuple[Path, Path]:
    """One pull, copied: the two syncs start from the same download, so the same notice concerns both."""
    pulled = tmp_path / "pulled"
    assert client.pull(dataset_id, "1.0.0", pulled, progress=False, **args).ok
    node_dir, python_dir = tmp_path / "node", tmp_path / "python"
    shutil.copytree(pulled, node_dir, symlinks=True)
    shutil.copytree(pulled, python_dir, symlinks=True)
    return node_dir, python_dir


def assert_same_trees(python_dir: Path, node_dir: Path) -> None:
    assert files_under(python_dir) == files_under(node_dir)
    p = json.loads((python_dir / PROVENANCE).read_text())
    n = json.loads((node_dir / PROVENANCE).read_text())
    assert comparable_provenance(p) == comparable_provenance(n)
    written = {w["path"] for w in p.get("written", [])}
    for relative in files_under(python_dir):
        if relative == PROVENANCE:
            continue
        a, b = python_dir / relative, node_dir / relative
        if relative in written:
            assert close(content(a), content(b)), relative
        else:
            assert a.read_bytes() == b.read_bytes(), relative


def assert_same_acknowledgements(service, notice_id: str, python: dict[str, Any], node: dict[str, Any]) -> list[str]:
    """Both acknowledged the notice, telling the data owner the same: the deleted_paths they sent."""
    ours = {n["acknowledgement_id"] for r in (python, node) for n in r["notices"]}
    assert None not in ours and len(ours) == 2
    sent = {a["id"]: a for a in service["ask"]({"acknowledgements": notice_id})["acknowledgements"]}
    by_python = sent[python["notices"][0]["acknowledgement_id"]]
    by_node = sent[node["notices"][0]["acknowledgement_id"]]
    assert by_python["statement"] == by_node["statement"]
    assert by_python["deleted_paths"] == by_node["deleted_paths"] != []
    return by_python["deleted_paths"]


@pytest.mark.parametrize("name", list(VECTORS))
def test_node_and_python_syncs_leave_the_same_tree_and_say_the_same(service, tmp_path, name):
    vector = VECTORS[name]
    dataset_id = service["sync_vectors"][vector["version"]]
    client = Client(service["keys"]["sync_vectors"], service["url"])
    context = {"id": dataset_id, "plain_episodes": [e["episode_id"] for e in client.episodes(dataset_id, "1.0.0")]}
    node_dir, python_dir = pulled_twice(client, dataset_id, vector["pull"](dataset_id), tmp_path)
    withdrawn = vector["withdraw"](context)
    service["withdraw"](withdrawn)
    code, node, stderr = das_sync(service, node_dir)
    assert code == 0, stderr
    python = client.sync(python_dir).to_dict()

    assert comparable_result(python) == comparable_result(node)
    assert python["withdrawn_episodes"] == withdrawn
    assert python["also_removed"] == vector["also_removed"](dataset_id)
    assert python["meta"] == vector["meta"] and python["note"] is None
    assert [n["episode_ids"] for n in python["notices"]] == [withdrawn]
    assert python["deleted"]
    assert_same_trees(python_dir, node_dir)
    # What was deleted is gone and no file names a removed episode; every file of the episodes left
    # is still recorded and on disk as delivered (a copy kept under .das/original/ may have moved back
    # to its place: renumbering what is left can leave a data file as the version has it).
    left = files_under(python_dir)
    assert not set(python["deleted"]) & set(left)
    removed = {*withdrawn, *python["also_removed"]}
    for episode in removed:
        assert all(episode.encode() not in (python_dir / p).read_bytes() for p in left), episode
    pulled = json.loads((tmp_path / "pulled" / PROVENANCE).read_text())
    synced = {f["path"]: f for f in json.loads((python_dir / PROVENANCE).read_text())["files"]}
    kept = [f for f in pulled["files"] if not removed & set(f["episode_ids"])]
    assert sorted(synced) == sorted(f["path"] for f in kept)
    for f in synced.values():
        assert sha256(python_dir / (f.get("stored_at") or f["path"])) == f["sha256"], f["path"]
    # The paths acknowledged are the delivered files holding a withdrawn episode (as the pull
    # recorded them): every copy of each went.
    deleted_paths = assert_same_acknowledgements(service, python["notices"][0]["notice_id"], python, node)
    holding = [f["path"] for f in pulled["files"] if set(f["episode_ids"]) & set(withdrawn)]
    assert deleted_paths == sorted(holding, key=str.encode)


def test_both_remove_meta_and_say_why_when_the_service_will_not_plan_the_episodes_left(service, tmp_path):
    dataset_id = service["sync_vectors"]["refused"]
    client = Client(service["keys"]["sync_vectors"], service["url"])
    node_dir, python_dir = pulled_twice(client, dataset_id, {}, tmp_path)
    assert (python_dir / "meta/info.json").exists()
    before = files_under(python_dir)

    withdrawn = _ids(dataset_id, 3)
    service["withdraw"](withdrawn)
    # The licence ends after the pull: the notice still concerns the directory, but the service
    # plans nothing of the version any more, so meta/ cannot be made again for episodes 0-2, 4, 5.
    service["ask"]({"end_licence": dataset_id})
    code, node, stderr = das_sync(service, node_dir)
    assert code == 0, stderr
    python = client.sync(python_dir).to_dict()

    # The same note, but for the id of the request the service refused (each client made its own).
    assert comparable_result({**python, "note": None}) == comparable_result({**node, "note": None})
    assert python["note"] and node["note"]
    assert without_request_id(python["note"]) == without_request_id(node["note"])
    assert python["withdrawn_episodes"] == withdrawn and python["also_removed"] == []
    assert python["meta"] == "removed"
    gone = "so it was removed: nothing in the directory describes a withdrawn episode. Pull the version again to get it back."
    assert python["note"].startswith("meta/ could not be made again for the episodes left (")
    assert python["note"].endswith(gone)
    # The service answers a version one may no longer use as one that does not exist.
    assert "(not_found: No such dataset is available to you." in python["note"]
    assert f"meta/ was removed: {node['note']}" in stderr  # what das tells the user
    assert_same_trees(python_dir, node_dir)

    left = files_under(python_dir)
    # No meta/ (nor the version's kept under .das/), none of the withdrawn episode's files; the
    # other episodes' files as they were.
    assert not [p for p in left if p.startswith(("meta/", ".das/original/meta/"))]
    assert python["deleted"] and not set(python["deleted"]) & set(left)
    kept = [p for p in before if not p.startswith(("meta/", ".das/original/meta/")) and p not in python["deleted"]]
    assert set(kept) <= set(left)
    assert all(withdrawn[0].encode() not in (python_dir / p).read_bytes() for p in left)
    provenance = json.loads((python_dir / PROVENANCE).read_text())
    assert not [w for w in provenance.get("written", []) if w["path"].startswith("meta/")]
    assert provenance["episodes"]["episode_indices"] == []
    assert provenance["withdrawals"][-1]["deleted_files"] == len(python["deleted"])
    assert_same_acknowledgements(service, python["notices"][0]["notice_id"], python, node)


def test_both_remove_meta_and_say_why_when_a_file_of_the_episodes_left_is_not_on_disk(service, tmp_path):
    dataset_id = service["sync_vectors"]["incomplete"]
    client = Client(service["keys"]["sync_vectors"], service["url"])
    node_dir, python_dir = pulled_twice(client, dataset_id, {}, tmp_path)
    # Episode 0's data file lost from both copies: sync fetches no file of an episode, so the plan of
    # the episodes left cannot be carried out.
    missing = "data/chunk-000/episode_000000.parquet"
    (node_dir / missing).unlink()
    (python_dir / missing).unlink()

    withdrawn = _ids(dataset_id, 3)
    service["withdraw"](withdrawn)
    code, node, stderr = das_sync(service, node_dir)
    assert code == 0, stderr
    python = client.sync(python_dir).to_dict()

    assert comparable_result({**python, "note": None}) == comparable_result({**node, "note": None})
    assert python["meta"] == "removed" and python["withdrawn_episodes"] == withdrawn
    why = "so it was removed: nothing in the directory describes a withdrawn episode. Pull the version again to get it back."
    # Each names its own way of fetching the file again.
    assert node["note"] == f"meta/ could not be made again for the episodes left ({missing}: not on disk as the plan has it: run das pull again to fetch it), {why}"
    assert python["note"] == f"meta/ could not be made again for the episodes left ({missing}: not on disk as the plan has it: run the pull again to fetch it), {why}"
    assert f"meta/ was removed: {node['note']}" in stderr
    assert_same_trees(python_dir, node_dir)
    left = files_under(python_dir)
    assert not [p for p in left if p.startswith(("meta/", ".das/original/meta/"))]
    assert python["deleted"] and not set(python["deleted"]) & set(left)
    assert all(withdrawn[0].encode() not in (python_dir / p).read_bytes() for p in left)
    assert_same_acknowledgements(service, python["notices"][0]["notice_id"], python, node)
