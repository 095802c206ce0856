"""Ctrl-C with the bundled model (issue 23.6): ``evaluate ... --model local/smollm2`` printed its message on SIGINT
but stayed alive for minutes, until the batch being generated was done. Generation now stops between two tokens;
the run ends with exit 130 (interrupted: nothing written, the finished batches cached, a rerun resumes).

The first test needs no weights: the real CLI, LocalBackend and LocalModel.generate drive a stand-in for the
transformers model that generates token after token for ever (asking the stopping criteria between tokens, as
transformers does) once its first batch is answered. The slow ones use the real model. No test asserts a duration:
a process that does not end fails on the generous wait.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sciprobe.llm.types import Request

from golden import REPO

#: A run of the real CLI on a stand-in model: the first two generate() calls answer (EOS after three tokens),
#: every later one never ends on its own; the marker file says the endless one has started.
ENDLESS_MODEL_RUN = r'''
import os, sys, threading, time
from pathlib import Path
import torch
from sciprobe.cli.commands import main
from sciprobe.llm import local

class Tokenizer:
    pad_token_id = eos_token_id = 0

    def apply_chat_template(self, messages, add_generation_prompt, tokenize):
        return messages[-1]["content"]

    def __call__(self, prompts, **kwargs):
        ones = torch.ones((len(prompts), 3), dtype=torch.long)
        return {"input_ids": ones, "attention_mask": ones.clone()}

    def decode(self, ids, skip_special_tokens):
        return 'Your verdict: Yes\nConfidence score: 80\nSubject: ["Physics"]'

class EndlessModel:
    calls = 0

    def generate(self, input_ids, attention_mask, stopping_criteria=None, **kwargs):
        EndlessModel.calls += 1
        endless = EndlessModel.calls > 2
        ids = input_ids
        while True:
            token = 0 if not endless and ids.shape[1] >= 5 else 7
            ids = torch.cat([ids, torch.full((ids.shape[0], 1), token, dtype=torch.long)], dim=1)
            if token == 0:
                return ids
            if endless:
                Path(os.environ["ENDLESS_MARKER"]).touch()
            if stopping_criteria is not None and bool(stopping_criteria(ids, None).all()):
                return ids
            time.sleep(0.01)

model = object.__new__(local.LocalModel)
model.name, model.model_id, model.path = "smollm2", "local/smollm2", None
model.tokenizer, model.model, model._lock = Tokenizer(), EndlessModel(), threading.Lock()
local._MODELS["smollm2"] = model
sys.exit(main(sys.argv[1:]))
'''


def cached_keys(home: Path) -> int:
    path = home / "cache" / "responses.sqlite"
    if not path.exists():
        return 0
    conn = sqlite3.connect(str(path), timeout=30)
    try:
        return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not created yet
        return 0
    finally:
        conn.close()


def sigint_as_in_a_terminal() -> None:
    """Run in the child before it starts: Ctrl-C's default action, which a shell's background job (``cmd &``,
    and so a suite started that way) inherits as *ignored*; a Python started with SIGINT ignored keeps ignoring it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_when(proc: subprocess.Popen, ready, limit_s: float = 300) -> None:
    """SIGINT once ``ready()`` holds (the process must still be running then)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None and not ready():
        time.sleep(0.1)
    assert proc.poll() is None and ready(), "the run ended or never got there"
    proc.send_signal(signal.SIGINT)


def assert_ends_interrupted(proc: subprocess.Popen, out: Path, log: Path) -> None:
    try:
        proc.wait(timeout=120)  # generous: the stop comes at the next token
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
        pytest.fail("still running 120 s after SIGINT: generation was not stopped")
    text = log.read_text()
    assert proc.returncode == 130, text[-2000:]
    assert "interrupted; completed calls are cached" in text and "Traceback" not in text
    assert not (out / "results").exists()  # nothing written for an interrupted run


def test_sigint_stops_an_endless_generation_and_keeps_the_finished_batch(tmp_path):
    home, out, log, marker = tmp_path / "home", tmp_path / "out", tmp_path / "run.log", tmp_path / "endless"
    env = {**os.environ, "SCIPROBE_HOME": str(home), "ENDLESS_MARKER": str(marker),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-c", ENDLESS_MODEL_RUN, "evaluate", "idrbench:ipi", "--model",
               "local/smollm2,concurrency=2", "--limit", "6", "--output-dir", str(out)]
    with open(log, "w") as sink:
        proc = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                preexec_fn=sigint_as_in_a_terminal)
        try:
            interrupt_when(proc, marker.exists)
            assert_ends_interrupted(proc, out, log)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
    assert cached_keys(home) == 2  # the answered batch is cached; the cut one is not


class SetAfter(threading.Event):
    """A cancel event that reads as set from its ``n``-th look on: the generation is cancelled mid-way, at a
    known token, whatever the machine's speed."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.looks = 0

    def is_set(self) -> bool:
        self.looks += 1
        return self.looks >= self.n or super().is_set()


@pytest.mark.slow
def test_the_real_model_stops_between_tokens(local_model_dir):
    from sciprobe.llm.local import GenerationCancelled, get_local_model

    model = get_local_model("smollm2")
    request = Request.of([{"role": "user", "content": "Write a very long story about a lighthouse."}],
                         {"max_tokens": 2000})
    cancel = SetAfter(4)  # looked at before generating, then after each token
    with pytest.raises(GenerationCancelled):
        model.generate([request, request], ["k1", "k2"], cancel)
    assert cancel.looks <= 5  # stopped at once, not after 2,000 tokens
    [plain] = model.generate([Request.of([{"role": "user", "content": "Hi!"}], {"max_tokens": 8})], ["k3"])
    assert plain.ok and plain.text  # an uncancelled batch generates as before


@pytest.mark.slow
def test_sigint_with_the_bundled_model_ends_the_run(local_model_dir, tmp_path):
    """The command of the issue, one item per batch (sampled IPI answers of up to 500 tokens take minutes a batch
    of 8 on a busy 2-core machine): the first answer is cached, SIGINT during the next one."""
    home, out, log = tmp_path / "home", tmp_path / "out", tmp_path / "run.log"
    env = {**os.environ, "SCIPROBE_HOME": str(home), "SCIPROBE_MODELS_DIR": str(local_model_dir.parent),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "sciprobe.cli.commands", "evaluate", "idrbench:ipi", "--model",
               "local/smollm2,concurrency=1", "--limit", "32", "--output-dir", str(out)]
    with open(log, "w") as sink:
        proc = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                preexec_fn=sigint_as_in_a_terminal)
        try:
            interrupt_when(proc, lambda: cached_keys(home) >= 1, limit_s=900)
            assert_ends_interrupted(proc, out, log)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
    assert 1 <= cached_keys(home) < 32
