"""PreScience dataset builder: a ``datasets.GeneratorBasedBuilder`` derived from the declaration in
``sciprobe.benchmarks.prescience`` (configs, features, citation, license, card text live there).

datasets 5 does not run loading scripts, so this class only *produces* data. The corpus configs stream the
release Parquet batch by batch; the instance configs are derived under the history rule H^{<t_p}. Normally
you run ``sciprobe build prescience --source DIR --out OUT``; to drive the builder yourself::

    import importlib.util
    spec = importlib.util.spec_from_file_location("prescience_builder", "dataset_builders/prescience/builder.py")
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
    b = module.PreScience(config_name="prior_work_selection", dataset_name="prescience", source="path/to/release")
    b.download_and_prepare(); ds = b.as_dataset(split="test")
"""

from sciprobe.benchmarks import get_benchmark
from sciprobe.build import builder_class

PreScience = builder_class(get_benchmark("prescience"))
