"""
name: sciprobe (every registered benchmark: IDRBench, PreScience, SciTaste-Bench, SGI-Bench, and any benchmark
  added under sciprobe/benchmarks/)
dataset: per benchmark, the folder or hub id in SCIPROBE_<BENCH>_DATA (e.g. SCIPROBE_IDRBENCH_DATA), else the
  bundled sample's build folder (`sciprobe lighteval ...` builds it on first use)
abstract: the lighteval tasks of each benchmark, built from its declaration (sciprobe.interop.lighteval_tasks or the
  benchmark's own table builder): every single-call and judge-scored task, with the benchmark's own prompts,
  parsers and official/corrected scorers, each mode a metric (`<metric>` for the first mode, `<metric>_<mode>`
  for the others).
languages: english
tags: science-of-science

Tasks (`sciprobe tasks` lists them all with their kind):
  idrbench: ipi, ipi_5shot, i3_set1, i3_set1_3shot, i3_set2, i3_set2_3shot
  prescience: contribution_generation (ROUGE-L, BERTScore; LACER with SCIPROBE_LACER_JUDGE), collaborator_prediction,
    prior_work_selection, citation_prediction (alias impact_prediction), future_combination, topic_trends,
    topic_pair_trends (prompts built from the leak-free history H^<t of the dataset's own corpus)
  scitaste: pure_qa
  sgibench: deep_research, wet_experiment (strict and soft scores), experimental_reasoning (images in Doc.images),
    idea_generation (objective terms; the judge panel's votes and `final` with SCIPROBE_SGI_IDEA_JUDGES)

sciprobe-only (multi-step: lighteval asks a model once per item and scores the answer, these need more):
  idrbench:i2r -- a Swiss tournament of pairwise model calls over each candidate list (the ranking is the outcome
    of many calls, not of one answer);
  scitaste:dimagent_v3 -- a tool agent: the model calls bibliometric tools over several turns;
  scitaste:native_search, scitaste:dimagent_v3_native -- the provider's own web search inside the call (not a
    lighteval backend feature);
  sgibench:dry_experiment -- the answer is code, executed on five unit tests in a sandbox.
  Run them with `sciprobe evaluate BENCH:TASK`.

Usage (offline, bundled model and samples; `sciprobe lighteval` adds batch_size=1 for the accelerate backend
when the model arguments do not set one, so the bundled model finishes on a CPU):
  sciprobe lighteval accelerate "model_name=$(sciprobe model-path)" "idrbench:ipi|0" \
      --custom-tasks task_cards/sciprobe_tasks.py --max-samples 8
  SCIPROBE_IDRBENCH_DATA=build/idrbench lighteval endpoint litellm "model_name=openai/gpt-4o-mini" \
      "idrbench:i3_set1|0" --custom-tasks task_cards/sciprobe_tasks.py
"""

from sciprobe.interop.lighteval_tasks import registry_tasks_table

TASKS_TABLE = registry_tasks_table()
