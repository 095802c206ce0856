"""Machine load for the client benches: a reproducible "busy" condition, the load average, median and range.

"busy" = one CPU burner process per core (``python -c 'while True: pass'``, normal priority) running for the
whole measurement, on top of whatever else the shared machine is doing; "quiet" = no burner (the machine may
still be shared: each row reports the 1-minute load average at its start and end). A bench runs both
conditions in one invocation, so a claim is shown under load next to the same claim without it.

    with machine_condition("busy") as condition:   # starts os.cpu_count() burners, stops them after
        ...measure...
    condition.describe()  # "busy (2 burners), load 2.9 -> 4.1"
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from dataclasses import dataclass

CONDITIONS = ("quiet", "busy")


@dataclass
class Condition:
    name: str
    burners: int
    load_start: float
    load_end: float | None = None

    def describe(self) -> str:
        burn = f" ({self.burners} burners)" if self.burners else ""
        end = f" -> {self.load_end:.1f}" if self.load_end is not None else ""
        return f"{self.name}{burn}, load {self.load_start:.1f}{end}"


@contextlib.contextmanager
def machine_condition(name: str, burners: int | None = None) -> Iterator[Condition]:
    """Run the block quiet, or busy with ``burners`` (default: one per core) CPU-bound processes."""
    if name not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {name!r}")
    count = 0 if name == "quiet" else (burners if burners is not None else os.cpu_count() or 1)
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    condition = Condition(name, count, os.getloadavg()[0])
    try:
        yield condition
    finally:
        condition.load_end = os.getloadavg()[0]
        for proc in procs:  # only the burners this block started, by their own handles
            proc.kill()
            proc.wait(timeout=10)


def median_range(values: Sequence[float], fmt: str = "{:.2f}") -> str:
    """``median (min-max)``."""
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def load_note() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{os.cpu_count()} CPUs, load average {one:.1f} / {five:.1f} / {fifteen:.1f} (1/5/15 min)"


def write_results(path: Path, lines: Sequence[str], verdicts: Sequence[str]) -> None:
    """Print a bench's table and its target lines, and write them to its ``bench/results`` file."""
    text = "\n".join([*lines, "", *verdicts]) + "\n"
    print(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def package_version(package: str) -> str:
    from importlib.metadata import version

    return version(package)
