#!/usr/bin/env bash
# Run the whole test suite (creates .venv first when it is missing or stale).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1
# one worker per core, then the few serial tests alone (scripts/pytest-phased.sh); SCIPROBE_TEST_WORKERS=0: one process
bash scripts/pytest-phased.sh "$@"
