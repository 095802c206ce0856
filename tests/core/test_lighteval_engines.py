"""``sciprobe lighteval vllm ...`` (and ``sglang``): lighteval's GPU backends pass through the offline wrapper
unchanged, and a missing engine package is one line, not a traceback. No GPU here: the engine itself is not run."""

from __future__ import annotations

import importlib

import pytest

import sciprobe.interop.lighteval_cli as lighteval_cli
from sciprobe.cli.commands import main

ARGS = ["model_name=HuggingFaceTB/SmolLM2-135M-Instruct,dtype=bfloat16,tensor_parallel_size=2", "idrbench:ipi|0",
        "--custom-tasks", "task_cards/sciprobe_tasks.py", "--output-dir", "out"]


@pytest.fixture(scope="module", autouse=True)
def lighteval_main():
    """lighteval.__main__, imported before any capsys test of this file (a module fixture is set up first): its
    logging.config.dictConfig closes every existing handler, and absl's (imported earlier by rouge_score) closes
    its stream when that stream is not the sys.stderr of the moment. Imported first under capsys, that stream is
    pytest's own capture file, and every later test of the worker fails with "I/O operation on closed file".
    Not imported at collection: that would cost every worker its ~7 s of CPU, whichever tests it runs."""
    return importlib.import_module("lighteval.__main__")


def _engine_ready(package: str) -> bool:
    from lighteval.utils.imports import is_package_available

    return is_package_available(package)


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_missing_engine_is_one_clear_line(engine, capsys, monkeypatch):
    if _engine_ready(engine):
        pytest.skip(f"{engine} is installed here")
    built = []
    monkeypatch.setattr(lighteval_cli, "_ensure_sample_data", built.append)
    assert main(["lighteval", engine, *ARGS]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"error: `lighteval {engine}` needs {engine}") and captured.err.count("\n") == 1
    assert f"pip install 'lighteval[{engine}]'" in captured.err and "Traceback" not in captured.out + captured.err
    assert built == []  # stopped before building any data


def test_the_vllm_subcommand_reaches_lighteval_unchanged(monkeypatch, lighteval_main):
    import lighteval.utils.imports

    seen = []
    monkeypatch.setattr(lighteval.utils.imports, "is_package_available", lambda package: True)
    monkeypatch.setattr(lighteval_main, "app", lambda args, prog_name, standalone_mode: seen.append(args))
    monkeypatch.setattr(lighteval_cli, "_ensure_sample_data", lambda argv: None)
    assert main(["lighteval", "vllm", *ARGS]) == 0
    assert seen == [["vllm", *ARGS]]  # no CPU batch size, nothing added or dropped


def test_lightevals_own_missing_backend_error_becomes_one_line(monkeypatch, capsys, lighteval_main):

    def app(args, prog_name, standalone_mode):
        raise ImportError("Through the use of VLLMModel, you requested the use of `vllm<0.10.2,>=0.10.0` for this\n"
                          "evaluation, but it is not available in your current environment. Please install it.")

    monkeypatch.setattr(lighteval_main, "app", app)
    monkeypatch.setattr(lighteval_cli, "check_engine", lambda argv: None)
    monkeypatch.setattr(lighteval_cli, "_ensure_sample_data", lambda argv: None)
    assert main(["lighteval", "vllm", *ARGS]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Through the use of VLLMModel") and err.count("\n") == 1


def test_help_works_without_the_engine(capsys):
    assert main(["lighteval", "vllm", "--help"]) == 0
    assert "Evaluate models using vllm as backend" in " ".join(capsys.readouterr().out.split())
    assert lighteval_cli.cpu_settings(["accelerate", "--help"]) == ["accelerate", "--help"]
