"""External input files of three dry-experiment items (shared/spec/sgibench.md §1.3, §7 table, §8).

The files are not in the hub rows and are never copied into this repository: they are located by a
configurable folder (argument, or ``SCIPROBE_SGIBENCH_DRY_DATA``) laid out like upstream's
``evaluation/task_3_dry_experiment/data/`` and checked against the pinned sha256 values. Two files have no
pinned checksum (not in the reference copy): they are reported as ``unpinned`` when present.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

ENV_VAR = "SCIPROBE_SGIBENCH_DRY_DATA"

EXTERNAL_FILES: dict[str, tuple[str, ...]] = {
    "SGI_DryExperiment_0200": ("SGI_DryExperiment_0200/adult.data", "SGI_DryExperiment_0200/adult.test"),
    "SGI_DryExperiment_0206": ("SGI_DryExperiment_0206/t10k-images-idx3-ubyte.gz",
                               "SGI_DryExperiment_0206/t10k-labels-idx1-ubyte.gz",
                               "SGI_DryExperiment_0206/train-images-idx3-ubyte.gz",
                               "SGI_DryExperiment_0206/train-labels-idx1-ubyte.gz"),
    "SGI_DryExperiment_0236": ("SGI_DryExperiment_0236/3d-user-study-data.zip",),
}
# Where upstream copies them inside each unit-test directory (relative to the test dir).
TARGET_DIRS = {"SGI_DryExperiment_0200": "data", "SGI_DryExperiment_0206": "data/mnist_raw",
               "SGI_DryExperiment_0236": "data/em_3d_user_study"}

SHA256: dict[str, str | None] = {
    "SGI_DryExperiment_0200/adult.data": "839d2e476d7eb1cc99f9d6ad9abd1819ec7f9cefe69c6ccf64f5311f1407fae7",
    "SGI_DryExperiment_0200/adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    "SGI_DryExperiment_0206/t10k-images-idx3-ubyte.gz":
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    "SGI_DryExperiment_0206/t10k-labels-idx1-ubyte.gz":
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    "SGI_DryExperiment_0206/train-labels-idx1-ubyte.gz":
        "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    "SGI_DryExperiment_0206/train-images-idx3-ubyte.gz": None,
    "SGI_DryExperiment_0236/3d-user-study-data.zip": None,
}


@dataclass(frozen=True)
class ExternalFile:
    relative: str
    path: Path | None
    status: str  # ok, unpinned, missing, checksum_mismatch, no_folder

    @property
    def usable(self) -> bool:
        return self.status in ("ok", "unpinned")


def data_dir(explicit: str | Path | None = None) -> Path | None:
    value = explicit or os.environ.get(ENV_VAR)
    return Path(value) if value else None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def locate(idx: str, folder: str | Path | None = None, verify: bool = True) -> list[ExternalFile]:
    """The external files of one item with their status (empty for items that need none)."""
    root = data_dir(folder)
    out = []
    for rel in EXTERNAL_FILES.get(idx, ()):
        if root is None:
            out.append(ExternalFile(rel, None, "no_folder"))
            continue
        path = root / rel
        if not path.is_file():
            out.append(ExternalFile(rel, path, "missing"))
            continue
        pinned = SHA256.get(rel)
        if pinned is None:
            out.append(ExternalFile(rel, path, "unpinned"))
        elif verify and sha256_file(path) != pinned:
            out.append(ExternalFile(rel, path, "checksum_mismatch"))
        else:
            out.append(ExternalFile(rel, path, "ok"))
    return out


def check_all(folder: str | Path | None = None, verify: bool = True) -> dict[str, list[ExternalFile]]:
    """Status of every external file, by item (what a runner checks before building the test dirs)."""
    return {idx: locate(idx, folder, verify) for idx in EXTERNAL_FILES}
