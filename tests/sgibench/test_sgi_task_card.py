"""The SGI-Bench lighteval 0.13 task card (spec sgibench.md §9; ecosystem.md §4): task configs, prompt
functions (images in Doc.images), picklable metrics scored by sciprobe.benchmarks.sgibench.scoring, and an end-to-end
run with
a canned model."""

from __future__ import annotations

import pickle
from pathlib import Path
from types import ModuleType

import datasets
import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.benchmarks.sgibench.synthetic import write_synthetic_source
from sciprobe.data.build import build_benchmark

from task_card_support import CARD, load_card



@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = write_synthetic_source(tmp_path_factory.mktemp("sgi-card-src") / "src", n=3)
    out = tmp_path_factory.mktemp("sgi-card") / "sgibench"
    build_benchmark(get_benchmark("sgibench"), src, out,
                    configs=["deep_research", "wet_experiment", "experimental_reasoning"])
    return out


@pytest.fixture(scope="module")
def card(built: Path) -> ModuleType:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCIPROBE_SGIBENCH_DATA", str(built))
        return load_card("sgibench")


def _response(text: str):
    from lighteval.models.model_output import ModelResponse

    return ModelResponse(text=[text])


def test_tasks_table(card: ModuleType, built: Path) -> None:
    names = [t.name for t in card.TASKS_TABLE]
    assert names == ["sgibench:deep_research", "sgibench:wet_experiment", "sgibench:experimental_reasoning",
                     "sgibench:idea_generation"]
    for cfg in card.TASKS_TABLE:
        assert cfg.hf_repo == str(built) and list(cfg.evaluation_splits) == ["test"]
        metric_names = [m.metric_name for m in cfg.metrics]
        assert "failure_rate" in metric_names and any(n.endswith("_paper") for n in metric_names)
        pickle.loads(pickle.dumps(cfg.metrics))  # lighteval ships metrics to worker processes


def test_reasoning_prompt_puts_images_in_doc(card: ModuleType, built: Path) -> None:
    row = datasets.load_dataset(str(built), "experimental_reasoning", split="test")[1]
    cfg = next(t for t in card.TASKS_TABLE if t.name.endswith("experimental_reasoning"))
    doc = cfg.prompt_function(row, cfg.name)
    assert len(doc.images) == 3 and doc.images[0].size == (32, 32)
    assert "Options:\nA. Option A" in doc.query and "\\boxed{}" in doc.query
    assert doc.specific["gold"] == 1 and doc.specific["answer_letter"] == "B"
    no_images = cfg.prompt_function({**row, "images": [None]}, cfg.name)
    assert no_images.images is None and no_images.specific["n_images"] == 0


def test_metrics_score_through_sciprobe(card: ModuleType, built: Path) -> None:
    cfg = next(t for t in card.TASKS_TABLE if t.name.endswith("wet_experiment"))
    rows = datasets.load_dataset(str(built), "wet_experiment", split="test")
    docs = [cfg.prompt_function(r, cfg.name) for r in rows]
    answers = [f"<answer>\n{rows[0]['answer']}\n</answer>", "no protocol", ""]
    by_name = {m.metric_name: m for m in cfg.metrics}
    items = [by_name["final"].sample_level_fn.compute(doc=d, model_response=_response(a))
             for d, a in zip(docs, answers)]
    assert by_name["final"].corpus_level_fn.compute_corpus(items) == pytest.approx(100 / 3)
    assert by_name["failure_rate"].corpus_level_fn.compute_corpus(items) == 0.0


def test_wet_card_reports_the_soft_scores(card: ModuleType, built: Path) -> None:
    """soft_ss / soft_pa / soft_final (SGI-Bench@3854aa9) in both modes, scored by the declaration's scorer: an
    answer lacking its last step loses all strict SS but keeps most of the soft scores."""
    from sciprobe.benchmarks.sgibench.scoring.wet_experiment import wet_experiment_scores

    cfg = next(t for t in card.TASKS_TABLE if t.name.endswith("wet_experiment"))
    by_name = {m.metric_name: m for m in cfg.metrics}
    soft = [f"{key}{suffix}" for suffix in ("", "_paper") for key in ("soft_final", "soft_ss", "soft_pa")]
    assert set(soft) <= set(by_name) and all(by_name[n].higher_is_better for n in soft)
    row = datasets.load_dataset(str(built), "wet_experiment", split="test")[0]
    steps = row["answer"].rstrip().splitlines()
    closers = [i for i, line in enumerate(steps) if line.strip() == ")"]
    short = "<answer>\n" + "\n".join(steps[: closers[-2] + 1]) + "\n</answer>"
    doc = cfg.prompt_function(row, cfg.name)
    items = [by_name["soft_ss"].sample_level_fn.compute(doc=doc, model_response=_response(short))]
    expected = wet_experiment_scores([short], [row["answer"]])
    for name in soft:
        key, mode = (name[: -len("_paper")], "paper") if name.endswith("_paper") else (name, "official")
        want = expected.values[key] if mode == "official" else \
            wet_experiment_scores([short], [row["answer"]], mode="paper").values[key]
        assert by_name[name].corpus_level_fn.compute_corpus(items) == pytest.approx(want)
    assert by_name["ss"].corpus_level_fn.compute_corpus(items) == 0.0
    assert by_name["soft_ss"].corpus_level_fn.compute_corpus(items) > 50.0


def test_end_to_end_with_canned_model(card: ModuleType, built: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """lighteval Pipeline over the local folder with a model that always answers the same text."""
    monkeypatch.setenv("SCIPROBE_SGIBENCH_DATA", str(built))  # the pipeline imports the card again
    from lighteval.logging.evaluation_tracker import EvaluationTracker
    from lighteval.models.abstract_model import LightevalModel
    from lighteval.models.model_output import ModelResponse
    from lighteval.pipeline import ParallelismManager, Pipeline, PipelineParameters
    from lighteval.tasks.registry import Registry
    from lighteval.utils.cache_management import SampleCache

    class Canned(LightevalModel):
        def __init__(self):
            from lighteval.models.dummy.dummy_model import DummyModelConfig

            self.config = DummyModelConfig(model_name="canned")
            self._cache = SampleCache(self.config)

        @property
        def tokenizer(self):
            return None

        @property
        def add_special_tokens(self):
            return False

        @property
        def max_length(self):
            return 4096

        def greedy_until(self, docs):
            return [ModelResponse(text=["Reasoning... \\boxed{B} <answer>19</answer>"]) for _ in docs]

        def loglikelihood(self, docs):
            raise NotImplementedError

        def loglikelihood_rolling(self, docs):
            raise NotImplementedError

    original = Registry.load_all_task_configs
    Registry.load_all_task_configs = staticmethod(
        lambda custom_tasks=None, load_multilingual=False:
            Registry._extract_configs(Registry.create_custom_tasks_module(custom_tasks)))
    try:
        pipeline = Pipeline(
            tasks="sgibench:deep_research|0,sgibench:experimental_reasoning|0",
            pipeline_parameters=PipelineParameters(launcher_type=ParallelismManager.NONE,
                                                   custom_tasks_directory=str(CARD)),
            evaluation_tracker=EvaluationTracker(output_dir=str(tmp_path)), model=Canned())
        pipeline.evaluate()
        results = pipeline.get_results()["results"]
    finally:
        Registry.load_all_task_configs = original
    dr = next(v for k, v in results.items() if "deep_research" in k)
    er = next(v for k, v in results.items() if "experimental_reasoning" in k)
    # synthetic DR answers: (10+i)*(i+2) = 20, 33, 48 -> '19' never matches; ER gold letters A, B, C -> one B
    assert dr["exact_match"] == 0.0 and dr["failure_rate"] == 0.0
    assert er["mca"] == pytest.approx(100 / 3) and er["mca_paper"] == pytest.approx(100 / 3)
