"""SciTaste-Bench dataset builder: a ``datasets.GeneratorBasedBuilder`` derived from the declaration in
``sciprobe.benchmarks.scitaste`` (configs, features, citation, license, card text live there).

datasets 5 does not run loading scripts, so this class only *produces* data. Normally you run
``sciprobe build scitaste --source DIR --out OUT``; to drive the builder yourself::

    import importlib.util
    spec = importlib.util.spec_from_file_location("scitaste_builder", "dataset_builders/scitaste/builder.py")
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
    b = module.SciTasteBuilder(config_name="selected", dataset_name="scitaste", source="path/to/release")
    b.download_and_prepare(); ds = b.as_dataset(split="test")
"""

from sciprobe.benchmarks import get_benchmark
from sciprobe.build import builder_class

SciTasteBuilder = builder_class(get_benchmark("scitaste"))
