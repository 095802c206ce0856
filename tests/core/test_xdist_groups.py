"""scripts/test.sh runs `pytest -n N --dist loadgroup`: the tests in one `xdist_group` (the Ray cluster tests, one
session cluster) must all run on one worker. pytest 9.2 broke this silently: xdist 3.8 files a grouped test by
rewriting ``item._nodeid``, which pytest 9.2 no longer reads, so every cluster test went wherever and each worker
started its own cluster. constraints.txt pins pytest 9.1.1 for it; this guards the pin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

GROUPED = '''
import os
from pathlib import Path

import pytest


@pytest.mark.xdist_group("together")
@pytest.mark.parametrize("n", range(6))
def test_grouped(n):
    with Path(os.environ["WORKERS_FILE"]).open("a") as out:
        out.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")


@pytest.mark.parametrize("n", range(6))
def test_free(n):
    pass
'''


def test_one_group_runs_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    workers = tmp_path / "workers.txt"
    env = {**os.environ, "WORKERS_FILE": str(workers)}  # the inner run is outside the repository: no conftest
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup", "-p",
                           "no:cacheprovider", "-p", "no:randomly", str(tmp_path / "test_grouped.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    ran_on = workers.read_text().split()
    assert len(ran_on) == 6 and len(set(ran_on)) == 1, ran_on
