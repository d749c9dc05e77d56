"""Fuzz the API against its own OpenAPI document with schemathesis (scripts/api-fuzz/ci.sh runs this).

Starts the Python client's service (scripts/python-client-server.ts: embedded PostgreSQL, local S3
store, `next start` on the current production build, demo data) with a rate limit no fuzzer
reaches, gives a licensee's organisation a withdrawal notice (a download, then a withdrawal of one
of its episodes), and runs `st run` with every check and every phase against the served document,
with that organisation's key. Arguments after `--` go to `st run` after ours (a later option wins:
`-- --seed=7 --max-examples=300`). DAS_TEST_VERBOSE=1 shows the service's log.

A stateful run may print "Failed to extract data from response" for a link out of an empty page
(`$response.body#/episodes/0/...` of no episodes): a note, not a failure.

    scripts/api-fuzz/.venv/bin/python scripts/api-fuzz/run.py [-- st-run-options...]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RATE_LIMIT_PER_MINUTE = 1_000_000
# Every check and every phase, from a fixed seed and a bounded number of cases per operation, so
# that a run is repeatable and takes a few minutes on CI's machine.
ST_RUN_OPTIONS = [
    "--checks=all",
    "--phases=examples,coverage,fuzzing,stateful",
    "--seed=34",
    "--max-examples=100",
    "--workers=2",
]


def post(url: str, key: str, body: dict) -> dict:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json", "Accept": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def main(st_options: list[str]) -> int:
    server = subprocess.Popen(
        ["npx", "tsx", "scripts/python-client-server.ts", "--rate-limit-per-minute", str(RATE_LIMIT_PER_MINUTE)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=sys.stderr if os.environ.get("DAS_TEST_VERBOSE") else subprocess.DEVNULL,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        line = server.stdout.readline()
        if not line:
            print("api-fuzz: the service did not start (see above)", file=sys.stderr)
            return 1
        info = json.loads(line)
        # The organisation of the sync tests: its first dataset (by id) is a LeRobot version with
        # video, so the links from the lists lead to previews and downloads that succeed.
        url, key = info["url"], info["keys"]["sync"]
        plain = info["sync"]["plain"]
        # A notice to the organisation, so that a stateful run has one to acknowledge: it received
        # two episodes of its plain version, and one of them is withdrawn.
        received = plain["episodes"][:2]
        post(
            f"{url}/api/v1/downloads",
            key,
            {"dataset_id": plain["dataset_id"], "version": plain["version"], "episode_ids": received},
        )
        server.stdin.write(json.dumps({"withdraw": received[-1:]}) + "\n")
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        if "error" in answer:
            print(f"api-fuzz: the withdrawal failed: {answer['error']}", file=sys.stderr)
            return 1

        command = [
            str(HERE / ".venv" / "bin" / "st"),
            "--config-file",
            str(HERE / "schemathesis.toml"),
            "run",
            f"{url}/api/v1/openapi.json",
            "--header",
            f"Authorization: Bearer {key}",
            *ST_RUN_OPTIONS,
            *st_options,
        ]
        started = time.monotonic()
        status = subprocess.call(command, cwd=REPO)
        print(f"api-fuzz: st run took {time.monotonic() - started:.0f} s", file=sys.stderr)
        return status
    finally:
        server.stdin.close()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[args.index("--") + 1 :] if "--" in args else args))
