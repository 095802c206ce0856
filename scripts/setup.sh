#!/usr/bin/env bash
# One command for a fresh machine: create .venv, install everything, run the demo on embedded defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1
.venv/bin/sciprobe demo "$@"
