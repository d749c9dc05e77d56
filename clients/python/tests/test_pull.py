"""pull against the real service: files verified into place, an interrupted pull resumed, URLs that
expire on the way renewed, requests pull refuses, and paths a hostile service could name."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import das_client
from das_client import Client
from das_client.plan import UnsafePath, path_inside
from das_client.transfer import PARTIAL_SUFFIX

from helpers import files_under, sha256

# Every complete pull says which download delivered which file of which episodes (for `das sync`).
PROVENANCE = "das-provenance.json"


def test_pull_writes_every_file_verified_and_skips_them_next_time(service, tmp_path):
    client = Client(service["keys"]["pull"], service["url"])
    plain = service["plain"]
    manifest = client.manifest(plain["dataset_id"], "1.0.0")
    summary = client.pull(plain["dataset_id"], "1.0.0", tmp_path, progress=False)
    assert summary.ok and summary.failed == []
    assert summary.downloaded == summary.files == len(manifest["files"])
    assert len(summary.downloads) == 1
    assert files_under(tmp_path) == sorted([PROVENANCE, *(f["path"] for f in manifest["files"])])
    for f in manifest["files"]:
        assert sha256(tmp_path / f["path"]) == f["sha256"]
    again = client.pull(plain["dataset_id"], "1.0.0", tmp_path, progress=False)
    assert again.already_verified == again.files and again.downloaded == 0 and again.downloads == []
    # A file changed on disk is fetched again.
    changed = tmp_path / manifest["files"][3]["path"]
    changed.write_bytes(b"not the file")
    third = client.pull(plain["dataset_id"], "1.0.0", tmp_path, progress=False)
    assert third.refetched_corrupt == 1 and sha256(changed) == manifest["files"][3]["sha256"]


def test_pull_of_episodes_and_streams(service, tmp_path):
    client = Client(service["keys"]["pull"], service["url"])
    plain = service["plain"]
    chosen = [e["episode_id"] for e in client.episodes(plain["dataset_id"], "1.0.0")][:3]
    summary = client.pull(plain["dataset_id"], "1.0.0", tmp_path, episodes=chosen, streams=["joints"], progress=False)
    assert summary.ok
    assert files_under(tmp_path) == sorted([PROVENANCE, *(f"episodes/{e}/joints.bin" for e in chosen)])


def test_pull_of_the_episodes_a_filter_matches(service, tmp_path):
    client = Client(service["keys"]["pull"], service["url"])
    plain = service["plain"]
    listed = client.episodes(plain["dataset_id"], "1.0.0").to_list()
    median = sorted(e["duration_s"] for e in listed)[len(listed) // 2]
    task, recovery = listed[0]["task"], listed[0]["has_recovery"]
    matching = [
        e["episode_id"] for e in listed if e["task"] == task and e["has_recovery"] == recovery and e["duration_s"] <= median
    ]
    assert 0 < len(matching) < len(listed)
    summary = client.pull(
        plain["dataset_id"], "1.0.0", tmp_path, task=task, has_recovery=recovery, max_duration_s=median, streams=["joints"],
        progress=False,
    )
    assert summary.ok and summary.downloaded == len(matching) and len(summary.downloads) == 1
    assert files_under(tmp_path) == sorted([PROVENANCE, *(f"episodes/{e}/joints.bin" for e in matching)])


def test_pull_refuses_unknown_streams_and_episodes_before_downloading(service, tmp_path):
    client = Client(service["keys"]["pull"], service["url"])
    plain = service["plain"]
    with pytest.raises(das_client.PullError, match="Unknown stream"):
        client.pull(plain["dataset_id"], "1.0.0", tmp_path, streams=["sonar"], progress=False)
    with pytest.raises(das_client.PullError, match="No files of these episodes"):
        client.pull(plain["dataset_id"], "1.0.0", tmp_path, episodes=["nobody"], progress=False)
    with pytest.raises(das_client.PullError, match="must include data"):
        client.pull(service["lerobot"]["v3.0"], "1.0.0", tmp_path, streams=["observation.images.front"], progress=False)
    assert files_under(tmp_path) == []


def test_an_interrupted_pull_resumes_where_it_stopped(service, tmp_path):
    plain = service["plain"]
    script = (
        "import sys; from das_client import Client; "
        "Client(sys.argv[1], sys.argv[2]).pull(sys.argv[3], '1.0.0', sys.argv[4], limit_rate=60_000, concurrency=2, progress=False)"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, service["keys"]["resume"], service["url"], plain["dataset_id"], str(tmp_path)]
    )
    sizes = {f["path"]: f["size_bytes"] for f in Client(service["keys"]["resume"], service["url"]).manifest(plain["dataset_id"], "1.0.0")["files"]}

    def mid_file() -> list[Path]:
        found = []
        for p in tmp_path.rglob(f"*{PARTIAL_SUFFIX}"):
            relative = p.relative_to(tmp_path).as_posix()[: -len(PARTIAL_SUFFIX)]
            try:
                size = p.stat().st_size
            except FileNotFoundError:  # renamed into place meanwhile
                continue
            if 0 < size < sizes[relative]:
                found.append(p)
        return found

    # Killed outright mid-file: no chance to tidy up, as with a lost machine.
    deadline = time.time() + 60
    while time.time() < deadline and not mid_file() and child.poll() is None:
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert mid_file(), "the pull was not interrupted mid-file"
    before = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file() and not p.name.endswith(PARTIAL_SUFFIX)}

    client = Client(service["keys"]["resume"], service["url"])
    summary = client.pull(plain["dataset_id"], "1.0.0", tmp_path, progress=False)
    manifest = client.manifest(plain["dataset_id"], "1.0.0")
    assert summary.ok
    assert summary.already_verified == len(before)
    assert summary.resumed >= 1
    assert summary.bytes_received < sum(f["size_bytes"] for f in manifest["files"] if f["path"] not in before)
    assert files_under(tmp_path) == sorted([PROVENANCE, *(f["path"] for f in manifest["files"])])
    for f in manifest["files"]:
        assert sha256(tmp_path / f["path"]) == f["sha256"]


def test_urls_that_expire_mid_pull_are_renewed_for_the_files_still_open(service, tmp_path):
    client = Client(service["keys"]["expiry"], service["url"])
    plain = service["plain"]
    chosen = [e["episode_id"] for e in client.episodes(plain["dataset_id"], "1.0.0")][:3]
    asked = {"n": 0}

    def clock() -> float:
        # The first file starts on fresh URLs; by the next one they are 20 minutes old.
        asked["n"] += 1
        return time.time() + (0 if asked["n"] == 1 else 1200)

    summary = client.pull(
        plain["dataset_id"], "1.0.0", tmp_path, episodes=chosen, streams=["cam"], concurrency=1, now=clock, progress=False
    )
    assert summary.ok
    assert summary.url_renewals >= 1 and len(summary.downloads) == 1 + summary.url_renewals
    assert files_under(tmp_path) == sorted([PROVENANCE, *(f"episodes/{e}/cam.bin" for e in chosen)])


def test_a_path_from_the_service_cannot_name_a_place_outside_the_directory(tmp_path):
    for bad in ["../escape", "/etc/passwd", "a/../../b", "a\\b", "", "a//b", "./a", "a\x00b", "a\nb", "a\u202eb", " a"]:
        with pytest.raises(UnsafePath, match="unsafe path"):
            path_inside(tmp_path, bad)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "link").symlink_to(outside, target_is_directory=True)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(UnsafePath, match="leads out of the directory"):
        path_inside(tmp_path, "link/file")
    with pytest.raises(UnsafePath, match="leads nowhere"):
        path_inside(tmp_path, "dangling")
    # A link that stays inside is followed.
    (tmp_path / "inside").mkdir()
    (tmp_path / "here").symlink_to(tmp_path / "inside", target_is_directory=True)
    assert path_inside(tmp_path, "here/file") == tmp_path.resolve() / "inside" / "file"
    assert path_inside(tmp_path, "meta/info.json") == tmp_path.resolve() / "meta" / "info.json"
