#!/usr/bin/env bash
# The Python client's tests: installs the package and its test dependencies into
# clients/python/.venv, then runs pytest against a real service that the tests start
# (scripts/python-client-server.ts: embedded PostgreSQL, local S3 store, `next start` on the
# current production build, so run it after `npx next build`, as .ci/run does after npm test).
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -e '.[test]'
exec .venv/bin/python -m pytest -q tests "$@"
