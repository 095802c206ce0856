"""Issue 22, ``--upstream-dir``: every file read from the folder is untrusted. A symlink whose real path leaves the
folder is refused (never sent to the model), only regular files are read and never beyond the byte cap (a sparse
4 GB template is not read whole), and template code nested too deeply for the parser is one ``error:`` line, never
a RecursionError or MemoryError. The stand-in templates of ``tests/cases/upstream/`` are made the pin, so each
refusal here is about the file, not its content."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sciprobe.core.registry import get_benchmark
from sciprobe.cli.commands import main
from sciprobe.core.errors import SciprobeError
from sciprobe.testing.stub_server import StubServer
from sciprobe.run.upstream import MAX_UPSTREAM_FILE_BYTES, UpstreamTexts, python_constants

from upstream_support import STAND_INS, pin_stand_ins

IDR = get_benchmark("idrbench")
SGI_DEEP_RESEARCH = "evaluation/task_1_deep_research/step_1_get_answer.py"


@pytest.fixture(autouse=True)
def _stand_ins_pinned(monkeypatch) -> None:
    pin_stand_ins(monkeypatch, "idrbench")
    pin_stand_ins(monkeypatch, "sgibench")


def _evaluate(tmp_path: Path, upstream_dir: Path, capsys, task: str = "idrbench:ipi") -> tuple[int, list, str]:
    """``sciprobe evaluate TASK --prompts upstream --upstream-dir DIR`` against a stub: (exit, requests, stderr)."""
    with StubServer() as stub:
        model = f"openai/stub-model,base_url={stub.base_url},api_key=sk-test"
        code = main(["evaluate", task, "--model", model, "--limit", "2", "--output-dir", str(tmp_path / "out"),
                     "--prompts", "upstream", "--upstream-dir", str(upstream_dir)])
        return code, stub.requests, capsys.readouterr().err


def _refused(tmp_path: Path, upstream_dir: Path, capsys, expected: str, task: str = "idrbench:ipi") -> None:
    code, sent, err = _evaluate(tmp_path, upstream_dir, capsys, task)
    assert code == 2 and sent == [], err
    assert err.startswith("error: ") and err.count("\n") == 1 and expected in err, err
    assert not (tmp_path / "out").exists()


def test_a_symlink_to_a_file_outside_the_folder_is_never_sent_to_the_model(tmp_path: Path, capsys) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(STAND_INS / "idrbench" / "utils.py", outside / "utils.py")  # the pinned content, even so
    folder = tmp_path / "upstream"
    folder.mkdir()
    (folder / "utils.py").symlink_to(outside / "utils.py")
    _refused(tmp_path, folder, capsys, "outside the upstream folder")
    # the same file under DIR/<bench>/, and a symlinked directory on the way
    nested = tmp_path / "nested"
    (nested / "idrbench").mkdir(parents=True)
    (nested / "idrbench" / "utils.py").symlink_to(outside / "utils.py")
    _refused(tmp_path, nested, capsys, "outside the upstream folder")
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copytree(STAND_INS / "sgibench" / "evaluation", outside / "evaluation")
    (tree / "evaluation").symlink_to(outside / "evaluation", target_is_directory=True)
    _refused(tmp_path, tree, capsys, "outside the upstream folder", task="sgibench:deep_research")


def test_a_symlink_to_a_device_is_refused_and_one_inside_the_folder_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "upstream"
    (folder / "copies").mkdir(parents=True)
    (folder / "utils.py").symlink_to("/dev/zero")
    with pytest.raises(SciprobeError, match="outside the upstream folder"):
        UpstreamTexts("idrbench", IDR.upstream, folder).text("utils.py")
    (folder / "utils.py").unlink()
    shutil.copy(STAND_INS / "idrbench" / "utils.py", folder / "copies" / "utils.py")
    (folder / "utils.py").symlink_to(Path("copies") / "utils.py")  # a link that stays inside is fine
    texts = UpstreamTexts("idrbench", IDR.upstream, folder)
    assert texts.constant("utils.py", "sys_prompt") and texts.file("utils.py").matches_pin


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    folder = tmp_path / "upstream"
    (folder / "utils.py").mkdir(parents=True)  # a folder where the template belongs
    with pytest.raises(SciprobeError, match="is not a regular file"):
        UpstreamTexts("idrbench", IDR.upstream, folder).text("utils.py")


def test_a_sparse_4_gb_template_is_refused_without_reading_it(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "upstream"
    folder.mkdir()
    template = folder / "utils.py"
    shutil.copy(STAND_INS / "idrbench" / "utils.py", template)
    os.truncate(template, 4 << 30)  # sparse: no disk used, 4 GB apparent size
    _refused(tmp_path, folder, capsys, f"larger than {MAX_UPSTREAM_FILE_BYTES:,} bytes")


@pytest.mark.parametrize("code", [
    "prompt_exp_1 = " + "-" * 200_000 + "1\n",                 # MemoryError in the parser
    "prompt_exp_1 = " + "1+" * 100_000 + "1\n",                # RecursionError building the tree
    'prompt_exp_1 = "a"' + ".strip()" * 100_000 + "\n",        # RecursionError building the tree
    "prompt_exp_1 = a" + ".b" * 100_000 + "\n",
], ids=["unary", "binop", "strip-chain", "attributes"])
def test_deeply_nested_template_code_is_one_error_line(code: str, tmp_path: Path, capsys) -> None:
    with pytest.raises(SciprobeError) as err:
        python_constants(code, "up:utils.py")
    assert "nested too deeply" in str(err.value) and "\n" not in str(err.value)
    folder = tmp_path / "upstream"
    folder.mkdir()
    (folder / "utils.py").write_text(code)
    _refused(tmp_path, folder, capsys, "nested too deeply")


def test_a_strip_chain_the_parser_accepts_stays_a_literal_up_to_a_bound() -> None:
    """Short ``.strip()`` chains are literals (upstream writes one); a long one is not a template and is no
    literal, read without recursion."""
    assert python_constants('T = """  x  """.strip().lstrip()\n') == {"T": "x"}
    assert python_constants('T = "  x  "' + ".strip()" * 100 + "\n") == {}
