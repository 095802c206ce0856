"""Shift the wall clock of every Python process of a test run (``scripts/test-future.sh`` puts this folder on
PYTHONPATH and sets SCIPROBE_CLOCK_SHIFT_DAYS): a test that depends on today's date fails there. Monotonic
clocks are untouched, so timeouts and pacing behave as usual."""

import os

_days = os.environ.get("SCIPROBE_CLOCK_SHIFT_DAYS")
if _days:
    import datetime as _dt

    import time_machine as _time_machine

    _time_machine.travel(_dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(days=float(_days)), tick=True).start()
