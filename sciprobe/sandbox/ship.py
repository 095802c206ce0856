"""Sandboxed runs on a remote executor (a Ray cluster): the run's files travel with it.

A node of a cluster may not see this machine's files, so :func:`run_many_shipped` packs each distinct set of
``inputs`` once (a tar in memory, shared through the executor's object store), and every task unpacks its set
into a private folder on its node, runs :func:`sciprobe.sandbox.runner.run_python` there with the same limits
and interpreter, and sends back the result and, when the spec asks for an ``output_dir``, the files the program
left (as a tar, already bounded by the run's ``disk_mb``/``max_files``), which are unpacked here. So the
caller sees what a local :func:`~sciprobe.sandbox.runner.run_many` gives: the same results in the same order.

Packing follows symlinks (their targets travel as files). The interpreter is named by path: every node needs
it at the same place (the usual cluster setup: one venv path everywhere). The sandbox itself is checked on
every node that runs tasks (:func:`cluster_sandbox_status`), as ``sciprobe sandbox check --executor`` does.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sciprobe.sandbox.host import SandboxError, check_rel

#: A packed set of inputs: (relative path in the work dir, member name in the tar) pairs and the tar's bytes.
Bundle = tuple[tuple[tuple[str, str], ...], bytes]


@dataclass(frozen=True)
class ShippedRun:
    """A :class:`~sciprobe.sandbox.runner.RunSpec` without host paths (its inputs travel as a bundle)."""

    code: str
    limits: Any
    python: str | None
    filename: str
    args: tuple[str, ...]
    env: dict[str, str]
    want_outputs: bool
    allow_unsandboxed: bool


def pack_inputs(inputs: Mapping[str, Path]) -> Bundle:
    """The input files and folders as one uncompressed tar; a missing input is the same error as locally."""
    buffer = io.BytesIO()
    members = []
    with tarfile.open(fileobj=buffer, mode="w", dereference=True) as tar:
        for index, (rel, src) in enumerate(sorted(inputs.items())):
            rel = check_rel(str(rel))
            path = Path(src).resolve()
            if not path.exists():
                raise SandboxError(f"input {rel!r}: {src} does not exist")
            tar.add(str(path), arcname=str(index), recursive=True)
            members.append((rel, str(index)))
    return tuple(members), buffer.getvalue()


def unpack(data: bytes, into: Path) -> None:
    """Extract one of our tars (``data`` filter: no absolute paths, no links out, no device files)."""
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        tar.extractall(into, filter="data")


def pack_folder(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for entry in sorted(folder.iterdir()):
            tar.add(str(entry), arcname=entry.name, recursive=True)
    return buffer.getvalue()


def run_shipped(run: ShippedRun, bundle: Bundle | None, *, run_python: Callable[..., Any]) -> tuple[Any, bytes | None]:
    """On a worker: unpack the inputs in a private folder, run (``run_python``: the sandbox's own, passed in so
    this module never imports the sandbox that imports it), pack what ``output_dir`` would receive."""
    root = Path(tempfile.mkdtemp(prefix="sciprobe-shipped-"))
    try:
        root.chmod(0o755)  # as root the sandboxed program runs under another uid: inputs must stay readable
        inputs: dict[str, Path] = {}
        if bundle is not None:
            members, data = bundle
            unpack(data, root / "in")
            inputs = {rel: root / "in" / member for rel, member in members}
        out = root / "out" if run.want_outputs else None
        result = run_python(run.code, inputs=inputs, limits=run.limits, python=run.python,
                            allow_unsandboxed=run.allow_unsandboxed, filename=run.filename, args=run.args,
                            env=run.env, output_dir=out)
        outputs = pack_folder(out) if out is not None and out.is_dir() else None
        return result, outputs
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_many_shipped(specs: Sequence[Any], executor: Any, *, allow_unsandboxed: bool,
                     run_remote: Callable[[ShippedRun, Bundle | None], tuple[Any, bytes | None]],
                     workers: int | None = None) -> list[Any]:
    """:func:`~sciprobe.sandbox.runner.run_many` on a remote executor (``specs`` are complete RunSpecs);
    ``run_remote(run, bundle)`` runs one on a worker (a module-level function, which Ray pickles by reference:
    :func:`run_shipped` with the sandbox's ``run_python``)."""
    bundles: dict[tuple[tuple[str, str], ...], Any] = {}
    runs, handles = [], []
    for spec in specs:
        key = tuple(sorted((str(k), str(v)) for k, v in spec.inputs.items()))
        if key not in bundles:
            bundles[key] = executor.share(pack_inputs(spec.inputs)) if key else None
        handles.append(bundles[key])
        python = None if spec.python is None else os.path.abspath(str(spec.python))
        runs.append(ShippedRun(code=spec.code, limits=spec.limits, python=python, filename=spec.filename,
                               args=tuple(spec.args), env=dict(spec.env), want_outputs=spec.output_dir is not None,
                               allow_unsandboxed=allow_unsandboxed))
    results = []
    for spec, (result, outputs) in zip(specs, executor.map(run_remote, runs, handles, workers=workers)):
        if spec.output_dir is not None:
            result = _receive_outputs(result, outputs, Path(spec.output_dir))
        results.append(result)
    return results


def _receive_outputs(result: Any, outputs: bytes | None, output_dir: Path) -> Any:
    """Unpack a run's files into its ``output_dir``; a failure is a warning, never a lost result (as locally)."""
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        if outputs:
            unpack(outputs, output_dir)
    except (OSError, tarfile.TarError) as exc:
        return replace(result, warnings=(*result.warnings, f"output copy to {output_dir} failed: {exc}"))
    return result


def cluster_sandbox_status(executor: Any, probe: Callable[[], tuple[bool, str]]
                           ) -> tuple[bool, str, list[tuple[str, bool, str]]]:
    """(every node ok, one-line summary, [(node, ok, reason)]) from ``probe`` (the sandbox's own availability
    check, passed in) run on each node."""
    per_node = [(label, ok, reason) for label, (ok, reason) in executor.on_each_node(probe)]
    if not per_node:
        return False, f"no node of {executor.name} can run tasks (no CPUs)", per_node
    bad = [(label, reason) for label, ok, reason in per_node if not ok]
    if bad:
        label, reason = bad[0]
        return False, f"{len(bad)} of {len(per_node)} node(s) of {executor.name} cannot sandbox: {label}: {reason}", \
            per_node
    return True, f"{per_node[0][2]} on all {len(per_node)} node(s) of {executor.name}", per_node
