"""The pull against a hostile service's plan (das_client/plan.py, as decision 0129 holds `das pull`
to it), served by the test itself on 127.0.0.1: an API that answers a plan and downloads, and a
store. A plan that names a place outside the directory, das's own records, a path twice, a download
or URL it cannot use, or a transform the client does not know is refused whole, before any
download or store request, with nothing written; a link at the destination fails its file before
its download is asked for; bytes are held to the plan's size and SHA-256; a transform that does
not describe its file writes nothing. No real service is needed."""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import das_client
from das_client import client as client_module

BODY = b"twenty-five bytes of cam."
DATASET = "hostile"
EPISODE = f"{DATASET}-000000"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parquet_bytes(episodes: list[int], frames: int) -> bytes:
    table = pa.table(
        {
            "episode_index": pa.array([e for e in episodes for _ in range(frames)], pa.int64()),
            "index": pa.array(list(range(len(episodes) * frames)), pa.int64()),
            "value": pa.array([float(i) for i in range(len(episodes) * frames)]),
        }
    )
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


class Hostile:
    """What the service says and what it was asked."""

    def __init__(self) -> None:
        self.url = ""
        self.plan: Any = None
        self.extra_download_files: list[dict[str, str]] = []
        self.store: dict[str, bytes] = {}
        self.asked: list[str] = []
        self.store_sent = 0
        self.endless_plan = False
        # Plans answered after the first (the client asks again when the plan's URLs expire).
        self.later_plans: list[dict[str, Any]] = []

    def file(self, path: str, data: bytes = BODY, **changes: Any) -> dict[str, Any]:
        planned = {
            "path": path,
            "size_bytes": len(data),
            "sha256": sha(data),
            "episode_ids": [EPISODE],
            "stream": "cam",
            "get": {"download": 0, "episode_id": EPISODE},
            "transform": None,
        }
        self.store[path] = data
        return {**planned, **changes}

    def plan_of(self, files: list[dict[str, Any]], **changes: Any) -> dict[str, Any]:
        later = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat().replace("+00:00", "Z")
        self.plan = {
            "dataset_id": DATASET,
            "version": "1.0.0",
            "revision": "a" * 40,
            "codebase_version": None,
            "episode_ids": [EPISODE],
            "downloads": [{"dataset_id": DATASET, "version": "1.0.0"}],
            "files": files,
            "unplannable": [],
            "expires_at": later,
            "lerobot": None,
            **changes,
        }
        return self.plan

    def requests_beyond_the_plan(self) -> list[str]:
        return [a for a in self.asked if not a.endswith("/plan")]


@pytest.fixture()
def hostile() -> Iterator[Hostile]:
    state = Hostile()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def send(self, status: int, data: bytes, kind: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("content-length") or 0))
            state.asked.append(self.path)
            if self.path.endswith("/plan"):
                if state.endless_plan:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    try:
                        self.wfile.write(b'{"files":[')
                        for _ in range(64):
                            self.wfile.write(b" " * (1 << 20))
                    except OSError:
                        pass
                    return
                if sum(a.endswith("/plan") for a in state.asked) > 1 and state.later_plans:
                    state.plan = state.later_plans.pop(0)
                return self.send(200, json.dumps(state.plan).encode())
            if self.path == "/api/v1/downloads":
                files = [
                    {"path": f["path"], "url": f"{state.url}/store/{i}"}
                    for i, f in enumerate(state.plan["files"])
                    if "download" in f["get"]
                ]
                answer = {
                    "download_id": "dl_hostile",
                    "expires_at": state.plan["expires_at"],
                    "co_delivered_episode_ids": [],
                    "files": files + state.extra_download_files,
                }
                return self.send(201, json.dumps(answer).encode())
            self.send(404, b"{}")

        def do_GET(self) -> None:  # noqa: N802
            state.asked.append(self.path)
            if self.path.startswith("/store/"):
                files = state.plan["files"]
                data = state.store.get(files[int(self.path.rsplit("/", 1)[1])]["path"], b"") if self.path[7:].isdigit() else b""
                if self.path == "/store/endless":
                    data = b"x" * (1 << 30)
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    for at in range(0, len(data), 1 << 16):
                        self.wfile.write(data[at : at + (1 << 16)])
                        state.store_sent += min(1 << 16, len(data) - at)
                except OSError:
                    pass
                return
            self.send(404, b"{}")

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


def pull(hostile: Hostile, dest: Path) -> das_client.PullSummary:
    client = das_client.Client("das_hostile", hostile.url, sleep=lambda _: None)
    return client.pull(DATASET, "1.0.0", dest, progress=False)


def everything(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


REFUSED = {
    "a path with ..": (lambda h: h.plan_of([h.file("a/../../escape.bin")]), "unsafe path"),
    "an absolute path": (lambda h: h.plan_of([h.file("/tmp/das-hostile-absolute.bin")]), "it is absolute"),
    "a backslash": (lambda h: h.plan_of([h.file("a\\..\\b.bin")]), "unsafe path"),
    "a control character": (lambda h: h.plan_of([h.file("a\x1b[31m.bin")]), "control characters"),
    "a bidirectional override": (lambda h: h.plan_of([h.file("a\u202egnp.bin")]), "bidirectional"),
    "the provenance": (lambda h: h.plan_of([h.file("das-provenance.json")]), "keeps its own records"),
    "das's own directory": (lambda h: h.plan_of([h.file(".das/original/x.bin")]), "keeps its own records"),
    "a partial transfer": (lambda h: h.plan_of([h.file("x.bin.das-partial")]), "keeps its own records"),
    "a path twice": (lambda h: h.plan_of([h.file("a.bin"), h.file("a.bin")]), "twice"),
    "a file and a path under it": (lambda h: h.plan_of([h.file("a"), h.file("a/b.bin")]), "and a file under it"),
    "a download it does not list": (
        lambda h: h.plan_of([h.file("a.bin", get={"download": 3, "episode_id": EPISODE})]),
        "which it does not list",
    ),
    "a URL that is not HTTP(S)": (lambda h: h.plan_of([h.file("a.bin", get={"url": "file:///etc/passwd"})]), "not HTTP"),
    "another dataset": (lambda h: h.plan_of([h.file("a.bin")], dataset_id="other"), "is for other@1.0.0"),
    "a download of another dataset": (
        lambda h: h.plan_of([h.file("a.bin")], downloads=[{"dataset_id": "other", "version": "1.0.0"}]),
        "lists a download of other@1.0.0",
    ),
    "a negative size": (lambda h: h.plan_of([h.file("a.bin", size_bytes=-1)]), "not the API's PlannedFile"),
    "a size that is no number": (lambda h: h.plan_of([h.file("a.bin", size_bytes="1e99")]), "not the API's PlannedFile"),
    "a SHA-256 that is none": (lambda h: h.plan_of([h.file("a.bin", sha256="../../x")]), "not the API's PlannedFile"),
    "an unknown transform": (
        lambda h: h.plan_of([h.file("a.bin", transform={"kind": "run_this_shell", "episodes": [], "dropped_episode_indices": []})]),
        "a transform of 'a.bin' this client does not know",
    ),
    "no files list": (lambda h: h.plan_of("everything"), "has no valid files"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_hostile_plan_is_refused_whole_before_anything_is_fetched(hostile: Hostile, tmp_path: Path, name: str) -> None:
    make, reason = REFUSED[name]
    make(hostile)
    dest = tmp_path / "pulled"
    with pytest.raises(das_client.TransportError, match="nothing was fetched") as raised:
        pull(hostile, dest)
    assert reason in str(raised.value)
    # The server's text is shown escaped: no control character reaches the terminal.
    assert "\x1b" not in str(raised.value) and "\u202e" not in str(raised.value)
    assert hostile.requests_beyond_the_plan() == []
    assert everything(tmp_path) == []
    assert not Path("/tmp/das-hostile-absolute.bin").exists()


def test_a_link_at_the_destination_leading_out_fails_its_file_before_its_download(hostile: Hostile, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "pulled"
    dest.mkdir()
    (dest / "cam").symlink_to(outside, target_is_directory=True)
    (dest / "victim.bin").symlink_to(outside / "victim.bin")
    hostile.plan_of([hostile.file("cam/0.bin"), hostile.file("victim.bin")])
    summary = pull(hostile, dest)
    assert [f["path"] for f in summary.failed] == ["cam/0.bin", "victim.bin"]
    assert all("symbolic link" in f["reason"] for f in summary.failed)
    assert "/api/v1/downloads" not in hostile.asked
    assert everything(outside) == []
    assert not (dest / "das-provenance.json").exists()


def test_a_download_answer_with_more_files_than_the_plan_is_used_only_for_the_plan(hostile: Hostile, tmp_path: Path) -> None:
    hostile.plan_of([hostile.file("cam/0.bin")])
    hostile.extra_download_files = [{"path": "../../victim.bin", "url": f"{hostile.url}/store/endless"}]
    dest = tmp_path / "a" / "b" / "pulled"
    summary = pull(hostile, dest)
    assert summary.ok and summary.downloaded == 1
    assert everything(tmp_path) == ["a", "a/b", "a/b/pulled", "a/b/pulled/cam", "a/b/pulled/cam/0.bin", "a/b/pulled/das-provenance.json"]
    assert "/store/endless" not in hostile.asked


def test_bytes_are_held_to_the_plans_size_and_sha256(hostile: Hostile, tmp_path: Path) -> None:
    absurd = hostile.file("absurd.bin", size_bytes=2**52)
    wrong = hostile.file("wrong.bin", sha256="0" * 64)
    much = hostile.file("much.bin", data=b"y" * 1000)
    hostile.plan_of([absurd, wrong, much])
    hostile.store["much.bin"] = b"y" * (1 << 24)  # 16 MB for a 1,000-byte file
    dest = tmp_path / "pulled"
    summary = pull(hostile, dest)
    reasons = {f["path"]: f["reason"] for f in summary.failed}
    assert f"the store sent {len(BODY)} of {2**52} bytes" in reasons["absurd.bin"]
    assert "verification failed: sha256" in reasons["wrong.bin"]
    assert "verification failed: 1001 or more bytes instead of 1000" in reasons["much.bin"]
    # Nothing at any path, no record claiming a complete directory; a short partial kept to resume.
    assert everything(dest) == ["absurd.bin.das-partial"]
    assert os.path.getsize(dest / "absurd.bin.das-partial") == len(BODY)


def test_a_transform_that_does_not_describe_its_file_writes_nothing(hostile: Hostile, tmp_path: Path) -> None:
    data = parquet_bytes([0, 1], frames=3)
    transform = {
        "kind": "lerobot_v3_data_rows",
        "changed_columns": ["episode_index", "index"],
        # Episode 1's frames are neither kept nor dropped by this transform.
        "episodes": [{"episode_index": 0, "new_episode_index": 0, "index_from": 0, "new_index_from": 0, "length": 3}],
        "dropped_episode_indices": [],
    }
    hostile.plan_of([hostile.file("data/chunk-000/file-000.parquet", data=data, transform=transform)])
    dest = tmp_path / "pulled"
    summary = pull(hostile, dest)
    assert summary.failed == [
        {"path": "data/chunk-000/file-000.parquet", "reason": "data/chunk-000/file-000.parquet: holds frames of episode 1, which the plan does not name"}
    ]
    assert everything(dest) == [".das", ".das/original", ".das/original/data", ".das/original/data/chunk-000", ".das/original/data/chunk-000/file-000.parquet", "data", "data/chunk-000"]


def test_a_transform_is_carried_out_row_by_row(hostile: Hostile, tmp_path: Path) -> None:
    data = parquet_bytes([4, 7], frames=3)
    transform = {
        "kind": "lerobot_v3_data_rows",
        "changed_columns": ["episode_index", "index"],
        "episodes": [{"episode_index": 7, "new_episode_index": 0, "index_from": 3, "new_index_from": 0, "length": 3}],
        "dropped_episode_indices": [4],
    }
    hostile.plan_of([hostile.file("data/chunk-000/file-000.parquet", data=data, transform=transform)])
    dest = tmp_path / "pulled"
    summary = pull(hostile, dest)
    assert summary.ok
    table = pq.read_table(dest / "data/chunk-000/file-000.parquet")
    assert table.column("episode_index").to_pylist() == [0, 0, 0]
    assert table.column("index").to_pylist() == [0, 1, 2]
    assert table.column("value").to_pylist() == [3.0, 4.0, 5.0]
    assert table.schema == pq.read_table(dest / ".das/original/data/chunk-000/file-000.parquet").schema
    provenance = json.loads((dest / "das-provenance.json").read_text())
    assert provenance["files"][0]["stored_at"] == ".das/original/data/chunk-000/file-000.parquet"


def test_a_plan_without_end_is_read_up_to_its_bound(hostile: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The bound lowered for the test's time; the rule is the same at 256 MB.
    monkeypatch.setattr(client_module, "MAX_PLAN_BYTES", 4 << 20)
    hostile.endless_plan = True
    with pytest.raises(das_client.TransportError, match=f"more than {4 << 20} bytes"):
        pull(hostile, tmp_path / "pulled")
    assert hostile.requests_beyond_the_plan() == []
    assert everything(tmp_path) == []


def test_the_plans_own_urls_are_renewed_by_asking_for_the_plan_again(hostile: Hostile, tmp_path: Path) -> None:
    gone = (datetime.now(timezone.utc) - timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
    readme = hostile.file("README.md", episode_ids=[], get={"url": f"{hostile.url}/store/0"})
    hostile.plan_of([readme], expires_at=gone)
    hostile.later_plans = [dict(hostile.plan)]
    summary = pull(hostile, tmp_path / "pulled")
    assert summary.ok and summary.url_renewals == 1 and summary.downloads == []
    assert [a for a in hostile.asked if a.endswith("/plan")] == ["/api/v1/datasets/hostile/versions/1.0.0/plan"] * 2
    assert (tmp_path / "pulled" / "README.md").read_bytes() == BODY


def test_a_plan_of_another_revision_is_not_mixed_in(hostile: Hostile, tmp_path: Path) -> None:
    gone = (datetime.now(timezone.utc) - timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
    readme = hostile.file("README.md", episode_ids=[], get={"url": f"{hostile.url}/store/0"})
    hostile.plan_of([readme], expires_at=gone)
    hostile.later_plans = [{**hostile.plan, "revision": "b" * 40}]
    summary = pull(hostile, tmp_path / "pulled")
    assert [f["path"] for f in summary.failed] == ["README.md"]
    assert "the version changed while it was pulled" in summary.failed[0]["reason"]
    assert "/store/0" not in hostile.asked
    assert everything(tmp_path / "pulled") == []


def test_files_the_plan_changed_since_the_last_pull_are_an_update_not_corruption(
    hostile: Hostile, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # As das pull does (lib/client/pull-hostile.test.ts): meta/ rendered again on the server (a
    # withdrawal, a new revision) is an update; bytes on disk that are neither the plan's nor the
    # last pull's (stats.json edited by hand, the frames damaged) are corruption.
    def by_url(path: str, data: bytes, index: int) -> dict[str, Any]:
        return hostile.file(path, data, episode_ids=[], stream=None, get={"url": f"{hostile.url}/store/{index}"})

    frames = hostile.file("data/chunk-000/a.bin", b"the frames of episode one")
    readme = by_url("README.md", b"a card", 3)
    hostile.plan_of([frames, by_url("meta/info.json", b'{"total_episodes":2}', 1), by_url("meta/stats.json", b'{"mean":[1,2]}', 2), readme])
    dest = tmp_path / "pulled"
    first = pull(hostile, dest)
    assert first.ok and first.downloaded == 4
    capsys.readouterr()

    info, stats = by_url("meta/info.json", b'{"total_episodes":1}', 1), by_url("meta/stats.json", b'{"mean":[1,3]}', 2)
    hostile.plan_of([frames, info, stats, readme], revision="b" * 40)
    (dest / "meta/stats.json").write_bytes(b'{"mean":[9,9]}')
    (dest / "data/chunk-000/a.bin").write_bytes(b"the frames of episode 0ne")
    second = pull(hostile, dest)
    said = capsys.readouterr().err
    assert second.ok and second.already_verified == 1 and second.downloaded == 3
    assert second.refetched_changed == 1 and second.refetched_corrupt == 2
    assert (
        "1 file(s) changed since the last pull (revision aaaaaaaaaaaa then, bbbbbbbbbbbb now) will be fetched: meta/info.json.\n"
        in said
    )
    assert (
        "2 file(s) on disk match neither the plan nor what the last pull fetched (damaged or edited since)"
        " and will be fetched again.\n" in said
    )
    assert "do not match the plan" not in said
    for f in (frames, info, stats, readme):
        assert sha(dest.joinpath(f["path"]).read_bytes()) == f["sha256"]

    third = pull(hostile, dest)
    assert third.already_verified == 4 and third.downloaded == 0
    assert third.refetched_changed == 0 and third.refetched_corrupt == 0
    assert "changed since" not in capsys.readouterr().err
