"""LeRobot's own loader opens what pull wrote. It needs the `lerobot` package, which brings torch
and is large, so it runs in interpreters of its own: LeRobot 0.4 (it reads v3.0 only) named by
DAS_LEROBOT_PYTHON, LeRobot 0.3 (it reads v2.1) by DAS_LEROBOT_V21_PYTHON; clients/python/lerobot-check.sh
makes both and runs these tests."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from das_client import Client

LEROBOT_PYTHON = os.environ.get("DAS_LEROBOT_PYTHON")
LEROBOT_V21_PYTHON = os.environ.get("DAS_LEROBOT_V21_PYTHON")

CHECK = """
import json, sys
try:
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
except ImportError:  # LeRobot before 0.3
    from lerobot.common.datasets.lerobot_dataset import LeRobotDataset
episodes = json.loads(sys.argv[3]) if len(sys.argv) > 3 else None
ds = LeRobotDataset(sys.argv[1], root=sys.argv[2], episodes=episodes, video_backend="pyav")
item = ds[ds.num_frames - 1]
print(json.dumps({
    "episodes": ds.num_episodes,
    "frames": ds.num_frames,
    "state": list(item["observation.state"].shape),
    "episode_index": int(item["episode_index"]),
    "front": list(item["observation.images.front"].shape),
}))
"""


def opens_with_lerobot(
    service, tmp_path, codebase: str, interpreter: str, episodes_pulled: int, dataset: str = "lerobot"
) -> None:
    dataset_id = service[dataset][codebase]
    client = Client(service["keys"]["loader"], service["url"])
    summary = client.pull(dataset_id, "1.0.0", tmp_path, outcome="failure", progress=False)
    assert summary.ok
    episodes = summary.lerobot["episode_indices"]
    # A subset of episodes 0..k-1 opens as it is; one that keeps its original indices opens with
    # the list of them, as the summary's `open_with` says.
    listed = [] if summary.lerobot["loads_as_is"] else [json.dumps(episodes)]
    run = subprocess.run(
        [interpreter, "-c", CHECK, dataset_id, str(tmp_path), *listed],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    loaded = json.loads(run.stdout.strip().splitlines()[-1])
    info = json.loads((tmp_path / "meta/info.json").read_text())
    assert info["codebase_version"] == codebase
    assert loaded["episodes"] == len(episodes) == episodes_pulled
    if summary.lerobot["loads_as_is"]:
        assert loaded["frames"] == info["total_frames"]
        assert loaded["episode_index"] == len(episodes) - 1  # renumbered 0..k-1
    else:
        assert loaded["episode_index"] == max(episodes)  # the last frame is the last episode's
    assert loaded["state"] == [6]
    # A decoded frame of the front camera: channels, height, width.
    assert loaded["front"][0] == 3 and loaded["front"][1:] == [48, 64]


@pytest.mark.lerobot
@pytest.mark.skipif(not LEROBOT_PYTHON, reason="DAS_LEROBOT_PYTHON names no interpreter with LeRobot 0.4")
def test_lerobot_opens_a_pulled_v3_subset(service, tmp_path):
    # Failures 1 and 4, and the episodes their v3.0 files hold with them.
    opens_with_lerobot(service, tmp_path, "v3.0", LEROBOT_PYTHON, 4)


@pytest.mark.lerobot
@pytest.mark.skipif(not LEROBOT_V21_PYTHON, reason="DAS_LEROBOT_V21_PYTHON names no interpreter with LeRobot 0.3")
def test_lerobot_opens_a_pulled_v21_subset(service, tmp_path):
    # Failures 1 and 4: v2.1 keeps an episode per file.
    opens_with_lerobot(service, tmp_path, "v2.1", LEROBOT_V21_PYTHON, 2)


def expect_marked_copies(tmp_path) -> None:
    """The pulled data files are a licence's marked copies: each carries its token (docs/leak-tracing.md)."""
    import pyarrow.parquet as pq

    data = sorted((tmp_path / "data").rglob("*.parquet"))
    assert data
    for file in data:
        assert b"das.copy" in (pq.read_schema(file).metadata or {}), file


@pytest.mark.lerobot
@pytest.mark.skipif(not LEROBOT_PYTHON, reason="DAS_LEROBOT_PYTHON names no interpreter with LeRobot 0.4")
def test_lerobot_opens_a_pulled_marked_v3_subset(service, tmp_path):
    # A fingerprinted version: the licence's own copies, their float cells marked, their videos trailed.
    opens_with_lerobot(service, tmp_path, "v3.0", LEROBOT_PYTHON, 4, dataset="lerobot_fingerprinted")
    expect_marked_copies(tmp_path)


@pytest.mark.lerobot
@pytest.mark.skipif(not LEROBOT_V21_PYTHON, reason="DAS_LEROBOT_V21_PYTHON names no interpreter with LeRobot 0.3")
def test_lerobot_opens_a_pulled_marked_v21_subset(service, tmp_path):
    opens_with_lerobot(service, tmp_path, "v2.1", LEROBOT_V21_PYTHON, 2, dataset="lerobot_fingerprinted")
    expect_marked_copies(tmp_path)
