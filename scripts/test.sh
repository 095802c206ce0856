#!/usr/bin/env bash
# Run the whole test suite (creates .venv first when it is missing or stale).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1
.venv/bin/python -m pytest "$@"
