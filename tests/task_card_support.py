"""The one lighteval card module of every benchmark (``task_cards/sciprobe_tasks.py``), loaded by path as
lighteval's ``--custom-tasks`` loads it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from metric_module_support import import_file

CARD = Path(__file__).resolve().parents[1] / "task_cards" / "sciprobe_tasks.py"


def load_card(benchmark: str) -> SimpleNamespace:
    """The card module's TASKS_TABLE, restricted to ``benchmark``'s tasks."""
    module = import_file(CARD, f"card_{benchmark}")
    return SimpleNamespace(TASKS_TABLE=[t for t in module.TASKS_TABLE if t.name.split(":")[0] == benchmark])
