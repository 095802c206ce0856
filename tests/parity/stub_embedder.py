"""A deterministic stand-in for the sentence-transformers embedder, shared by the parity generator and the
parity tests so both sides see the same float32 vectors (tests stay fast, offline and exact).

Each text maps to an 8-dimensional float32 vector derived from the BLAKE2b digest of its UTF-8 bytes (the
empty string maps to zeros, so zero-norm guards are exercised). ``normalize_embeddings`` scales rows to unit
length as ``SentenceTransformer.encode`` does. A non-string item raises ``TypeError``: the real model accepts
some non-string inputs (it reads a two-element list as a text pair), so parity cases only pin what the scorer
does around an embedder that refuses them.
"""

from __future__ import annotations

import hashlib

import numpy as np

DIM = 8


def _vector(text: str) -> np.ndarray:
    if text == "":
        return np.zeros(DIM, dtype=np.float32)
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=2 * DIM).digest()
    return (np.frombuffer(digest, dtype="<u2").astype(np.float32) / np.float32(65535.0)) - np.float32(0.2)


class HashEmbedder:
    def encode(self, sentences, normalize_embeddings: bool = False, **_: object) -> np.ndarray:
        if isinstance(sentences, str) or not isinstance(sentences, (list, tuple)):
            raise TypeError(f"expected a list of texts, got {type(sentences).__name__}")
        for text in sentences:
            if not isinstance(text, str):
                raise TypeError(f"cannot embed a {type(text).__name__}")
        out = np.stack([_vector(t) for t in sentences]) if sentences else np.zeros((0, DIM), dtype=np.float32)
        if normalize_embeddings:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out = out / np.where(norms == 0, np.float32(1.0), norms)
        return out.astype(np.float32)
