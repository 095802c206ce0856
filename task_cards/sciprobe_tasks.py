"""
name: sciprobe (every registered benchmark: IDRBench, PreScience, SciTaste-Bench, SGI-Bench, and any benchmark
  added under sciprobe/benchmarks/)
dataset: per benchmark, the folder or hub id in SCIPROBE_<BENCH>_DATA (e.g. SCIPROBE_IDRBENCH_DATA), else the
  bundled sample's build folder (`sciprobe lighteval ...` builds it on first use)
abstract: the lighteval tasks of each benchmark, built from its declaration (sciprobe.lighteval_adapter): every
  single-call task with the benchmark's own prompts, parsers and official/corrected scorers, each mode a metric
  (`<metric>` for the first mode, `<metric>_<mode>` for the others). Multi-call tasks (I2R's Swiss tournament,
  SciTaste's tool agent, SGI-Bench's sandboxed dry experiments and judge panels) need sciprobe's runners:
  `sciprobe evaluate BENCH:TASK`. `sciprobe tasks` lists them all.
languages: english
tags: science-of-science

Usage (offline, bundled model and samples):
  sciprobe lighteval accelerate "model_name=$(sciprobe model-path)" "idrbench:ipi|0" \
      --custom-tasks task_cards/sciprobe_tasks.py --max-samples 8
  SCIPROBE_IDRBENCH_DATA=build/idrbench lighteval endpoint litellm "model_name=openai/gpt-4o-mini" \
      "idrbench:i3_set1|0" --custom-tasks task_cards/sciprobe_tasks.py
"""

from sciprobe.lighteval_adapter import registry_tasks_table

TASKS_TABLE = registry_tasks_table()
