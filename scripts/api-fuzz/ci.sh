#!/usr/bin/env bash
# The API fuzzed against its own OpenAPI document: installs schemathesis (pinned in
# requirements.txt) into scripts/api-fuzz/.venv, then runs run.py, which starts the Python client's
# service (scripts/python-client-server.ts: embedded PostgreSQL, local S3 store, `next start` on the
# current production build, so run it after `npx next build`, as .ci/run does after npm test) and
# `st run` with every check and every phase from a fixed seed. Options after `--` go to `st run`.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
exec .venv/bin/python run.py "$@"
