"""LeRobot's own loader opens what pull wrote. It needs the `lerobot` package, which brings torch
and is large, so it runs in an interpreter of its own, named by DAS_LEROBOT_PYTHON
(clients/python/lerobot-check.sh makes one). LeRobot 0.4 reads v3.0 only; v2.1 needs LeRobot 0.3."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from das_client import Client

LEROBOT_PYTHON = os.environ.get("DAS_LEROBOT_PYTHON")

CHECK = """
import json, sys
from lerobot.datasets.lerobot_dataset import LeRobotDataset
ds = LeRobotDataset(sys.argv[1], root=sys.argv[2], video_backend="pyav")
item = ds[ds.num_frames - 1]
print(json.dumps({
    "episodes": ds.num_episodes,
    "frames": ds.num_frames,
    "state": list(item["observation.state"].shape),
    "episode_index": int(item["episode_index"]),
    "front": list(item["observation.images.front"].shape),
}))
"""


@pytest.mark.lerobot
@pytest.mark.skipif(not LEROBOT_PYTHON, reason="DAS_LEROBOT_PYTHON names no interpreter with lerobot")
def test_lerobot_opens_a_pulled_v3_subset(service, tmp_path):
    dataset_id = service["lerobot"]["v3.0"]
    client = Client(service["keys"]["loader"], service["url"])
    summary = client.pull(dataset_id, "1.0.0", tmp_path, outcome="failure", progress=False)
    assert summary.ok and summary.lerobot["loads_as_is"]
    run = subprocess.run(
        [LEROBOT_PYTHON, "-c", CHECK, dataset_id, str(tmp_path)], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr[-3000:]
    loaded = json.loads(run.stdout.strip().splitlines()[-1])
    episodes = summary.lerobot["episode_indices"]
    assert loaded["episodes"] == len(episodes) == 4
    info = json.loads((tmp_path / "meta/info.json").read_text())
    assert loaded["frames"] == info["total_frames"]
    assert loaded["episode_index"] == len(episodes) - 1  # renumbered 0..k-1
    assert loaded["state"] == [6]
    assert loaded["front"][0] == 3 and loaded["front"][1:] == [48, 64]
