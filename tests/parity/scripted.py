"""Scripted stand-ins shared by the parity generator and the parity tests (project code, no upstream text)."""

from __future__ import annotations

import hashlib


def i2r_reply(seed: int, first: int, second: int) -> str:
    """The scripted comparator: a fixed reply per (tournament, ordered pair of player ids)."""
    digest = hashlib.sha256(f"{seed}:{first}:{second}".encode()).digest()
    styles = ["Your choice: Paper 1\nConfidence score: 70", "Your choice: Paper 2\nConfidence score: 60",
              "Your choice: Paper 1\nConfidence score: 55", "Your choice: Paper 2\nConfidence score: 65",
              "your choice: paper 1\nconfidence score: 50", "Choice: Paper 1\nConfidence score: 50",
              "Your choice: Paper 2\nConfidence score: 90", "no idea"]
    weights = [5, 5, 3, 3, 2, 1, 2, 1]
    pick = int.from_bytes(digest[:4], "big") % sum(weights)
    for style, w in zip(styles, weights):
        if pick < w:
            return style
        pick -= w
    raise AssertionError
