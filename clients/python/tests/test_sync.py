"""sync against the real service: a directory pulled, episodes withdrawn on the server (a real
withdrawal, so real notices), the directory brought in line and the notice acknowledged; and a
provenance that points outside the directory refused before anything is touched."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import das_client
from das_client import Client

from helpers import files_under

PROVENANCE = "das-provenance.json"


def _everything(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_sync_deletes_the_withdrawn_files_and_acknowledges_the_real_notice(service, tmp_path):
    client = Client(service["keys"]["sync"], service["url"])
    plain = service["sync"]["plain"]
    summary = client.pull(plain["dataset_id"], plain["version"], tmp_path, progress=False)
    assert summary.ok
    gone, kept = plain["episodes"][0], plain["episodes"][1:]
    gone_files = sorted(f"episodes/{gone}/{s}.bin" for s in ("cam", "joints"))

    # Nothing withdrawn yet: nothing to do, nothing acknowledged.
    idle = client.sync(tmp_path)
    assert idle.notices == [] and idle.deleted == []

    withdrawal = service["withdraw"]([gone])
    assert withdrawal["episode_ids"] == [gone] and withdrawal["notices"] >= 1
    notice = next(n for n in client.notices() if n["episode_ids"] == [gone])
    assert notice["acknowledged_at"] is None

    dry = client.sync(tmp_path, dry_run=True)
    assert dry.dry_run and dry.withdrawn_episodes == [gone] and dry.deleted == gone_files
    assert all((tmp_path / p).exists() for p in gone_files)
    assert next(n for n in client.notices() if n["notice_id"] == notice["notice_id"])["acknowledged_at"] is None

    done = client.sync(tmp_path)
    assert done.deleted == gone_files
    assert [n.notice_id for n in done.notices] == [notice["notice_id"]]
    assert done.notices[0].acknowledgement_id.startswith("ack_")
    assert files_under(tmp_path) == sorted(
        [PROVENANCE, *(f"episodes/{e}/{s}.bin" for e in kept for s in ("cam", "joints"))]
    )
    # The server has the acknowledgement of the real notice.
    acknowledged = next(n for n in client.notices() if n["notice_id"] == notice["notice_id"])
    assert acknowledged["acknowledged_at"] is not None
    # The directory keeps counts of what sync did, and the withdrawn episode's id nowhere.
    provenance = json.loads((tmp_path / PROVENANCE).read_text())
    assert provenance["withdrawals"][-1]["notice_id"] == notice["notice_id"]
    assert provenance["withdrawals"][-1]["episodes"] == 1 and provenance["withdrawals"][-1]["deleted_files"] == 2
    assert all(gone.encode() not in p.read_bytes() for p in _everything(tmp_path))

    # Again: nothing left to delete, and no second acknowledgement.
    again = client.sync(tmp_path)
    assert again.deleted == [] and [n.acknowledgement_id for n in again.notices] == [None]


def test_sync_of_a_lerobot_v3_subset_leaves_a_subset_without_the_withdrawn_episode(service, tmp_path):
    client = Client(service["keys"]["sync"], service["url"])
    lerobot = service["sync"]["lerobot"]
    dataset_id = lerobot["dataset_id"]
    assert client.pull(dataset_id, lerobot["version"], tmp_path, progress=False).ok
    withdrawn = f"{dataset_id}-000002"
    service["withdraw"]([withdrawn])

    result = client.sync(tmp_path)
    # Episode 2 shares its data and video files with episode 3, which goes with them.
    assert result.withdrawn_episodes == [withdrawn]
    assert result.also_removed == [f"{dataset_id}-000003"]
    assert result.meta == "rewritten"
    assert result.notices[0].acknowledgement_id.startswith("ack_")
    left = [0, 1, 4, 5]
    info = json.loads((tmp_path / "meta/info.json").read_text())
    assert info["total_episodes"] == len(left)
    provenance = json.loads((tmp_path / PROVENANCE).read_text())
    assert provenance["episodes"]["episode_indices"] == left
    # Renumbered 0..3 for LeRobot, the version's indices kept in the provenance.
    assert [e["original_episode_index"] for e in provenance["renumbering"]["episodes"]] == left
    original_of = {e["episode_index"]: e["original_episode_index"] for e in provenance["renumbering"]["episodes"]}
    # No file names the withdrawn episode, and no row of any parquet or JSON Lines file is of it:
    # in the files LeRobot reads (renumbered) nor in the version's meta/ and data kept under .das/.
    seen: set[int] = set()
    for p in _everything(tmp_path):
        assert withdrawn.encode() not in p.read_bytes(), p
        as_kept = p.relative_to(tmp_path).parts[0] == ".das"
        if p.suffix == ".parquet":
            table = pq.read_table(p)
            indices = table.column("episode_index").to_pylist() if "episode_index" in table.schema.names else []
        elif p.suffix == ".jsonl":
            indices = [json.loads(line).get("episode_index") for line in p.read_text().splitlines() if line.strip()]
        else:
            continue
        version_indices = {int(i) if as_kept else original_of.get(int(i), int(i)) for i in indices if i is not None}
        assert 2 not in version_indices, p
        seen |= version_indices
    assert sorted(seen) == left


def test_sync_refuses_a_provenance_naming_paths_outside_the_directory(service, tmp_path):
    client = Client(service["keys"]["sync"], service["url"])
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"not yours")
    pulled = tmp_path / "pulled"
    pulled.mkdir()
    (pulled / PROVENANCE).write_text(
        json.dumps(
            {
                "dataset_id": "d",
                "version": "1.0.0",
                "source_format": "files",
                "downloads": [{"download_id": "dl_x", "co_delivered_episode_ids": []}],
                "files": [{"path": "../outside.bin", "sha256": "0" * 64, "size_bytes": 9, "episode_ids": ["e"], "download_id": "dl_x", "stored_at": "../outside.bin"}],
            }
        )
    )
    with pytest.raises(das_client.SyncError, match="unsafe path"):
        client.sync(pulled)
    assert outside.read_bytes() == b"not yours"
    # No provenance at all: a clear error, not a traceback from deep inside.
    with pytest.raises(das_client.SyncError, match="no readable das-provenance.json"):
        client.sync(tmp_path / "empty")
