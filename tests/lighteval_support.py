"""A lighteval run of sciprobe's card written by lighteval's own code, without a model server.

lighteval's pipeline, minus the model call: the card's ``LightevalTaskConfig`` becomes a ``LightevalTask`` that
loads its docs from the dataset, a scripted answer per doc becomes a ``ModelResponse``, lighteval's
``apply_metric`` runs the card's metrics, and lighteval's ``EvaluationTracker`` aggregates them and writes its
results JSON and details Parquet (what ``lighteval ... --save-details`` writes). The slow test
``test_lighteval_cli_run_goes_on_the_leaderboard`` checks the same path through lighteval's real CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from task_card_support import load_card


def write_lighteval_run(out: Path, task: str, answer: Callable[[str, int], str | None], *, data: str,
                        model_name: str = "org/lighteval-model", max_samples: int | None = None) -> Path:
    """Write ``out/results/<model>/results_<date>.json`` and its details for ``task`` (``bench:task``) on
    ``data`` (a built dataset folder); ``answer(item_id, index)`` is the model's text (None: no text). Returns the
    results file."""
    import os

    from lighteval.logging.evaluation_tracker import EvaluationTracker
    from lighteval.metrics import apply_metric
    from lighteval.models.abstract_model import ModelConfig
    from lighteval.models.model_output import ModelResponse
    from lighteval.tasks.lighteval_task import LightevalTask

    bench = task.split(":", 1)[0]
    os.environ[f"SCIPROBE_{bench.upper()}_DATA"] = data
    try:
        card = load_card(bench)
    finally:
        os.environ.pop(f"SCIPROBE_{bench.upper()}_DATA", None)
    config = next(t for t in card.TASKS_TABLE if t.name == task)
    lighteval_task = LightevalTask(config)
    docs = lighteval_task.get_docs(max_samples)
    key = f"{task}|0"
    for doc in docs:
        doc.task_name = key
    responses = []
    for index, doc in enumerate(docs):
        text = answer(doc.specific["id"], index)
        responses.append(ModelResponse(input=doc.query, text=[] if text is None else [text]))
    tracker = EvaluationTracker(output_dir=str(out), save_details=True)
    tracker.general_config_logger.log_model_info(model_config=ModelConfig(model_name=model_name))
    tracker.general_config_logger.log_args_info(num_fewshot_seeds=1, max_samples=max_samples, job_id="0")
    tracker.task_config_logger.log({key: lighteval_task})
    outputs = apply_metric(docs=docs, responses=responses, metrics=list(lighteval_task.metrics))
    for output, doc, response in zip(outputs, docs, responses):
        tracker.metrics_logger.log(key, output)
        tracker.details_logger.log(key, doc, response, output)
    tracker.general_config_logger.log_end_time()
    tracker.metrics_logger.aggregate(task_dict={key: lighteval_task}, bootstrap_iters=0)
    tracker.details_logger.aggregate()
    tracker.save()
    return next((Path(out) / "results").rglob("results_*.json"))
