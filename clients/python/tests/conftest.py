"""The real service for the tests: scripts/python-client-server.ts starts an isolated installation on
the embedded default (its own PostgreSQL, local S3 store and data directory) on the current
production build, seeds it, prints its URL and keys as JSON, and stops when our end of its standard
input closes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def service() -> Iterator[dict[str, Any]]:
    process = subprocess.Popen(
        ["npx", "tsx", "scripts/python-client-server.ts"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=sys.stderr if os.environ.get("DAS_TEST_VERBOSE") else subprocess.DEVNULL,
        text=True,
    )
    line = process.stdout.readline() if process.stdout else ""
    if not line:
        process.wait(timeout=60)
        pytest.fail(f"scripts/python-client-server.ts exited with {process.returncode} before serving (DAS_TEST_VERBOSE=1 shows why)")
    info = json.loads(line)

    def ask(command: dict[str, Any]) -> dict[str, Any]:
        """One command to the service's script (scripts/python-client-server.ts), its answer."""
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(command) + "\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        if "error" in answer:
            raise AssertionError(f"{command} failed: {answer['error']}")
        return answer

    def withdraw(episode_ids: list[str]) -> dict[str, Any]:
        """Withdraws episodes on the server as das-admin withdraw does: a real withdrawal, real notices."""
        return ask({"withdraw": episode_ids})

    info["withdraw"] = withdraw
    info["ask"] = ask
    yield info
    assert process.stdin is not None
    process.stdin.close()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture(autouse=True)
def no_ambient_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The developer's own key, URL or profile must not leak into a test.
    for name in ("DAS_API_KEY", "DAS_API_URL", "DAS_PROFILE", "DAS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
