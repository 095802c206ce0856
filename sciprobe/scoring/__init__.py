"""Pure metric functions, one module per family; every result carries its mode and coverage."""

from sciprobe.scoring.report import Coverage, ScoreReport

__all__ = ["Coverage", "ScoreReport"]
