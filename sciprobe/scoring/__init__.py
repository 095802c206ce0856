"""Generic metric functions, one module per family (a benchmark's own metrics live in its folder); every result
carries its mode and coverage."""

from sciprobe.scoring.score_report import Coverage, ScoreReport

__all__ = ["Coverage", "ScoreReport"]
