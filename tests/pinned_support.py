"""Results on the data a test leaderboard ranks against by default, the bundled samples.

A leaderboard checks every result it takes in against the items of its pinned data (issue 22.5;
``sciprobe.results.evidence.rank_verdict``), so a made-up result that should import must be a result on that data: the
sample's fingerprint and dataset name in its provenance and the sample's test ids in its per-item table.
"""

from __future__ import annotations

from typing import Any


def sample_items(ref: str) -> tuple[str, list[str]]:
    """(dataset fingerprint, test ids) of task ``ref`` on its benchmark's bundled sample."""
    from sciprobe.core.registry import resolve_task
    from sciprobe.leaderboard.validation import task_target
    from sciprobe.data.task_data import sample_dataset_dir

    benchmark, _ = resolve_task(ref)
    target = task_target(ref, str(sample_dataset_dir(benchmark)))
    return target.dataset_fingerprint, list(target.ids)


def on_sample(result: Any) -> Any:
    """``result`` (a :class:`sciprobe.results.write.TaskResult` made up in a test) as a result on the bundled sample:
    its
    provenance names the sample and its per-item table lists the sample's ids. Its coverage must already count the
    sample's items (checked here, so a test never imports counts that are not the data's)."""
    ref = ":".join(result.task.split(":")[:2])
    fingerprint, ids = sample_items(ref)
    for mode, report in result.scores.items():
        assert report.coverage.n_items == len(ids), (ref, mode, report.coverage.n_items, len(ids))
    result.provenance.update({"dataset_fingerprint": fingerprint, "dataset": f"sample:{ref.split(':')[0]}",
                              "dataset_revision": None})
    analysis = dict(result.analysis or {})
    analysis["items"] = {**(analysis.get("items") or {}), "ids": ids}
    result.analysis = analysis
    return result


def pinned_as(ids: list[str]) -> Any:
    """A leaderboard's pinned-items lookup (``import_results_file(..., pinned=...)``) for made-up data: every task
    on data with the test ids ``ids`` (a test that is not about the pinned data)."""
    from sciprobe.results.evidence import PinnedItems

    return lambda ref, cutoff: PinnedItems(frozenset(ids), len(ids), "the test's pinned data")
