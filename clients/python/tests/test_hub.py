"""The Hub protocol (HF_ENDPOINT=<service>/hub) with the Hugging Face Hub's own clients, installed
from PyPI: huggingface_hub of the line LeRobot 0.4 pins (>=0.35,<0.36) and the newest release with
`datasets`, each in an interpreter of its own (clients/python/hub-check.sh makes them and names
them to these tests by DAS_HUB_PYTHON and DAS_HUB_LATEST_PYTHON). Each case runs the client in
that interpreter against the real service, and every refusal is asserted as the client's own
exception. What a key received is read back from the disclosure log."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

INTERPRETERS = {
    name: path
    for name, path in (("hub-0.35", os.environ.get("DAS_HUB_PYTHON")), ("hub-latest", os.environ.get("DAS_HUB_LATEST_PYTHON")))
    if path
}

pytestmark = [
    pytest.mark.hub,
    pytest.mark.skipif(not INTERPRETERS, reason="DAS_HUB_PYTHON / DAS_HUB_LATEST_PYTHON name no interpreter with huggingface_hub"),
]

PRELUDE = """
import hashlib, json, os, sys
from pathlib import Path
import huggingface_hub
from huggingface_hub import HfApi, HfFileSystem, hf_hub_download, snapshot_download

REPO = sys.argv[1]

def out(value):
    print(json.dumps(value))

def refusal(call):
    try:
        call()
    except Exception as error:
        response = getattr(error, "response", None)
        return {
            "type": type(error).__name__,
            "mro": [c.__name__ for c in type(error).__mro__],
            "message": str(error),
            "status": getattr(response, "status_code", None),
        }
    return None

def files_under(root):
    root = Path(root)
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and ".cache" not in p.relative_to(root).parts
    }
"""


@pytest.fixture(params=sorted(INTERPRETERS), ids=sorted(INTERPRETERS))
def interpreter(request) -> str:
    return INTERPRETERS[request.param]


class Hub:
    """A client interpreter with its own key and Hugging Face home, against the service: a new key of
    the main organisation named `name`, of the other licensee of the fingerprinted version
    (`organization="other"`), or one issued already."""

    def __init__(
        self,
        service: dict[str, Any],
        interpreter: str,
        home: Path,
        name: str = "",
        organization: str = "main",
        issued: dict[str, Any] | None = None,
    ):
        self.service = service
        self.interpreter = interpreter
        issued = issued or service["ask"]({"key": name, "organization": organization})
        self.key, self.key_id = issued["key"], issued["key_id"]
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("HF_")},
            "HF_ENDPOINT": f"{service['url']}/hub",
            "HF_TOKEN": self.key,
            "HF_HOME": str(home),
            "HF_HUB_DISABLE_XET": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            "HF_DATASETS_CACHE": str(home / "datasets"),
        }

    def run(self, repo: str, code: str, timeout: int = 600) -> Any:
        return self.finish(self.start(repo, code), timeout)

    def start(self, repo: str, code: str) -> subprocess.Popen:
        return subprocess.Popen(
            [self.interpreter, "-c", PRELUDE + code, repo],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
        )

    def finish(self, process: subprocess.Popen, timeout: int = 600) -> Any:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        self.stderr = stderr
        assert process.returncode == 0, stderr[-4000:]
        return json.loads(stdout.strip().splitlines()[-1])

    def entries(self) -> list[dict[str, Any]]:
        return self.service["ask"]({"entries": self.key_id})["entries"]


@pytest.fixture
def hub(service, interpreter, tmp_path, request) -> Hub:
    # A key of its own per case: its disclosure log is the case's alone (key names are at most 100 characters).
    return Hub(service, interpreter, tmp_path / "hf", f"hub {request.node.name}"[-80:])


def plain(service) -> dict[str, Any]:
    return service["hub"]["plain"]


def episode_files(dataset: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in dataset["files"] if f["episode_id"]]


def test_snapshot_download_of_a_whole_version_discloses_every_file_that_carries_episodes(hub, service, tmp_path):
    dataset = plain(service)
    got = hub.run(
        f"das/{dataset['dataset_id']}",
        f"""
path = snapshot_download(REPO, repo_type="dataset", local_dir={str(tmp_path / 'snapshot')!r})
out(files_under(path))
""",
    )
    assert got == {f["path"]: f["sha256"] for f in dataset["files"]}
    # One entry per file fetched, the README's of no episode.
    entries = hub.entries()
    assert sorted(p for e in entries for p in e["requested_scope"]["paths"]) == sorted(f["path"] for f in dataset["files"])
    assert {e["channel"] for e in entries} == {"hub"}
    assert sorted(e["episode_count"] for e in entries) == [0] + [1] * len(episode_files(dataset))
    assert all(e["file_count"] == 1 for e in entries)


def test_snapshot_download_with_allow_patterns_discloses_only_what_it_fetched(hub, service, tmp_path):
    dataset = plain(service)
    episode = dataset["episodes"][2]
    got = hub.run(
        f"das/{dataset['dataset_id']}",
        f"""
path = snapshot_download(REPO, repo_type="dataset", allow_patterns="episodes/{episode}/*", local_dir={str(tmp_path / 'some')!r})
out(files_under(path))
""",
    )
    wanted = {f["path"]: f["sha256"] for f in dataset["files"] if f["episode_id"] == episode}
    assert got == wanted and len(wanted) == 2
    assert sorted(e["requested_scope"]["paths"][0] for e in hub.entries()) == sorted(wanted)


def test_hf_hub_download_by_tag_and_by_sha_then_from_the_cache(hub, service):
    dataset = plain(service)
    file = episode_files(dataset)[0]
    got = hub.run(
        f"das/{dataset['dataset_id']}",
        f"""
api = HfApi()
sha = api.dataset_info(REPO).sha
by_tag = hf_hub_download(REPO, {file['path']!r}, repo_type="dataset", revision="1.0.0")
by_sha = hf_hub_download(REPO, {file['path']!r}, repo_type="dataset", revision=sha)
again = hf_hub_download(REPO, {file['path']!r}, repo_type="dataset")
out({{"sha": sha, "digest": hashlib.sha256(Path(again).read_bytes()).hexdigest(), "same": len({{by_tag, by_sha, again}})}})
""",
    )
    assert got["digest"] == file["sha256"]
    assert got["same"] == 1
    # However many times the client asks, one entry while the URL is valid.
    entries = hub.entries()
    assert len(entries) == 1 and entries[0]["requested_scope"] == {"paths": [file["path"]]}


def test_hf_file_system_reads_byte_ranges_through_the_redirect(hub, service):
    dataset = plain(service)
    file = max(episode_files(dataset), key=lambda f: f["size"])
    got = hub.run(
        f"das/{dataset['dataset_id']}",
        f"""
fs = HfFileSystem()
path = "datasets/" + REPO + "/" + {file['path']!r}
with fs.open(path, "rb", block_size=64) as f:
    f.seek(1000)
    middle = f.read(100)
with fs.open(path, "rb") as f:
    whole = f.read()
listed = sorted(p.split("/", 3)[3] for p in fs.glob("datasets/" + REPO + "/episodes/*/cam.bin"))
out({{"middle": middle.hex(), "whole": whole[1000:1100].hex(), "size": len(whole), "digest": hashlib.sha256(whole).hexdigest(), "listed": listed}})
""",
    )
    assert got["middle"] == got["whole"] and len(got["middle"]) == 200
    assert got["size"] == file["size"] and got["digest"] == file["sha256"]
    assert got["listed"] == sorted(f["path"] for f in dataset["files"] if f["path"].endswith("/cam.bin"))
    assert len(hub.entries()) == 1


def test_refs_and_info(hub, service):
    dataset = plain(service)
    got = hub.run(
        f"das/{dataset['dataset_id']}",
        """
api = HfApi()
refs = api.list_repo_refs(REPO, repo_type="dataset")
info = api.dataset_info(REPO)
at_tag = api.dataset_info(REPO, revision="1.0.0", files_metadata=True)
out({
    "branches": [(b.name, b.target_commit) for b in refs.branches],
    "tags": [(t.name, t.target_commit) for t in refs.tags],
    "converts": list(refs.converts),
    "id": info.id, "sha": info.sha, "private": info.private,
    "card": info.card_data.to_dict() if info.card_data else None,
    "siblings": sorted(s.rfilename for s in info.siblings),
    "sizes": {s.rfilename: s.size for s in at_tag.siblings},
    "lfs": {s.rfilename: s.lfs.sha256 for s in at_tag.siblings},
})
""",
    )
    sha = got["sha"]
    assert got["branches"] == [["main", sha]]
    assert got["tags"] == [["1.0.0", sha]]
    assert got["converts"] == []
    assert got["id"] == f"das/{dataset['dataset_id']}" and got["private"] is True
    assert got["card"] == {"license": "other", "tags": ["robotics"]}
    assert got["siblings"] == sorted(f["path"] for f in dataset["files"])
    assert got["sizes"] == {f["path"]: f["size"] for f in dataset["files"]}
    assert got["lfs"] == {f["path"]: f["sha256"] for f in dataset["files"]}
    assert hub.entries() == []


def test_each_refusal_is_the_clients_own_exception(hub, service):
    dataset = plain(service)
    file = episode_files(dataset)[0]["path"]
    hidden = service["hub"]["unlicensed"]["dataset_id"]
    got = hub.run(
        f"das/{dataset['dataset_id']}",
        f"""
get = lambda repo=REPO, path={file!r}, revision=None: hf_hub_download(repo, path, repo_type="dataset", revision=revision)
out({{
    "ended": refusal(lambda: get(revision="2.0.0")),
    "starts": refusal(lambda: get(revision="3.0.0")),
    "ended_info": refusal(lambda: HfApi().dataset_info(REPO, revision="2.0.0")),
    "hidden": refusal(lambda: get(repo="das/{hidden}")),
    "namespace": refusal(lambda: get(repo="someone/{dataset['dataset_id']}")),
    "revision": refusal(lambda: get(revision="9.9.9")),
    "bad_revision": refusal(lambda: get(revision="not..a..ref")),
    "entry": refusal(lambda: get(path="episodes/nothing/here.bin")),
    "wrong_key": refusal(lambda: HfApi(token="das_" + "A" * 43).dataset_info(REPO)),
}})
""",
    )
    assert got["ended"]["type"] == "GatedRepoError" and "ended on" in got["ended"]["message"]
    assert got["starts"]["type"] == "GatedRepoError" and "starts on" in got["starts"]["message"]
    assert got["ended_info"]["type"] == "GatedRepoError"
    for case in ("hidden", "namespace"):
        assert got[case]["type"] == "RepositoryNotFoundError", got[case]
    assert got["revision"]["type"] == "RevisionNotFoundError"
    assert got["bad_revision"]["type"] == "RevisionNotFoundError"
    # huggingface_hub 1.x and later raise its subclass RemoteEntryNotFoundError.
    assert "EntryNotFoundError" in got["entry"]["mro"]
    # A key the service does not know is what it is, not a repository that is missing.
    assert got["wrong_key"]["status"] == 401 and "RepositoryNotFoundError" not in got["wrong_key"]["mro"]
    assert hub.entries() == []


@pytest.fixture(scope="module")
def withdrawn(service) -> dict[str, Any]:
    dataset = service["hub"]["withdrawn"]
    service["withdraw"]([dataset["episodes"][0]])
    return dataset


def test_a_withdrawn_episode_is_gone_from_what_the_clients_see(hub, withdrawn, tmp_path):
    gone = withdrawn["episodes"][0]
    got = hub.run(
        f"das/{withdrawn['dataset_id']}",
        f"""
path = snapshot_download(REPO, repo_type="dataset", local_dir={str(tmp_path / 'after')!r})
out({{
    "files": files_under(path),
    "gone": refusal(lambda: hf_hub_download(REPO, "episodes/{gone}/cam.bin", repo_type="dataset")),
}})
""",
    )
    assert got["files"] == {f["path"]: f["sha256"] for f in withdrawn["files"] if f["episode_id"] != gone}
    assert "EntryNotFoundError" in got["gone"]["mro"]
    assert all(gone not in p for e in hub.entries() for p in e["requested_scope"]["paths"])


def test_the_hf_command_line_downloads_a_repository(hub, service, tmp_path, interpreter):
    dataset = plain(service)
    hf = Path(interpreter).parent / "hf"
    run = subprocess.run(
        [str(hf), "download", f"das/{dataset['dataset_id']}", "--repo-type", "dataset", "--local-dir", str(tmp_path / "cli")],
        capture_output=True,
        text=True,
        timeout=600,
        env=hub.env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    on_disk = {
        p.relative_to(tmp_path / "cli").as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (tmp_path / "cli").rglob("*")
        if p.is_file() and ".cache" not in p.parts
    }
    assert on_disk == {f["path"]: f["sha256"] for f in dataset["files"]}
    refused = subprocess.run(
        [str(hf), "download", f"das/{dataset['dataset_id']}", "--repo-type", "dataset", "--revision", "2.0.0", "--local-dir", str(tmp_path / "gated")],
        capture_output=True,
        text=True,
        timeout=600,
        env=hub.env,
    )
    # The command's own words for a GatedRepoError: 0.35 prints the service's message, later ones their own.
    assert refused.returncode != 0
    said = refused.stderr + refused.stdout
    assert "ended on" in said or "requires approval" in said, said


def test_datasets_streams_the_frames_of_a_lerobot_version(hub, service, interpreter):
    has_datasets = subprocess.run([interpreter, "-c", "import datasets"], capture_output=True).returncode == 0
    if not has_datasets:
        pytest.skip("this interpreter has no `datasets`")
    dataset_id = service["lerobot"]["v3.0"]
    got = hub.run(
        f"das/{dataset_id}",
        """
from datasets import load_dataset
info = json.loads(Path(hf_hub_download(REPO, "meta/info.json", repo_type="dataset")).read_text())
stream = load_dataset(REPO, streaming=True, data_files="data/*/*.parquet", split="train")
episodes, frames = set(), 0
for row in stream:
    frames += 1
    episodes.add(row["episode_index"])
readme = refusal(lambda: hf_hub_download(REPO, "README.md", repo_type="dataset"))
out({"frames": frames, "total_frames": info["total_frames"], "episodes": sorted(episodes), "readme": readme})
""",
    )
    assert got["frames"] == got["total_frames"] > 0
    assert got["episodes"] == list(range(6))
    # `datasets` probes optional files; a missing one is the client's EntryNotFoundError.
    assert got["readme"] is None or "EntryNotFoundError" in got["readme"]["mro"]
    data_files = {p for e in hub.entries() if e["episode_count"] for p in e["requested_scope"]["paths"]}
    assert data_files == {"data/chunk-000/file-000.parquet", "data/chunk-000/file-001.parquet", "data/chunk-000/file-002.parquet"}


def test_a_dataset_whose_every_licence_is_out_of_term_is_the_clients_gated_error(hub, service):
    gated = service["hub"]["gated"]["dataset_id"]
    got = hub.run(
        f"das/{gated}",
        """
out({
    "info": refusal(lambda: HfApi().dataset_info(REPO)),
    "refs": refusal(lambda: HfApi().list_repo_refs(REPO, repo_type="dataset")),
    "file": refusal(lambda: hf_hub_download(REPO, "a.bin", repo_type="dataset")),
    "snapshot": refusal(lambda: snapshot_download(REPO, repo_type="dataset")),
})
""",
    )
    for case, refused in got.items():
        assert refused is not None and "GatedRepoError" in refused["mro"], (case, refused)
        # The key's own licences, and when each ended or starts.
        assert "to version 1.0.0 ended on" in refused["message"], (case, refused)
        assert "to version 2.0.0 starts on" in refused["message"], (case, refused)
    assert hub.entries() == []


# The snapshot first: only the clients' own downloads retry a 503 (the listings they make
# themselves; huggingface_hub 0.35's list_repo_tree does not).
SNAPSHOT = """
from huggingface_hub.hf_api import RepoFile
path = snapshot_download(REPO, repo_type="dataset")
api = HfApi()
info = api.dataset_info(REPO)
tree = {f.path: [f.lfs.sha256, f.size] for f in api.list_repo_tree(REPO, repo_type="dataset", recursive=True) if isinstance(f, RepoFile)}
out({"sha": info.sha, "tree": tree, "files": files_under(path), "snapshot": path})
"""


def test_two_licensees_snapshots_of_a_fingerprinted_version_differ_and_trace_names_each(service, interpreter, tmp_path, request):
    fingerprinted = service["hub"]["fingerprinted"]
    repo = f"das/{fingerprinted['dataset_id']}"
    got: dict[str, Any] = {}
    for who in ("main", "other"):
        hub = Hub(service, interpreter, tmp_path / who, f"hub {who} {request.node.name}"[-80:], organization=who)
        snapshot = hub.run(repo, SNAPSHOT)
        # Every file hashes to what the licensee's own tree said of it; the snapshot is its own revision.
        assert snapshot["files"] == {path: sha for path, (sha, _) in snapshot["tree"].items()}
        assert Path(snapshot["snapshot"]).name == snapshot["sha"]
        # One entry per file, each naming the sha256 of the copy that left.
        entries = hub.entries()
        assert sorted(p for e in entries for p in e["requested_scope"]["paths"]) == sorted(snapshot["files"])
        assert all(e["files_sha256"] for e in entries)
        # das-admin trace on the snapshot directory (links into the cache's blobs/) and on one file of it.
        data_file = Path(snapshot["snapshot"]) / "data/chunk-000/file-000.parquet"
        traced = service["ask"]({"trace": [snapshot["snapshot"], str(data_file)]})["files"]
        assert len(traced) == len(snapshot["files"]) + 1
        for file in traced:
            assert file["verdict"] == "copy", file
            assert [licence["licence_id"] for licence in file["licences"]] == [fingerprinted["licences"][who]], file
            assert hub.key_id in {d["api_key_id"] for d in file["licences"][0]["deliveries"]}, file
        got[who] = snapshot
    main, other = got["main"], got["other"]
    assert main["sha"] != other["sha"]
    assert main["files"].keys() == other["files"].keys()
    # The same path, different bytes: each licence's copy is its own.
    assert all(main["files"][path] != other["files"][path] for path in main["files"])


def test_a_licence_whose_copies_are_being_made_downloads_once_they_are(service, interpreter, tmp_path):
    fingerprinted = service["hub"]["fingerprinted"]
    granted = service["ask"]({"grant": fingerprinted["dataset_id"]})
    hub = Hub(service, interpreter, tmp_path / "granted", issued=granted)
    running = hub.start(f"das/{fingerprinted['dataset_id']}", SNAPSHOT)
    # The client meets 503s with Retry-After until the copies are made; nothing leaves meanwhile.
    time.sleep(4)
    assert running.poll() is None, running.communicate()
    assert hub.entries() == []
    assert service["ask"]({"make_copies": True})["made"] > 0
    snapshot = hub.finish(running)
    assert "503" in hub.stderr
    assert snapshot["files"] == {path: sha for path, (sha, _) in snapshot["tree"].items()}
    traced = service["ask"]({"trace": [snapshot["snapshot"]]})["files"]
    assert {licence["licence_id"] for file in traced for licence in file["licences"]} == {granted["licence_id"]}
