"""The parity suite passes on any x86-64, not only on the CPU the cases were generated on (issue 22).

numpy picks its SIMD kernels (AVX-512, AVX2, SSE) and OpenBLAS its BLAS kernel for the CPU it runs on, which moves
the last bit of a few values: ``random_37``'s ``gmean_f1_score`` without AVX-512, and the float32 idea terms with
the BLAS ``sdot`` of older or unrecognised CPUs. Each simulated CPU here reruns the float-valued parity cases in a
child process with ``NPY_DISABLE_CPU_FEATURES`` (numpy's dispatch limited as on that CPU) and
``OPENBLAS_CORETYPE`` (its BLAS kernel), after checking that both took effect. A kernel needing instructions this
machine lacks cannot be simulated (it would fault): that case is skipped, and this machine is then the weaker CPU
the plain parity run covers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
FLOAT_SCORERS = ("idrbench_classification", "sgi_idea_objective", "prescience_ranking", "sgi_score",
                 "prescience_rollout_neighbours", "prescience_rollout_curves")
NO_AVX512 = "X86_V4 AVX512_ICL AVX512_SPR"
NO_AVX2 = "X86_V3 " + NO_AVX512

# name: (numpy dispatch targets switched off, OpenBLAS kernel, instructions that kernel needs on this machine)
SIMULATED_CPUS = {
    "avx2-no-avx512": (NO_AVX512, "Haswell", ("AVX2", "FMA3")),
    "avx-no-avx2": (NO_AVX2, "Sandybridge", ("AVX",)),
    "sse4.2-only": (NO_AVX2, "Nehalem", ("SSE42",)),
    "openblas-generic-kernel": (NO_AVX2, "Katmai", ("SSE2",)),  # OpenBLAS's generic x86-64 kernel
}

CHILD = """
import json
import numpy._core._multiarray_umath as umath
import threadpoolctl
from parity.test_parity import CHECKERS, PARAMS

failed = []
for param in PARAMS:
    scorer, case = param.values
    if scorer in SCORERS:
        try:
            CHECKERS[scorer](case)
        except AssertionError as exc:
            failed.append(f"{scorer}:{case['name']}: {exc}")
kernels = {i.get("architecture") for i in threadpoolctl.threadpool_info() if i.get("internal_api") == "openblas"}
print(json.dumps({"failed": failed, "checked": sum(p.values[0] in SCORERS for p in PARAMS),
                  "dispatch": {k: v for k, v in umath.__cpu_features__.items() if k in ("X86_V3", "X86_V4")},
                  "kernels": sorted(k for k in kernels if k)}))
"""


def _host_has(features: tuple[str, ...]) -> bool:
    import numpy._core._multiarray_umath as umath

    return all(umath.__cpu_features__.get(f) for f in features)


@pytest.mark.parametrize("cpu", list(SIMULATED_CPUS))
def test_float_parity_cases_pass_on_another_x86_64(cpu: str) -> None:
    disabled, kernel, needs = SIMULATED_CPUS[cpu]
    if not _host_has(needs):
        pytest.skip(f"this machine lacks {', '.join(needs)}: the {kernel} kernel cannot run here")
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": disabled, "OPENBLAS_CORETYPE": kernel,
           "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent), os.environ.get("PYTHONPATH", "")])}
    code = f"SCORERS = {FLOAT_SCORERS!r}\n" + CHILD
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=TESTS.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["kernels"] == [kernel], report  # the simulation took effect: OpenBLAS runs that kernel
    assert not any(report["dispatch"].get(f) for f in disabled.split() if f in report["dispatch"]), report
    assert report["checked"] >= 150 and report["failed"] == [], report
