"""SGI-Bench dataset builder: a ``datasets.GeneratorBasedBuilder`` derived from the declaration in
``sciprobe.benchmarks.sgibench`` (configs, features, citation, license, card text live there).

datasets 5 does not run loading scripts, so this class only *produces* data. Normally you run
``sciprobe build sgibench --source DIR --out OUT``; to drive the builder yourself::

    import importlib.util
    spec = importlib.util.spec_from_file_location("sgibench_builder", "dataset_builders/sgibench/builder.py")
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
    b = module.SGIBench(config_name="wet_experiment", dataset_name="sgibench", source="path/to/hub/snapshots")
    b.download_and_prepare(); ds = b.as_dataset(split="test")
"""

from sciprobe.benchmarks import get_benchmark
from sciprobe.build import builder_class

SGIBench = builder_class(get_benchmark("sgibench"))
