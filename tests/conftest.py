"""Shared fixtures. Every test runs offline with its own SCIPROBE_HOME (cache, built datasets) and HF_HOME,
except the converted bundled model, which is machine-wide so the ~40 s conversion happens once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# ../shared next to the repository; a git worktree elsewhere names it with SCIPROBE_SHARED_DIR
SHARED_IDRBENCH = Path(os.environ.get("SCIPROBE_SHARED_DIR") or REPO.parent / "shared") / "data" / "idrbench" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# One torch thread per process: scripts/test.sh runs one pytest worker per core (pytest-xdist), and torch's
# default of one thread per core, times two workers plus their subprocesses, makes OpenMP threads spin-wait for
# each other (a generation measured 10-20x slower). Set before anything imports torch; subprocesses inherit it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("SCIPROBE_TORCH_THREADS", "1")


def pytest_configure(config):
    """SIGTERM stops the suite like Ctrl-C, within seconds even when a test is blocked (tests/interrupt_support.py);
    the main process of a parallel run passes it on to its workers."""
    from interrupt_support import install

    controller = not hasattr(config, "workerinput") and bool(config.getoption("numprocesses", None))
    install(forward_to_children=controller, capture=config.pluginmanager.getplugin("capturemanager"))


def pytest_runtest_teardown(item):
    from interrupt_support import reassert

    reassert()


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects: the marker added here counts there
def pytest_collection_modifyitems(config, items):
    """For a parallel run (``pytest -n N --dist loadgroup``, scripts/test.sh): the loopback Ray cluster tests share
    one worker (one cluster per session, not one per worker), and the slow tests are handed out first, so the run
    does not end waiting on one long test that started last. The order is the same in every worker."""
    for item in items:
        if "ray_cluster" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("ray_cluster"):
            item.add_marker(pytest.mark.ray_cluster)  # whatever uses the cluster fixture is a cluster test
        if item.get_closest_marker("ray_cluster"):
            item.add_marker(pytest.mark.xdist_group("ray_cluster"))
    items.sort(key=lambda item: 0 if item.get_closest_marker("slow") or item.get_closest_marker("ray_cluster")
               else 1)
    _select_phase(config, items)


def pytest_ignore_collect(collection_path, config):
    """The serial phase collects only the test files that hold a serial test (the suite's collection is ~12 s)."""
    if os.environ.get("SCIPROBE_TEST_PHASE") != "serial" or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    try:
        return None if "mark.serial" in collection_path.read_text(errors="replace") else True
    except OSError:
        return None


def _select_phase(config, items) -> None:
    """scripts/pytest-phased.sh runs the suite twice: in parallel without the `serial` tests, then those alone."""
    phase = os.environ.get("SCIPROBE_TEST_PHASE")
    if phase not in ("parallel", "serial"):
        return
    keep = [item for item in items if bool(item.get_closest_marker("serial")) == (phase == "serial")]
    if len(keep) < len(items):
        kept = {id(item) for item in keep}
        config.hook.pytest_deselected(items=[item for item in items if id(item) not in kept])
        items[:] = keep


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    """A private SCIPROBE_HOME per test session (response cache, sample builds); models stay shared."""
    home = tmp_path_factory.getbasetemp() / "sciprobe-home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("SCIPROBE_HOME", str(home))
    monkeypatch.setenv("SCIPROBE_MODELS_DIR", os.environ.get("SCIPROBE_MODELS_DIR")
                       or str(Path.home() / ".cache" / "sciprobe" / "models"))
    return home


@pytest.fixture
def idrbench_release() -> Path:
    """The IDRBench v1 release files from ../shared (skips cleanly when they are not there)."""
    if not (SHARED_IDRBENCH / "data_exp_1.json").is_file():
        pytest.skip("IDRBench reference data not available in ../shared/data/idrbench/data")
    return SHARED_IDRBENCH


@pytest.fixture(scope="session")
def idrbench_release_built(tmp_path_factory) -> Path:
    """The full v1 release built once per session."""
    if not (SHARED_IDRBENCH / "data_exp_1.json").is_file():
        pytest.skip("IDRBench reference data not available in ../shared/data/idrbench/data")
    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.build import build_benchmark

    from idrbench_release_support import pinned_layout

    # the release as pinned (six single files), written from the reference files' older part layout
    folder = pinned_layout(SHARED_IDRBENCH.parent, tmp_path_factory.mktemp("idr-pinned") / "data")
    out = tmp_path_factory.mktemp("idr-release") / "idrbench"
    build_benchmark(get_benchmark("idrbench"), folder, out)
    return out


# ---- sciprobe.llm: the bundled local model (owner: sciprobe/llm/local.py) --------------------------------------


@pytest.fixture(scope="session")
def local_model_dir() -> Path:
    """The converted SmolLM2 directory in the machine-wide models dir (SCIPROBE_MODELS_DIR, default
    ~/.cache/sciprobe/models): the ~20-40 s GGUF conversion happens once per machine, not per session."""
    from sciprobe.llm.local import ensure_local_model

    models = os.environ.get("SCIPROBE_MODELS_DIR") or str(Path.home() / ".cache" / "sciprobe" / "models")
    with pytest.MonkeyPatch.context() as patch:  # the same directory isolated_home points every test at
        patch.setenv("SCIPROBE_MODELS_DIR", models)
        return ensure_local_model("smollm2")


@pytest.fixture(autouse=True)
def fresh_evaluate_modules():
    """evaluate imports each loaded metric as a package under ``evaluate_modules`` and keeps it in
    sys.modules; a later test with another HF_HOME then fails to import it. Forget them around each test."""
    import sys

    def forget():
        for name in [n for n in sys.modules if n == "evaluate_modules" or n.startswith("evaluate_modules.")]:
            del sys.modules[name]

    forget()
    yield
    forget()


# ---- evaluate metric modules (metrics/*): loading them offline under a private HF_HOME ------------------------


@pytest.fixture(scope="module")
def offline_evaluate(tmp_path_factory):
    """`evaluate` pointed at a temporary HF_HOME, offline (also if it was imported earlier in the session).

    The copied modules evaluate imports as ``evaluate_modules`` are dropped around every test by the autouse
    `fresh_evaluate_modules` fixture above."""
    import sys

    hf_home = tmp_path_factory.mktemp("hf_home")
    with pytest.MonkeyPatch.context() as mp:
        for var in ("HF_EVALUATE_OFFLINE", "HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
            mp.setenv(var, "1")
        mp.setenv("HF_HOME", str(hf_home))
        for var in ("HF_MODULES_CACHE", "HF_METRICS_CACHE", "HF_EVALUATE_CACHE"):
            mp.delenv(var, raising=False)
        mp.setattr(sys, "path", list(sys.path))  # evaluate appends its module cache to sys.path
        import evaluate
        import evaluate.config as cfg

        mp.setattr(cfg, "HF_CACHE_HOME", str(hf_home))
        mp.setattr(cfg, "HF_EVALUATE_CACHE", hf_home / "evaluate")
        mp.setattr(cfg, "HF_METRICS_CACHE", hf_home / "metrics")
        mp.setattr(cfg, "HF_MODULES_CACHE", hf_home / "modules")
        mp.setattr(cfg, "DOWNLOADED_EVALUATE_PATH", hf_home / "evaluate" / "downloads")
        mp.setattr(cfg, "EXTRACTED_EVALUATE_PATH", hf_home / "evaluate" / "downloads" / "extracted")
        mp.setattr(cfg, "HF_EVALUATE_OFFLINE", True)
        import huggingface_hub.constants as hub_constants

        mp.setattr(hub_constants, "HF_HUB_OFFLINE", True)
        yield evaluate


# ---- sciprobe.core.executors: a real Ray cluster on loopback (owner: sciprobe/core/executors.py)
# --------------------------


@pytest.fixture(scope="session")
def ray_cluster():
    """A Ray cluster for the session: a head and one worker node with 2 CPUs, each a `ray start` process on its
    own loopback address (tests/ray_cluster_support.py); stopped at the end. Skips when Ray is not installed."""
    from ray_cluster_support import LoopbackRayCluster

    from sciprobe.core.executors import get_executor, ray_installed, shutdown_executors

    if not ray_installed():  # not importorskip: Ray must not be imported before the cluster's token is set
        pytest.skip("Ray is not installed (pip install 'sciprobe[ray]')")
    models = os.environ.get("SCIPROBE_MODELS_DIR") or str(Path.home() / ".cache" / "sciprobe" / "models")
    cluster = LoopbackRayCluster(worker_cpus=(2,), extra_env={"SCIPROBE_MODELS_DIR": models}).start()
    try:
        cluster.wait_for_cpus(get_executor(cluster.address))
        yield cluster
    finally:
        shutdown_executors()
        cluster.stop()
