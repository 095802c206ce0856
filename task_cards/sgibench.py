"""
name: SGI-Bench
dataset: a folder built by `sciprobe build sgibench --source <hub snapshots>` (or its hub copy); set
  SCIPROBE_SGIBENCH_DATA
abstract: Scientific deep research (Exact Match), wet-experiment protocol design ((SS + PA) / 2) and multimodal
  experimental reasoning (multiple-choice accuracy; images in Doc.images, needs a vision-language model), each
  scored in official mode (SGI-Bench@8268d43, quirks included) and paper mode (`*_paper` metrics), with the
  failure rate. Idea generation (judge panel) and dry experiments (sandboxed execution) need sciprobe's runners,
  and so do the judged metrics (deep research step-level accuracy, reasoning validity: `sciprobe evaluate ...
  --judge SPEC`, see metrics/sgi_score/README.md); this card scores the deterministic headlines only.
languages: english
tags: science-of-science, scientific-discovery, multimodal, protocol-design
paper: https://arxiv.org/abs/2512.16969

Usage:
  sciprobe build sgibench --source src --out build/sgibench
  export SCIPROBE_SGIBENCH_DATA=build/sgibench
  lighteval endpoint litellm "model_name=openai/gpt-4.1,system_prompt=You are a helpful assistant." \
      "sgibench:wet_experiment|0" --custom-tasks task_cards/sgibench.py
"""

import os

from sciprobe.benchmarks.sgibench.lighteval_metrics import tasks_table
from sciprobe.paths import sciprobe_home

# The task's dataset: an explicit folder/hub id, else $SCIPROBE_HOME/datasets/sgibench (a path only: nothing
# is built or downloaded when this module is imported; SGI-Bench has no bundled sample).
DATA = os.environ.get("SCIPROBE_SGIBENCH_DATA") or str(sciprobe_home() / "datasets" / "sgibench")

TASKS_TABLE = tasks_table(DATA)
