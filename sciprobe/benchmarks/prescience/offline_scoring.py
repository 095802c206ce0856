"""Offline scoring of PreScience tasks from prediction files, and the non-LLM baselines end to end
(spec ``prescience.md`` §2, §9 "Ranking, regression and topic tasks are evaluated from prediction files").

Prediction files are JSONL, one ``{"id": <corpus_id or unit>, "prediction": ...}`` per line: a ranked id list
(T2, T3, T5), a number (T4: 12-month citations; T6/T7: forecast-period count) or ``{"title", "abstract"}``
(T1; ROUGE-L here; LACER needs a judge: ``sciprobe prescience score contribution_generation --judge SPEC`` or the
evaluate runner). A duplicate id is an error; an instance without a prediction is a recorded failure; a prediction
for an id that is not an instance is an error. Instances and candidate pools come from the release folder
(``train.parquet``/``test.parquet``) under the history rule.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sciprobe.benchmarks.prescience.baselines as bl
import sciprobe.benchmarks.prescience.instances as inst
from sciprobe.benchmarks.prescience.history import CorpusIndex
from sciprobe.benchmarks.prescience.scoring.ranking_tasks import score_rankings
from sciprobe.benchmarks.prescience.schema import (
    PAIR_FORECAST_END,
    RANKING_K,
    TEST_WINDOW,
)
from sciprobe.benchmarks.prescience.source import contribution_rows, load_index
from sciprobe.core.errors import SciprobeError
from sciprobe.benchmarks.prescience.scoring.forecast import citation_forecast
from sciprobe.scoring.score_report import ScoreReport
from sciprobe.scoring.text_similarity import rouge_l
from sciprobe.benchmarks.prescience.scoring.topic_trend import topic_trend

RANKING_TASKS = {"collaborator_prediction": "calculate_ndcg", "prior_work_selection": "calculate_ndcg",
                 "future_combination": "ndcg_at_k"}
SCORED_TASKS = ("contribution_generation", *RANKING_TASKS, "citation_prediction", "topic_trends",
                "topic_pair_trends")


def read_predictions(path: Path | str) -> dict[str, Any]:
    """``{"id", "prediction"}`` JSONL -> {id: prediction}; duplicate ids are an error."""
    out: dict[str, Any] = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                key, value = str(record["id"]), record["prediction"]
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise SciprobeError(f"{Path(path).name} line {number}: "
                                    f"not an {{id, prediction}} record ({exc})") from None
            if key in out:
                raise SciprobeError(f"{Path(path).name} line {number}: duplicate prediction for id {key!r}")
            out[key] = value
    return out


def _align(instances: list[dict], key: str, predictions: Mapping[str, Any]) -> list[Any]:
    ids = [str(r[key]) for r in instances]
    unknown = set(predictions) - set(ids)
    if unknown:
        raise SciprobeError(f"{len(unknown)} prediction id(s) are not instances of this task, "
                            f"e.g. {sorted(unknown)[0]!r}")
    return [predictions.get(i) for i in ids]


class TaskData:
    """Instances of one task (test split) with the corpus index they were derived from."""

    def __init__(self, source: Path | str, task: str, pair_forecast_end: str = PAIR_FORECAST_END) -> None:
        self.source, self.task = Path(source), task
        if task not in SCORED_TASKS:
            raise SciprobeError(f"task {task!r} is not scored from prediction files ({', '.join(SCORED_TASKS)})")
        self.index: CorpusIndex = load_index(self.source, "test", ("citation_trajectory", "topics"),
                                             lean=task != "citation_prediction")
        self.key = "topic" if task.startswith("topic") else "corpus_id"
        self.forecast_end = pair_forecast_end if task == "topic_pair_trends" else TEST_WINDOW[1]
        if task == "contribution_generation":
            # ROUGE-L here (LACER: sciprobe.benchmarks.prescience.lacer_judge with a judge); inputs: the references'
            # texts
            self.instances = list(contribution_rows(self.source, "test", {}))
        elif task == "collaborator_prediction":
            self.instances = inst.collaborator_instances(self.index, "test")
        elif task == "prior_work_selection":
            self.instances = inst.prior_work_instances(self.index, "test")
        elif task == "future_combination":
            self.instances = inst.future_combination_instances(self.index, "test")
        elif task == "citation_prediction":
            self.instances = inst.citation_instances(self.index, "test")
        else:
            self.train_index = load_index(self.source, "train", ("topics",))
            history = inst.topic_label_sets(self.train_index, "train")
            forecast = inst.topic_label_sets(self.index, "test", self.forecast_end)
            self.instances = (inst.topic_trend_instances(history, forecast) if task == "topic_trends" else
                              inst.topic_pair_instances(history, forecast, self.forecast_end))
        if not self.instances:
            raise SciprobeError(f"no {task} instances in {self.source}")

    def score(self, predictions: Mapping[str, Any], *, mode: str = "official", unknown: str = "drop") -> ScoreReport:
        preds = _align(self.instances, self.key, predictions)
        if self.task == "contribution_generation":
            return rouge_l([_generation_text(p) for p in preds], [_generation_text(r) for r in self.instances])
        if self.task in RANKING_TASKS:
            golds = [r["gold_author_ids"] if self.task == "collaborator_prediction" else r["gold_corpus_ids"]
                     for r in self.instances]
            pools = [self._author_pool(r["date"]) if self.task == "collaborator_prediction"
                     else self.index.view(r["date"]) for r in self.instances]
            return score_rankings(preds, golds, variant=RANKING_TASKS[self.task], k=RANKING_K, pools=pools,
                                  unknown=unknown, mode="strict" if mode == "strict" else "official")
        if self.task == "citation_prediction":
            return citation_forecast(preds, [r["label_12m"] for r in self.instances])
        return topic_trend(preds, [r["forecast_count"] for r in self.instances],
                           [r["history_count"] for r in self.instances], mode=mode,
                           history_papers=len(inst.topic_label_sets(self.train_index, "train"))
                           if mode == "paper" else None,
                           forecast_papers=len(inst.topic_label_sets(self.index, "test", self.forecast_end))
                           if mode == "paper" else None)

    def _author_pool(self, date: str):
        """Candidates of T2: authors with >= 1 publication before t_p."""
        from sciprobe.benchmarks.prescience.scoring.ranking_tasks import Pool

        view = self.index.view(date)

        def contains(author_id: str) -> bool:
            return bool(view.author_history_rows(author_id).size)

        return Pool(contains, view.candidate_authors)

    # ---------------------------------------------------------- baselines
    def baseline_predictions(self, name: str | None = None) -> dict[str, Any]:
        """Predictions of the task's default non-LLM baseline (or ``name``), keyed like a prediction file."""
        t = self.task
        if t == "contribution_generation":
            # the paper's "random influential reference" baseline: one of R_p, drawn with a seeded generator
            picks = {r["corpus_id"]: random.Random(f"{r['corpus_id']}:random_reference").choice(r["references"])
                     for r in self.instances}
            return {cid: {"title": ref["title"], "abstract": ref["abstract"]} for cid, ref in picks.items()}
        if t == "collaborator_prediction":
            return {r["corpus_id"]: bl.collaborator_frequency(self.index, r["seed_author_id"], r["date"])
                    for r in self.instances}
        if t == "prior_work_selection":
            return {r["corpus_id"]: bl.prior_work_frequency(self.index, r["author_ids"], r["date"])
                    for r in self.instances}
        if t == "future_combination":
            out = {}
            for r in self.instances:
                view = self.index.view(r["date"])
                popularity = bl.citation_frequency_scores(self.index, view)
                out[r["corpus_id"]] = bl.cocitation_frequency(self.index, r["corpus_id"], r["date"],
                                                              popularity=popularity)
            return out
        if t == "citation_prediction":
            train_index = load_index(self.source, "train", ("citation_trajectory",), lean=False)
            train = inst.citation_instances(train_index, "train")
            labels = [r["label_12m"] for r in train]
            if (name or "linear") == "mean":
                return dict(zip((r["corpus_id"] for r in self.instances),
                                bl.citation_mean(labels, len(self.instances))))
            train_rows = [train_index.row(train_index.row_of(r["corpus_id"])) for r in train]
            model = bl.CitationLinear().fit(train_rows, labels)
            rows = [self.index.row(self.index.row_of(r["corpus_id"])) for r in self.instances]
            return dict(zip((r["corpus_id"] for r in self.instances), model.predict(rows)))
        units = [r["topic"] for r in self.instances]
        monthly = inst.monthly_topic_counts(self.train_index, "train")
        if t == "topic_pair_trends":
            monthly = bl.pair_monthly(_label_months(self.train_index))
            months = max(1, round((_days(TEST_WINDOW[0], self.forecast_end)) / 30.4))
        else:
            months = 12
        fn = bl.trend_mean if name == "mean" else bl.trend_linear
        return dict(zip(units, fn(monthly, units, months)))


def _generation_text(x: Any) -> str | None:
    """``title + " " + abstract`` of a generation or gold record (spec T1); None/empty -> None (scored 0)."""
    if x is None:
        return None
    if not isinstance(x, Mapping):
        raise SciprobeError(f"a contribution prediction must be {{'title', 'abstract'}}, got {type(x).__name__}")
    text = f"{x.get('title') or ''} {x.get('abstract') or ''}".strip()
    return text or None


def _days(a: str, b: str) -> int:
    import datetime as dt

    return (dt.date.fromisoformat(b) - dt.date.fromisoformat(a)).days


def _label_months(index: CorpusIndex) -> list[tuple[int, list[str]]]:
    import datetime as dt

    import pyarrow as pa

    rows = inst.target_rows(index, "train")
    start = dt.date.fromisoformat(inst.WINDOWS["train"][0])
    dates = index.table["date"].take(pa.array(rows, type=pa.int64())).to_pylist()
    topics = index.table["topics"].take(pa.array(rows, type=pa.int64())).to_pylist()
    return [(min((dt.date.fromisoformat(d) - start).days // 30, 11), t) for d, t in zip(dates, topics) if t]


def run_baselines(source: Path | str, tasks: tuple[str, ...] = SCORED_TASKS) -> dict[str, ScoreReport]:
    """Score the default non-LLM baseline of every non-generation task (offline, no API key)."""
    out = {}
    for task in tasks:
        data = TaskData(source, task)
        out[task] = data.score(data.baseline_predictions())
    return out


def score_prediction_file(source: Path | str, task: str, predictions: Path | str, *, mode: str = "official",
                          unknown: str = "drop") -> ScoreReport:
    """Entry point for the CLI: score a JSONL prediction file for one task against the release in ``source``."""
    return TaskData(source, task).score(read_predictions(predictions), mode=mode, unknown=unknown)
