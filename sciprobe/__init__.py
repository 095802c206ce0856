"""sciprobe: science-of-science LLM benchmarks as Hugging Face-native evaluation.

Importing this package is cheap and offline: models, datasets and litellm load lazily.
"""

__version__ = "0.1.0"

from sciprobe.errors import SciprobeError  # noqa: E402

__all__ = ["SciprobeError", "__version__"]
