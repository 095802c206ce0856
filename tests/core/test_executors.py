"""sciprobe.core.executors without a cluster: names, the generic map (order, bound, first error), the local executor,
and a clear error when Ray is asked for but not installed. The Ray cluster tests are in test_ray_executor.py."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import pytest

import sciprobe.core.executors as executors
from sciprobe.cli.commands import main
from sciprobe.core.errors import SciprobeError
from sciprobe.run.evaluation import EvaluationRequest
from sciprobe.core.executors import Executor, LocalExecutor, check_executor_name, get_executor


@pytest.mark.parametrize("name, expected", [(None, "local"), ("local", "local"), (" ray ", "ray"),
                                            ("ray://127.0.0.2:10001", "ray://127.0.0.2:10001"),
                                            ("ray://head.example.org:443", "ray://head.example.org:443")])
def test_executor_names(name, expected) -> None:
    assert check_executor_name(name) == expected


@pytest.mark.parametrize("name", ["rayy", "ray://", "ray://host", "ray://host:port", "dask", "threads"])
def test_a_bad_executor_name_is_one_clear_error(name) -> None:
    with pytest.raises(SciprobeError, match="expected local, ray or ray://HOST:PORT"):
        check_executor_name(name)
    with pytest.raises(SciprobeError, match="unknown executor"):
        EvaluationRequest(tasks=["x:y"], model="local/smollm2", executor=name)


def test_cli_refuses_a_bad_executor_before_any_work(capsys) -> None:
    assert main(["evaluate", "sgibench:dry_experiment", "--model", "local/smollm2", "--executor", "nope"]) == 2
    assert capsys.readouterr().err.strip() == ("error: unknown executor 'nope': expected local, ray or "
                                               "ray://HOST:PORT")


def test_ray_without_ray_installed_says_how_to_get_it(monkeypatch, capsys) -> None:
    monkeypatch.setattr(executors, "ray_installed", lambda: False)
    with pytest.raises(SciprobeError, match=r"needs Ray: pip install 'sciprobe\[ray\]'"):
        get_executor("ray://127.0.0.2:10001")
    assert main(["sandbox", "check", "--executor", "ray"]) == 2
    assert "needs Ray" in capsys.readouterr().err


class CountingExecutor(Executor):
    """Runs each call on its own thread and records how many ran at once (the generic map's bound)."""

    remote = True

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self.lock = threading.Lock()

    def submit(self, fn, /, *args) -> Future:
        future: Future = Future()

        def run() -> None:
            with self.lock:
                self.running += 1
                self.peak = max(self.peak, self.running)
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to the future
                future.set_exception(exc)
            finally:
                with self.lock:
                    self.running -= 1

        threading.Thread(target=run).start()
        return future


def test_generic_map_keeps_input_order_and_its_bound() -> None:
    executor = CountingExecutor()
    assert executor.map(pow, range(20), [2] * 20, workers=3) == [x * x for x in range(20)]
    assert 1 <= executor.peak <= 3
    assert executor.map(pow, [], []) == []


def _fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three")
    return x


def test_generic_map_raises_the_first_error_and_starts_nothing_after_it() -> None:
    executor = CountingExecutor()
    started: list[int] = []

    def record(x: int) -> int:
        started.append(x)
        return _fail_on_three(x)

    with pytest.raises(ValueError, match="three"):
        executor.map(record, range(10), workers=1)
    assert started == [0, 1, 2, 3]


def test_local_executor_map_submit_and_node() -> None:
    executor = LocalExecutor(workers=2)
    try:
        assert executor.map(pow, [2, 3, 4], [2, 2, 2]) == [4, 9, 16]
        assert executor.submit(pow, 2, 10).result(timeout=60) == 1024
        assert executor.share("x") == "x" and not executor.remote
        [(label, value)] = executor.on_each_node(lambda: "probe")
        assert value == "probe" and "this machine" in label
    finally:
        executor.close()
    assert get_executor("local") is get_executor(None)
