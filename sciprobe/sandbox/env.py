"""The pinned SGI-Bench dry-experiment interpreter (upstream conda env ``dryexp``) as a separate venv.

Spec ``shared/spec/sgibench.md`` §7 (``dry_experiment_requirements.txt``: python 3.10.18; numpy 1.24.3,
pandas 2.0.3, scipy 1.11.4, scikit-learn 1.3.2, statsmodels 0.14.0, xgboost 1.7.6, rdkit 2023.9.5, netCDF4,
xarray, h5py, scikit-image, matplotlib, seaborn, PyWavelets … — CPU only, no torch) and §8: reference outputs
were printed in that environment; other numpy/scipy versions change printed digits and break exact match.

The spec pins only the first seven packages (the item scripts' own comments say scipy==1.10.1, the
requirements file 1.11.4; the requirements file wins here, as that is what upstream installed). The others are
unpinned upstream; pip resolves them against numpy 1.24.3, and the exact set installed is recorded in
``<venv>/sciprobe-dryexp.json`` (``pip freeze``), so a run can report the interpreter it used. The Python
minor version must be 3.10 (upstream 3.10.18); other 3.10 patch levels are accepted.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from sciprobe.core.errors import SciprobeError

DRYEXP_PYTHON = (3, 10)
#: Pinned by upstream (spec §7).
DRYEXP_PINNED: tuple[str, ...] = ("numpy==1.24.3", "pandas==2.0.3", "scipy==1.11.4", "scikit-learn==1.3.2",
                                  "statsmodels==0.14.0", "xgboost==1.7.6", "rdkit==2023.9.5")
#: Listed by upstream without a version (spec §7); resolved by pip against the pins above.
DRYEXP_UNPINNED: tuple[str, ...] = ("netCDF4", "xarray", "h5py", "scikit-image", "matplotlib", "seaborn",
                                    "PyWavelets")
STAMP = "sciprobe-dryexp.json"


def dryexp_requirements(extra: Sequence[str] = ()) -> list[str]:
    """The requirement strings installed into the dry-experiment venv."""
    return [*DRYEXP_PINNED, *DRYEXP_UNPINNED, *extra]


def find_python310() -> str | None:
    """A Python 3.10 interpreter: ``python3.10`` on PATH, then pyenv's and the usual install locations."""
    candidates = [shutil.which("python3.10")]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10.*/bin/python3.10")), reverse=True)
    candidates += ["/usr/bin/python3.10", "/usr/local/bin/python3.10"]
    for c in candidates:
        if c and os.access(c, os.X_OK) and _version(c) == DRYEXP_PYTHON:
            return c
    return None


def _version(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([python, "-c", "import sys;print(*sys.version_info[:2])"], capture_output=True,
                             text=True, timeout=60, check=True).stdout.split()
        return int(out[0]), int(out[1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def env_python(path: str | Path) -> Path:
    return Path(path) / "bin" / "python"


def create_env(path: str | Path, *, python: str | Path | None = None, extra_requirements: Sequence[str] = (),
               pip_args: Sequence[str] = (), force: bool = False, dry_run: bool = False) -> Path:
    """Create (or reuse) the pinned dry-experiment venv at ``path``; returns its ``bin/python``.

    ``python``: the Python 3.10 to base it on (default: :func:`find_python310`). Reuses an existing venv whose
    stamp lists the same requirements unless ``force``. ``pip_args`` go to ``pip install`` (e.g. an index or
    ``--no-index --find-links`` for offline installs). ``dry_run``: check the interpreter and return the
    target python without creating anything. Raises :class:`SciprobeError` with a one-line reason on failure.
    """
    path = Path(path).absolute()
    base = str(python) if python is not None else find_python310()
    if base is None:
        raise SciprobeError("no Python 3.10 interpreter found (upstream dryexp uses 3.10.18); install one, e.g. "
                            "'pyenv install 3.10', and pass --python PATH")
    version = _version(base)
    if version != DRYEXP_PYTHON:
        raise SciprobeError(f"{base} is Python {version and '.'.join(map(str, version))}, the dry-experiment "
                            "environment needs 3.10 (upstream 3.10.18)")
    if path.exists() and (not path.is_dir() or (any(path.iterdir()) and not (path / "pyvenv.cfg").is_file())):
        raise SciprobeError(f"{path} exists and is not a virtual environment; refusing to clear it")
    reqs = dryexp_requirements(extra_requirements)
    py = env_python(path)
    stamp = path / STAMP
    if dry_run:
        return py
    if not force and stamp.is_file() and py.exists():
        try:
            if json.loads(stamp.read_text())["requirements"] == reqs:
                return py
        except (ValueError, KeyError):
            pass
    if force and path.exists():
        shutil.rmtree(path)
    try:
        subprocess.run([base, "-m", "venv", "--clear", str(path)], check=True)
        pip = [str(py), "-m", "pip", "install", "--disable-pip-version-check", "--quiet", *pip_args]
        subprocess.run([*pip, *reqs], check=True)
        freeze = subprocess.run([str(py), "-m", "pip", "freeze", "--all"], check=True, capture_output=True,
                                text=True).stdout.split()
        full = subprocess.run([str(py), "-c", "import sys;print(sys.version.split()[0])"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SciprobeError(f"creating the dry-experiment environment at {path} failed: {exc}") from exc
    stamp.write_text(json.dumps({"python": full, "requirements": reqs, "freeze": freeze}, indent=1) + "\n")
    return py
