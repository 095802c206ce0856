"""
name: PreScience
dataset: a folder built by `sciprobe build prescience` (default: the bundled synthetic sample) or its hub copy;
  set SCIPROBE_PRESCIENCE_DATA
abstract: T1 contribution generation (spec shared/spec/prescience.md §2 T1): from the titles and abstracts of a
  target paper's influential references, the model writes the follow-up paper's title and abstract
  (`Reasoning:` / `Title:` / `Abstract:`). Scored with ROUGE-L (rouge-score rule, title + " " + abstract) and
  BERTScore F1 (the bundled MiniLM, offline; not comparable with the paper's deberta-large-mnli numbers), plus
  the parse-failure rate; LACER (LLM judge, through sciprobe's client and cache) when SCIPROBE_LACER_JUDGE names
  a judge spec (several: `SPEC1;SPEC2`; template: SCIPROBE_LACER_TEMPLATE or the pinned official one). The same
  scores come from `sciprobe evaluate prescience:contribution_generation --judge SPEC`. The ranking, regression and topic tasks are scored from prediction files
  (`sciprobe prescience score`), outside lighteval.
languages: english
tags: science-of-science, scientific-forecasting, generation

Usage (offline, bundled synthetic sample):
  sciprobe build prescience --out build/prescience-sample
  export SCIPROBE_PRESCIENCE_DATA=build/prescience-sample
  sciprobe lighteval endpoint litellm "model_name=openai/gpt-4o-mini" "prescience:contribution_generation|0" \
      --custom-tasks task_cards/prescience.py
  SCIPROBE_LACER_JUDGE=openai/gpt-4o-mini sciprobe lighteval ...   # adds the LACER metric
"""

import os

from sciprobe.benchmarks.prescience.lighteval_task import tasks_table
from sciprobe.paths import default_data_dir

# The task's dataset: an explicit folder/hub id, else the bundled sample's build folder (a path only:
# nothing is built or downloaded when this module is imported).
DATA = os.environ.get("SCIPROBE_PRESCIENCE_DATA") or str(default_data_dir("prescience"))

TASKS_TABLE = tasks_table(DATA)
