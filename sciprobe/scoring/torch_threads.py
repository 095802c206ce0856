"""torch's intra-op threads for the models that score on the CPU (the SGI idea embedder, BERTScore): chosen
here, on purpose, instead of torch's default of one per core, and recorded in the score's params.

Why one thread by default (issue 28): these are small models (MiniLM, 22M parameters) run on short batches,
where a second thread buys little, while torch's OpenMP threads spin-wait for each other: on a 2-core machine
shared with other work, 10 SGI idea items took 67 s with torch's default against 9.7 s with one thread, and
BERTScore 2.2-2.7 s against 1.2 s. bench/scoring_threads.py (2 cores, 2 CPU burners): one thread keeps busy
at the machine's own bound for a single thread (SGI 1.9x quiet, BERTScore 1.6x, a bare Python loop 1.8x), where
torch's default took 22x and 3x. On an idle machine two threads are faster for BERTScore's large batches
(~1.3x): ``SCIPROBE_TORCH_THREADS=N`` overrides the choice there. One fixed count also keeps a score the same
from run to run (a parallel reduction may sum in another order with another thread count). The previous setting
is restored afterwards. The bundled generator (sciprobe.llm.local) has its own default (two threads) and takes the
same override, so a test run with one worker per core (``pytest -n``) sets one thread for everything.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import Any

from sciprobe.core.errors import SciprobeError

ENV_VAR = "SCIPROBE_TORCH_THREADS"
DEFAULT_THREADS = 1


def choose_threads(environ: Mapping[str, str] = os.environ, *, default: int = DEFAULT_THREADS,
                   why: str = "one thread: small models, shared CPUs") -> dict[str, Any]:
    """``{"torch_threads": N, "source": ...}``: the environment's override, else ``default``."""
    raw = environ.get(ENV_VAR, "").strip()
    if not raw:
        return {"torch_threads": default, "source": f"sciprobe default ({why})"}
    if not raw.isdigit() or int(raw) < 1:
        raise SciprobeError(f"{ENV_VAR} must be a whole number of threads >= 1, got {raw!r}")
    return {"torch_threads": int(raw), "source": ENV_VAR}


@contextlib.contextmanager
def scoring_threads(choice: Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """Run the block with torch's intra-op threads set to the choice; yields the record to put in params."""
    import torch

    record = dict(choice or choose_threads())
    previous = torch.get_num_threads()
    torch.set_num_threads(int(record["torch_threads"]))
    try:
        yield record
    finally:
        torch.set_num_threads(previous)
