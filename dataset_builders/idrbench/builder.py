"""IDRBench dataset builder: a ``datasets.GeneratorBasedBuilder`` derived from the declaration in
``sciprobe.benchmarks.idrbench`` (configs, features, citation, license, card text live there).

datasets 5 does not run loading scripts, so this class only *produces* data. Normally you run
``sciprobe build idrbench --source DIR --out OUT``; to drive the builder yourself::

    import importlib.util
    spec = importlib.util.spec_from_file_location("idrbench_builder", "dataset_builders/idrbench/builder.py")
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
    b = module.IDRBench(config_name="ipi", dataset_name="idrbench", source="path/to/release", cutoff=None)
    b.download_and_prepare(); ds = b.as_dataset(split="test")
"""

from sciprobe.benchmarks import get_benchmark
from sciprobe.build import builder_class

IDRBench = builder_class(get_benchmark("idrbench"))
