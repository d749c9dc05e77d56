"""Every endpoint of the API, every error type the service can be made to answer, and where the key comes from."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import das_client
from das_client import Client

from conftest import REPO


def client_for(service, key="main", **options) -> Client:
    return Client(service["keys"][key], service["url"], **options)


def test_datasets_versions_and_manifest(service):
    client = client_for(service)
    plain = service["plain"]
    ids = {d["dataset_id"] for d in client.datasets()}
    assert {plain["dataset_id"], service["lerobot"]["v2.1"], service["lerobot"]["v3.0"]} <= ids
    versions = client.versions(plain["dataset_id"])
    assert [v["version"] for v in versions] == ["2.0.0", "1.0.0"]
    assert [v["licensed"] for v in versions] == [False, True]
    assert versions[1]["changelog"] == [{"type": "added", "description": "first"}]
    manifest = client.manifest(plain["dataset_id"], "1.0.0")
    assert len(manifest["files"]) == 1 + 2 * plain["episodes"]
    assert manifest["streams"] == ["cam", "joints"]
    lerobot = client.manifest(service["lerobot"]["v3.0"], "1.0.0")
    assert lerobot["format"]["codebase_version"] == "v3.0"


def test_episodes_follow_cursors_filter_and_become_a_dataframe(service):
    client = client_for(service)
    plain = service["plain"]
    every = client.episodes(plain["dataset_id"], "1.0.0")
    listed = list(every)
    assert len(listed) == plain["episodes"] == every.total
    assert [e["episode_id"] for e in listed] == sorted((e["episode_id"] for e in listed), key=str.encode)
    outcome = listed[0]["outcome"]
    environment = listed[0]["environment"]
    failures = client.episodes(plain["dataset_id"], "1.0.0", outcome=outcome).to_list()
    assert failures and all(e["outcome"] == outcome for e in failures)
    assert len(failures) == sum(1 for e in listed if e["outcome"] == outcome)
    both = client.episodes(plain["dataset_id"], "1.0.0", outcome=outcome, environment=environment).to_list()
    assert [e["episode_id"] for e in both] == [
        e["episode_id"] for e in listed if e["outcome"] == outcome and e["environment"] == environment
    ]
    frame = client.episodes(plain["dataset_id"], "1.0.0").to_pandas()
    assert list(frame.episode_id) == [e["episode_id"] for e in listed]
    assert {"outcome", "environment", "duration_s", "has_recovery", "contributor", "streams"} <= set(frame.columns)
    lerobot = client.episodes(service["lerobot"]["v2.1"], "1.0.0", outcome="failure").to_pandas()
    assert sorted(lerobot.episode_id) == [f"{service['lerobot']['v2.1']}-{i:06d}" for i in (1, 4)]


def test_episodes_filter_by_task_contributor_recovery_and_a_duration_range(service):
    client = client_for(service)
    plain = service["plain"]
    listed = client.episodes(plain["dataset_id"], "1.0.0").to_list()
    first = listed[0]
    durations = sorted(e["duration_s"] for e in listed)
    low, high = durations[2], durations[8]
    cases = [
        ({"task": first["task"]}, lambda e: e["task"] == first["task"]),
        ({"contributor": first["contributor"]}, lambda e: e["contributor"] == first["contributor"]),
        ({"has_recovery": first["has_recovery"]}, lambda e: e["has_recovery"] == first["has_recovery"]),
        ({"has_recovery": not first["has_recovery"]}, lambda e: e["has_recovery"] != first["has_recovery"]),
        ({"min_duration_s": low, "max_duration_s": high}, lambda e: low <= e["duration_s"] <= high),
        (
            {"contributor": first["contributor"], "has_recovery": first["has_recovery"], "max_duration_s": first["duration_s"]},
            lambda e: e["contributor"] == first["contributor"]
            and e["has_recovery"] == first["has_recovery"]
            and e["duration_s"] <= first["duration_s"],
        ),
    ]
    for filters, matches in cases:
        found = client.episodes(plain["dataset_id"], "1.0.0", **filters)
        ids = [e["episode_id"] for e in found]
        expected = [e["episode_id"] for e in listed if matches(e)]
        assert ids == expected, filters
        assert found.total == len(expected), filters
    # The range really narrows, its bounds included.
    ranged = client.episodes(plain["dataset_id"], "1.0.0", min_duration_s=low, max_duration_s=high).to_list()
    assert 0 < len(ranged) < len(listed)
    assert {low, high} <= {e["duration_s"] for e in ranged}
    assert client.episodes(plain["dataset_id"], "1.0.0", task="no-such-task").to_list() == []


def test_episode_filters_are_checked_before_anything_is_sent(service):
    client = client_for(service)
    plain = service["plain"]
    with pytest.raises(TypeError, match="has_recovery must be True or False, not 'false'"):
        client.episodes(plain["dataset_id"], "1.0.0", has_recovery="false")
    with pytest.raises(ValueError, match=r"min_duration_s \(20\) must not exceed max_duration_s \(10\)"):
        client.episodes(plain["dataset_id"], "1.0.0", min_duration_s=20, max_duration_s=10)
    with pytest.raises(ValueError, match="max_duration_s must be a number of seconds"):
        client.download(plain["dataset_id"], "1.0.0", max_duration_s=-1)
    with pytest.raises(ValueError, match="task must be a non-empty string"):
        client.download(plain["dataset_id"], "1.0.0", task="")


def test_pages_smaller_than_the_list_are_followed(service, monkeypatch):
    monkeypatch.setattr(das_client.client, "PAGE", 5)
    client = client_for(service)
    assert len(list(client.episodes(service["plain"]["dataset_id"], "1.0.0"))) == service["plain"]["episodes"]


def test_annotations(service):
    client = client_for(service)
    first = client.episodes(service["plain"]["dataset_id"], "1.0.0").to_list()
    annotated = [e["episode_id"] for e in first]
    spans = [client.annotations(e, version="1.0.0") for e in annotated]
    assert sorted(len(s) for s in spans)[-2:] == [2, 2]
    labels = [a["label"] for s in spans for a in s]
    assert labels.count("reach") == 2 and labels.count("grasp") == 2
    lerobot_episode = f"{service['lerobot']['v3.0']}-000002"
    assert [a["label"] for a in client.annotations(lerobot_episode)][:1] == ["reach"]


def test_download_is_recorded_and_an_idempotent_retry_returns_the_same(service):
    client = client_for(service)
    plain = service["plain"]
    episode = client.episodes(plain["dataset_id"], "1.0.0").to_list()[0]["episode_id"]
    first = client.download(plain["dataset_id"], "1.0.0", episode_ids=[episode], streams=["cam"], idempotency_key="py-1")
    assert [f["path"] for f in first["files"]] == [f"episodes/{episode}/cam.bin"]
    again = client.download(plain["dataset_id"], "1.0.0", episode_ids=[episode], streams=["cam"], idempotency_key="py-1")
    assert again["download_id"] == first["download_id"] and again["files"] == first["files"]
    assert again["expires_at"] == first["expires_at"]
    other = client.download(plain["dataset_id"], "1.0.0", episode_ids=[episode], streams=["cam"])
    assert other["download_id"] != first["download_id"]
    filtered = client.download(plain["dataset_id"], "1.0.0", outcome="failure", streams=["joints"])
    assert all(f["stream"] == "joints" for f in filtered["files"])
    listed = client.episodes(plain["dataset_id"], "1.0.0").to_list()
    contributor, recovery = listed[0]["contributor"], listed[0]["has_recovery"]
    matching = {
        e["episode_id"] for e in listed if e["contributor"] == contributor and e["has_recovery"] == recovery and e["duration_s"] >= 1.5
    }
    narrowed = client.download(
        plain["dataset_id"], "1.0.0", contributor=contributor, has_recovery=recovery, min_duration_s=1.5, streams=["cam"]
    )
    assert sorted(f["path"] for f in narrowed["files"]) == sorted(f"episodes/{e}/cam.bin" for e in matching)
    lerobot = client.download(
        service["lerobot"]["v3.0"], "1.0.0", episode_ids=[f"{service['lerobot']['v3.0']}-000001"], streams=["data"],
        include_version_files=True,
    )
    assert any(f["path"] == "meta/info.json" for f in lerobot["files"])
    assert lerobot["co_delivered_episode_ids"] == [f"{service['lerobot']['v3.0']}-000000"]


def test_preview(service):
    client = client_for(service)
    episode = f"{service['lerobot']['v2.1']}-000003"
    preview = client.preview(episode, version="1.0.0", streams=["observation.images.front"])
    assert [s["stream"] for s in preview["streams"]] == ["observation.images.front"]
    assert preview["streams"][0]["url"].startswith("http")


def test_openapi(service):
    document = Client("das_unused", service["url"]).openapi()
    assert document["openapi"].startswith("3.1")
    assert "/api/v1/downloads" in document["paths"]


def test_every_error_code_of_the_service_has_its_exception():
    # The service's one error table (lib/errors.ts): a code added there needs its class here.
    table = (REPO / "lib" / "errors.ts").read_text()
    start = table.index("export const ERROR_STATUS")
    codes = set(re.findall(r"^  ([a-z_]+): \d{3},", table[start : table.index("}", start)], re.M))
    assert codes and codes == set(das_client.errors.ERROR_CLASSES)


def test_licences_and_notices(service):
    client = client_for(service, "errors")
    licensed = {(l["dataset_id"], l["version"]) for l in client.licences()}
    assert (service["plain"]["dataset_id"], "1.0.0") in licensed
    assert (service["plain"]["dataset_id"], service["plain"]["unlicensed_version"]) not in licensed
    # No withdrawal reached this organisation: no notice, and another's notice id is a 404.
    assert client.notices() == []
    with pytest.raises(das_client.NotFound):
        client.acknowledge("nt_" + "0" * 32, "deleted everything", ["a/b.mp4"])


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda c, s: c.versions("no-such-dataset"), das_client.NotFound),
        (lambda c, s: c.manifest(s["plain"]["dataset_id"], s["plain"]["unlicensed_version"]), das_client.VersionNotLicensed),
        (lambda c, s: c.download(s["plain"]["dataset_id"], s["plain"]["unlicensed_version"]), das_client.VersionNotLicensed),
        (lambda c, s: c._get(f"/datasets/{s['plain']['dataset_id']}/versions", {"limit": 0}), das_client.InvalidParameter),
        (lambda c, s: c._get(f"/datasets/{s['plain']['dataset_id']}/versions", {"cursor": "nonsense"}), das_client.InvalidCursor),
        (lambda c, s: c.download(s["plain"]["dataset_id"], "1.0.0", episode_ids=[]), das_client.InvalidBody),
        (lambda c, s: c.download(s["big"]["dataset_id"], "1.0.0"), das_client.ScopeTooLarge),
        (lambda c, s: c._send("DELETE", "/datasets"), das_client.MethodNotAllowed),
    ],
)
def test_error_codes_become_typed_exceptions(service, call, error):
    client = client_for(service, "errors")
    with pytest.raises(error) as raised:
        call(client, service)
    assert raised.value.code == error.code
    assert raised.value.request_id and raised.value.message
    assert str(raised.value).startswith(f"{error.code}: ")


def test_unauthorized_and_idempotency_conflict(service):
    with pytest.raises(das_client.Unauthorized):
        Client("das_notAKeyAtAll", service["url"]).datasets()
    client = client_for(service, "errors")
    plain = service["plain"]
    client.download(plain["dataset_id"], "1.0.0", streams=["cam"], outcome="success", idempotency_key="py-conflict")
    with pytest.raises(das_client.IdempotencyConflict):
        client.download(plain["dataset_id"], "1.0.0", streams=["joints"], outcome="success", idempotency_key="py-conflict")


def test_rate_limited_is_retried_after_retry_after_then_raised_with_it(service):
    waits: list[float] = []
    client = client_for(service, "rate", max_retries=2, sleep=waits.append)
    with pytest.raises(das_client.RateLimited) as raised:
        for _ in range(service["rate_limit_per_minute"] + 5):
            client._get("/datasets", {"limit": 1})
    assert raised.value.status == 429
    assert raised.value.retry_after is not None and 0 < raised.value.retry_after <= 60
    # Two waits of Retry-After seconds each (the bound), then the error.
    assert len(waits) == 2 and all(0 < w <= 60 for w in waits)


def test_an_unreachable_service_is_a_transport_error():
    with pytest.raises(das_client.TransportError):
        Client("das_x", "http://127.0.0.1:9", max_retries=1, sleep=lambda s: None).datasets()


def test_key_and_url_from_the_environment_or_a_private_profile(service, monkeypatch, tmp_path):
    with pytest.raises(das_client.ConfigError):
        Client()
    monkeypatch.setenv("DAS_API_KEY", service["keys"]["main"])
    monkeypatch.setenv("DAS_API_URL", service["url"] + "/api/v1/")
    assert Client().datasets()
    monkeypatch.delenv("DAS_API_KEY")
    monkeypatch.delenv("DAS_API_URL")
    profile = Path(os.environ["XDG_CONFIG_HOME"]) / "das" / "credentials"
    profile.parent.mkdir(parents=True)
    profile.write_text(f"[default]\napi_key = {service['keys']['main']}\nbase_url = {service['url']}\n[other]\napi_key = das_bad\nbase_url = {service['url']}\n")
    profile.chmod(0o644)
    with pytest.raises(das_client.ConfigError, match="readable by others"):
        Client()
    profile.chmod(0o600)
    client = Client()
    assert client.base_url == f"{service['url']}/api/v1"
    assert service["keys"]["main"] not in repr(client)
    assert client.datasets()
    with pytest.raises(das_client.Unauthorized):
        Client(profile="other").datasets()
    with pytest.raises(das_client.ConfigError, match="no profile"):
        Client(profile="missing")
