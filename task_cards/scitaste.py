"""
name: SciTaste-Bench
dataset: a folder built by `sciprobe build scitaste` (or its hub copy); set SCIPROBE_SCITASTE_DATA
abstract: pure_qa mode (spec shared/spec/scitaste.md §2, §4, §8): from discipline, title, abstract and
  identifier, the model returns strict JSON with the Academic Taste Index composite (0-100), the seven dimension
  scores, reasoning and confidence. A lenient parser reads fenced blocks and alternative key names; failures
  are dropped and reported (`paper` mode) or scored as 0 (`strict` mode, suffix `_strict`). Scored by Scheme 2
  (WAPE -> 0-100 score, reconstructed knots; headline `scheme2_score`) and Scheme 1 (`scheme1_final`,
  reconstructed sub-score mapping). The tool modes (native_search, dimagent_v3, dimagent_v3_native) need an
  agent loop and are not lighteval tasks.
languages: english
tags: science-of-science, research-taste, regression, bibliometrics

Usage (offline, bundled synthetic sample):
  sciprobe build scitaste --out build/scitaste-sample
  export SCIPROBE_SCITASTE_DATA=build/scitaste-sample
  lighteval accelerate "model_name=$(sciprobe model-path)" "scitaste:pure_qa|0" --custom-tasks task_cards/scitaste.py
"""

import os

from sciprobe.benchmarks import get_benchmark
from sciprobe.lighteval_adapter import tasks_table
from sciprobe.paths import default_data_dir

# The task's dataset: an explicit folder/hub id, else the bundled sample's build folder (a path only:
# nothing is built or downloaded when this module is imported).
DATA = os.environ.get("SCIPROBE_SCITASTE_DATA") or str(default_data_dir("scitaste"))

TASKS_TABLE = tasks_table(get_benchmark("scitaste"), DATA)
