"""The dataset builder of every registered benchmark: a ``datasets.GeneratorBasedBuilder`` derived from the
benchmark's declaration (``sciprobe/benchmarks/<name>/``: configs, features, citation, license, card text).

datasets 5 does not run loading scripts, so a builder only *produces* data. Normally you run
``sciprobe build BENCH --source DIR --out OUT``; to drive a builder yourself::

    import importlib.util
    spec = importlib.util.spec_from_file_location("sciprobe_builders", "dataset_builders/builder.py")
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
    b = module.builder("idrbench")(config_name="ipi", dataset_name="idrbench", source="path/to/release", cutoff=None)
    b.download_and_prepare(); ds = b.as_dataset(split="test")
"""

from sciprobe.core.registry import benchmark_names, get_benchmark
from sciprobe.data.build import builder_class


def builder(name: str) -> type:
    """The builder class of benchmark ``name``."""
    return builder_class(get_benchmark(name))


#: name -> builder class, for every registered benchmark
BUILDERS = {name: builder(name) for name in benchmark_names()}
