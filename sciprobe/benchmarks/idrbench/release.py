"""The IDRBench release as the pinned upstream code reads it (``irllm-framework@aa621e4``, ``tasks.py``), for
``sciprobe doctor`` and for the builder's missing-file check.

At the pin ``data/`` holds six single files: ``identify_task`` reads ``data_exp_1.json``, ``classify_task``
``data_exp_2_{1,2}.json``, ``recommend_task`` ``data_exp_3_{1,2}.json`` (it also accepts part files, ``"part" in
file_name``), ``generate_task`` ``data_exp_4_1.json``. Older commits (``5195b17`` and before) split the I2R files into
``data_exp_3_{1,2}_part_<n>.json``; those are read in part order. ``data_exp_2_3.json`` (deleted in ``663dc9c``,
before the pin) is the named historical variant ``i3_set2_5195b17``.

Column types are those of the release files (spec ``idrbench.md`` §3.2): ids are text or JSON floats, ``b_id``
is a list or a plain string, I3 ``date`` is null or "" and absent from ``data_exp_4_1.json``.
"""

from __future__ import annotations

from sciprobe.core.declaration import ReleaseFile, ReleaseLayout

PINNED_COMMIT = "aa621e46dc5f1d85e6b20952c2acee3a59c44e65"

IPI_COLUMNS = {"id": "str|float", "title": "str", "abstract": "str", "categories": "list", "authors": "list",
               "date": "str|null", "y_true": "bool"}

_SIDES = {f"{side}_{key}": kind for side in "bc"
          for key, kind in (("id", "list|str"), ("title", "list"), ("abstract", "list"), ("categories", "list"),
                            ("fields", "list"))}
I3_COLUMNS = {"id": "str|float", "date": "null|str|absent", "fields": "list|absent", "a_title": "str|null",
              "a_abstract": "str|null", "explanation": "str|null", **_SIDES, "y_true": "bool",
              "research_type": "str|null"}

I2R_COLUMNS = {"id": "float|str", "research_type": "str|null", "start_id": "str", "start_title": "str",
               "start_abstract": "str", "start_categories": "list", "start_fields": "list", "target_paper": "dict",
               "list": "dict"}

# config -> its file at the pin (the part glob of the older layout, for the files that had one)
FILES = {
    "ipi": "data_exp_1.json",
    "i3_set1": "data_exp_2_1.json",
    "i3_set2": "data_exp_2_2.json",
    "i3_set2_5195b17": "data_exp_2_3.json",
    "i2r": "data_exp_3_1.json",
    "i2r_level2": "data_exp_3_2.json",
    "idea_generation": "data_exp_4_1.json",
}
PARTS = {"i2r": "data_exp_3_1_part_*.json", "i2r_level2": "data_exp_3_2_part_*.json"}

PINNED = ReleaseLayout(
    name=f"irllm-framework@{PINNED_COMMIT[:7]} data/",
    root="data",
    files=(
        ReleaseFile(FILES["ipi"], ("ipi",), IPI_COLUMNS),
        # the I3 few-shot examples always come from Set 1, so every I3 config reads data_exp_2_1.json too
        ReleaseFile(FILES["i3_set1"], ("i3_set1", "i3_set2", "i3_set2_5195b17"), I3_COLUMNS),
        ReleaseFile(FILES["i3_set2"], ("i3_set2",), I3_COLUMNS),
        ReleaseFile(FILES["i3_set2_5195b17"], ("i3_set2_5195b17",), I3_COLUMNS, optional=True,
                    note="deleted in 663dc9c, before the pin; `git show 5195b17:data/data_exp_2_3.json`"),
        ReleaseFile(FILES["i2r"], ("i2r",), I2R_COLUMNS, parts=PARTS["i2r"]),
        ReleaseFile(FILES["i2r_level2"], ("i2r_level2",), I2R_COLUMNS, parts=PARTS["i2r_level2"]),
        ReleaseFile(FILES["idea_generation"], ("idea_generation",), I3_COLUMNS),
    ),
    extra_files=("README.md", "README"),
)
