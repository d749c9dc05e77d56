#!/usr/bin/env bash
# LeRobot's own loader opens what the Python client pulls (tests/test_lerobot_loader.py), and trains
# straight from the service's Hub protocol (tests/test_lerobot_hub.py, LeRobot 0.4 only): LeRobot
# 0.4 reads LeRobot v3.0 datasets only and 0.3 reads v2.1, so each gets an interpreter of its own
# (CPU; torch comes with them from PyPI, about 6 GB each, made once and reused), named to the tests
# by DAS_LEROBOT_PYTHON (v3.0) and DAS_LEROBOT_V21_PYTHON (v2.1). Runs the loader tests only, against
# the service ci.sh's tests start (so after `npx next build`, as .ci/run does).
# DAS_LEROBOT_ENVS: where the interpreters live (default clients/python/.venv-lerobot).
set -euo pipefail
cd "$(dirname "$0")"
envs="${DAS_LEROBOT_ENVS:-$PWD/.venv-lerobot}"
mkdir -p "$envs"

# An interpreter with this LeRobot, made unless one that imports it is there already. One that
# cannot be made (the package registry out of reach) exits 3, so that a caller can tell it from a
# loader that fails.
interpreter() {
  local dir="$envs/$1" spec="$2"
  if ! "$dir/bin/python" -c "import lerobot" >/dev/null 2>&1; then
    rm -rf "$dir"
    if ! { python3 -m venv "$dir" && "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$spec" >&2; }; then
      echo "lerobot-check: could not make an interpreter with $spec" >&2
      exit 3
    fi
  fi
  echo "$dir/bin/python"
}

DAS_LEROBOT_PYTHON="$(interpreter lerobot-0.4 'lerobot==0.4.4')" || exit 3
DAS_LEROBOT_V21_PYTHON="$(interpreter lerobot-0.3 'lerobot==0.3.3')" || exit 3
export DAS_LEROBOT_PYTHON DAS_LEROBOT_V21_PYTHON
# The loader must read what was pulled, never fetch from the Hugging Face hub (the Hub tests set
# their own HF_* for the service's /hub, and nothing else).
export HF_HUB_OFFLINE=1
exec bash ci.sh -m lerobot "$@"
