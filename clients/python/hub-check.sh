#!/usr/bin/env bash
# The Hugging Face Hub's own clients against the service's Hub protocol (tests/test_hub.py):
# huggingface_hub from the line LeRobot 0.4 pins (>=0.35,<0.36) and the newest release with
# `datasets`, each in an interpreter of its own from PyPI (made once under clients/python/.venv-hub
# and reused; about 40 s and 350 MB for both), named to the tests by DAS_HUB_PYTHON and
# DAS_HUB_LATEST_PYTHON. Runs the hub tests only, against the service ci.sh's tests start (so
# after `npx next build`, as .ci/run does). An interpreter that cannot be made (the registry out
# of reach) exits 3, so that a caller can tell it from a client that fails.
set -euo pipefail
cd "$(dirname "$0")"
envs="${DAS_HUB_ENVS:-$PWD/.venv-hub}"
mkdir -p "$envs"

interpreter() {
  local dir="$envs/$1" check="$2"
  shift 2
  if ! "$dir/bin/python" -c "$check" >/dev/null 2>&1; then
    rm -rf "$dir"
    if ! { python3 -m venv "$dir" && "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2; }; then
      echo "hub-check: could not make an interpreter with $*" >&2
      exit 3
    fi
  fi
  echo "$dir/bin/python"
}

DAS_HUB_PYTHON="$(interpreter hub-0.35 'import huggingface_hub as h; assert h.__version__.startswith("0.35.")' 'huggingface_hub>=0.35,<0.36')" || exit 3
DAS_HUB_LATEST_PYTHON="$(interpreter hub-latest 'import huggingface_hub, datasets' huggingface_hub datasets)" || exit 3
export DAS_HUB_PYTHON DAS_HUB_LATEST_PYTHON
# Plain HTTP only: the service sends no Xet headers, and the clients are told not to look for them.
export HF_HUB_DISABLE_XET=1
exec bash ci.sh -m hub "$@"
