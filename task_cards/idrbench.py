"""
name: IDRBench
dataset: a folder built by `sciprobe build idrbench` (or its hub copy); set SCIPROBE_IDRBENCH_DATA
abstract: IDR paper identification (IPI) and IDR idea integration (I3 Set 1 / Set 2), 0-shot and with the
  paper's fixed few-shot examples; scored by Macro-F1 in official mode (unparsable answers dropped, as
  upstream) and strict mode (unparsable answers count as wrong). I2R (a multi-call Swiss tournament) runs
  with `sciprobe evaluate idrbench:i2r`.
languages: english
tags: science-of-science, interdisciplinary-research, classification
paper: https://arxiv.org/abs/2507.15736

Usage (offline, bundled model):
  sciprobe demo                                  # builds the bundled sample dataset once
  export SCIPROBE_IDRBENCH_DATA=$(python -c "from sciprobe.paths import default_data_dir; print(default_data_dir('idrbench'))")
  lighteval accelerate "model_name=$(sciprobe model-path)" "idrbench:ipi|0" --custom-tasks task_cards/idrbench.py
"""

import os

from sciprobe.benchmarks import get_benchmark
from sciprobe.lighteval_adapter import tasks_table
from sciprobe.paths import default_data_dir

# The task's dataset: an explicit folder/hub id, else the bundled sample's build folder (a path only:
# nothing is built or downloaded when this module is imported).
DATA = os.environ.get("SCIPROBE_IDRBENCH_DATA") or str(default_data_dir("idrbench"))

TASKS_TABLE = tasks_table(get_benchmark("idrbench"), DATA)
