"""LeRobot trains straight from the service: `LeRobotDataset("das/<id>", episodes=[...])` and
`StreamingLeRobotDataset("das/<id>")` with HF_ENDPOINT=<service>/hub and a key as HF_TOKEN, in the
LeRobot 0.4 interpreter clients/python/lerobot-check.sh makes (DAS_LEROBOT_PYTHON). LeRobot finds
the dataset's codebase version among the repository's tags, fetches meta/ and the files of the
episodes asked for through huggingface_hub, and every file of theirs is in the disclosure log."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

LEROBOT_PYTHON = os.environ.get("DAS_LEROBOT_PYTHON")

pytestmark = [
    pytest.mark.lerobot,
    pytest.mark.skipif(not LEROBOT_PYTHON, reason="DAS_LEROBOT_PYTHON names no interpreter with LeRobot 0.4"),
]

MAP_STYLE = """
import json, sys
from lerobot.datasets.lerobot_dataset import LeRobotDataset
ds = LeRobotDataset(sys.argv[1], episodes=json.loads(sys.argv[2]), video_backend="pyav")
last = ds[ds.num_frames - 1]
print(json.dumps({
    "episodes": ds.num_episodes,
    "frames": ds.num_frames,
    "episode_index": int(last["episode_index"]),
    "state": list(last["observation.state"].shape),
    "front": list(last["observation.images.front"].shape),
    "lengths": {int(e["episode_index"]): int(e["length"]) for e in ds.meta.episodes},
}))
"""

STREAMING = """
import json, sys
try:
    from lerobot.datasets.streaming_dataset import StreamingLeRobotDataset
except ImportError:
    print(json.dumps({"missing": True}))
    raise SystemExit(0)
ds = StreamingLeRobotDataset(sys.argv[1], shuffle=False)
frames = []
for frame in ds:
    frames.append({"episode_index": int(frame["episode_index"]), "front": list(frame["observation.images.front"].shape)})
    if len(frames) == 5:
        break
print(json.dumps({"missing": False, "episodes": ds.num_episodes, "frames": frames}))
"""


def run(service: dict[str, Any], tmp_path, code: str, *args: str) -> tuple[dict[str, Any], str]:
    issued = service["ask"]({"key": f"lerobot hub {tmp_path.name}"[-80:]})
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HF_")},
        "HF_ENDPOINT": f"{service['url']}/hub",
        "HF_TOKEN": issued["key"],
        "HF_HOME": str(tmp_path / "hf"),
        "HF_LEROBOT_HOME": str(tmp_path / "lerobot"),
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }
    done = subprocess.run(
        [LEROBOT_PYTHON, "-c", code, *args], capture_output=True, text=True, timeout=900, env=env
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), issued["key_id"]


def test_lerobot_dataset_opens_chosen_episodes_of_a_v3_version_from_the_service(service, tmp_path):
    dataset_id = service["lerobot"]["v3.0"]
    loaded, key_id = run(service, tmp_path, MAP_STYLE, f"das/{dataset_id}", json.dumps([1, 4]))
    assert loaded["episodes"] == 2
    assert loaded["frames"] == loaded["lengths"]["1"] + loaded["lengths"]["4"]
    assert loaded["episode_index"] == 4
    assert loaded["state"] == [6]
    assert loaded["front"][0] == 3 and loaded["front"][1:] == [48, 64]
    # The files of episodes 1 and 4 (each packs two episodes): their data and both cameras, each
    # once; and meta/, of no episode.
    entries = service["ask"]({"entries": key_id})["entries"]
    paths = sorted(p for e in entries if e["episode_count"] for p in e["requested_scope"]["paths"])
    assert len(paths) == len(set(paths)) == 6
    assert {p.split("/")[0] for p in paths} == {"data", "videos"}
    assert {p.split("/")[0] for e in entries if not e["episode_count"] for p in e["requested_scope"]["paths"]} == {"meta"}
    assert all(e["channel"] == "hub" for e in entries)


def test_streaming_lerobot_dataset_streams_from_the_service(service, tmp_path):
    # One video file per camera: LeRobot 0.4.4's streaming seeks `index / fps` in a camera's file, so
    # it reads only a dataset whose files each start at frame 0 (a local copy of one laid out
    # otherwise fails the same way).
    dataset_id = service["hub"]["streamable"]["dataset_id"]
    streamed, key_id = run(service, tmp_path, STREAMING, f"das/{dataset_id}")
    if streamed["missing"]:
        pytest.skip("the installed LeRobot has no StreamingLeRobotDataset")
    assert streamed["episodes"] == 4
    assert len(streamed["frames"]) == 5
    assert all(f["front"][0] == 3 for f in streamed["frames"])
    assert service["ask"]({"entries": key_id})["entries"], "streaming read files that carry episodes: disclosed"
