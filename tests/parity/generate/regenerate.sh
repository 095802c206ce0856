#!/usr/bin/env bash
# Regenerate every parity case file from the pinned upstream trees (see tests/parity/README.md).
# usage: bash tests/parity/generate/regenerate.sh UPSTREAM_DIR
#   UPSTREAM_DIR holds irllm/, sgibench/ and prescience/ (the pinned commits), sgibench-5d562f6/ (SGI-Bench at
#   5d562f6, for the deep-research llm_judge), sgibench-3854aa9/ (SGI-Bench at 3854aa9, for the soft wet scores)
#   and two virtualenvs:
#   venv312/ (Python 3.12: IDRBench, SGI-Bench) and venv311/ (Python 3.11: PreScience); override with
#   PY312=... PY311=...
set -euo pipefail
up="$(cd "${1:?usage: regenerate.sh UPSTREAM_DIR}" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
py312="${PY312:-$up/venv312/bin/python}"
py311="${PY311:-$up/venv311/bin/python}"
cd "$here"
"$py312" gen_idrbench.py "$up/irllm"
"$py312" gen_sgi.py "$up/sgibench"
# the answer-level llm_judge came after the pinned commit: a checkout at 5d562f6 beside the pinned one
"$py312" gen_sgi_llm_judge.py "$up/sgibench" "$up/sgibench-5d562f6"
# the soft wet-experiment scores came after the pinned commit too: a checkout at 3854aa9
"$py312" gen_sgi_wet_soft.py "$up/sgibench" "$up/sgibench-3854aa9"
"$py311" gen_prescience.py "$up/prescience"
# the rollout metrics (multiturn/analysis): faiss is replaced by an exact stand-in, see the script
"$py311" gen_prescience_rollout.py "$up/prescience"
