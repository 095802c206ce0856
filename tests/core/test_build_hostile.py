"""Bad release files never pass silently (issue 18, "Builders and CLI"): every hostile case under
``tests/cases/build_hostile/`` ends ``sciprobe build`` with exit 2, one line on stderr and nothing written; dates
are parsed strictly and compared as dates; a folder named with glob characters builds and loads."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sciprobe.cli.commands import main
from sciprobe.core.errors import SciprobeError
from sciprobe.data.release_files import MAX_JSON_DEPTH, check_depth, parse_release_date, release_year

CASES_DIR = Path(__file__).resolve().parents[1] / "cases" / "build_hostile"
CASES = json.loads((CASES_DIR / "cases.json").read_text())
TYPES = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
         "list<string>": pa.list_(pa.string())}


def materialise(case: dict, dest: Path) -> Path:
    """The case's release folder, with ``*.parquet.json`` written as Parquet and placeholders expanded."""
    shutil.copytree(CASES_DIR / case["name"], dest)
    for path in sorted(dest.rglob("*")):
        if not path.is_file():
            continue
        text = path.read_text()
        for placeholder, depth in case.get("expand", {}).items():
            text = text.replace(json.dumps(placeholder), "[" * depth + "]" * depth)
        if path.name.endswith(".parquet.json"):
            spec = json.loads(text)
            schema = pa.schema({k: TYPES[v] for k, v in spec["schema"].items()}) if "schema" in spec else None
            table = pa.Table.from_pylist(spec["rows"], schema=schema)
            pq.write_table(table, path.with_name(path.name.removesuffix(".json")))
            path.unlink()
        else:
            path.write_text(text)
    return dest


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_hostile_release_is_refused_with_one_line(case, tmp_path, capsys):
    source = materialise(case, tmp_path / "release")
    out = tmp_path / "out"
    code = main(["build", case["benchmark"], "--source", str(source), "--out", str(out), "--config", case["config"],
                 *case.get("args", [])])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert case["error"] in err, err
    assert "cutoff" not in err or "--cutoff" in case.get("args", [])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]  # no output, no staging folder


def test_every_class_has_cases_for_every_benchmark():
    covered: dict[str, set[str]] = {}
    for case in CASES:
        covered.setdefault(case["class"], set()).add(case["benchmark"])
    every = {"idrbench", "scitaste", "sgibench", "prescience"}
    assert covered == {"duplicate id": every, "date": every - {"sgibench"}, "nesting": every - {"sgibench"},
                       "empty file": every, "wrong type": every}  # SGI-Bench: Parquet only, and no dates


# ---------------------------------------------------------------- the date parser

@pytest.mark.parametrize("value, iso, precision", [
    ("2025-01-08", "2025-01-08", "day"), ("2025-01", "2025-01-01", "month"), ("2025", "2025-01-01", "year"),
    ("2024-02-29", "2024-02-29", "day"),
])
def test_release_dates_in_the_declared_formats(value, iso, precision):
    parsed = parse_release_date(value, "f record 0")
    assert (parsed.iso, parsed.precision) == (iso, precision)


@pytest.mark.parametrize("value", ["2025/01/08", "Jan 8 2025", "2025-13-45", "2023-02-29", "2025-1-8", "08-01-2025",
                                   "2025-01-08 ", "２０２５-01-08", 20250108, 2025.0, True, ["2025-01-08"]])
def test_other_dates_are_refused_with_the_value(value):
    with pytest.raises(SciprobeError, match=r"^f record 0: date .* is not") as info:
        parse_release_date(value, "f record 0")
    assert "\n" not in str(info.value)


def test_declared_precision_limits_what_is_accepted():
    assert parse_release_date(None, "x") is None and parse_release_date("", "x") is None
    with pytest.raises(SciprobeError, match="is not YYYY-MM-DD$"):
        parse_release_date("2025-01", "x", ("day",))
    assert parse_release_date("2025-02", "x", ("day", "month")).end == dt.date(2025, 2, 28)
    assert release_year(2021, "x").iso == "2021-01-01"
    for bad in ("2021", 2021.0, True, 12):
        with pytest.raises(SciprobeError, match="year"):
            release_year(bad, "x")


@pytest.mark.parametrize("value", ["2025-01-08", "2024-02-29", "2000-02-29", "0001-01-01", "9999-12-31",
                                   "2025-02-30", "2023-02-29", "1900-02-29", "0000-01-01", "2025-13-01", "2025-00-10",
                                   "2025-01-00", "2025-1-8", " 2025-01-8", "2025-01-08 ", "2025/01/08", "2025-01-3:",
                                   "abcd-ef-gh", "２０２５-01-08", "2025-01", "2025"])
def test_the_column_parser_agrees_with_the_one_date_parser(value):
    """Stored date columns are checked in Arrow/numpy; they accept exactly the days the scalar parser accepts."""
    from sciprobe.data.cutoffs import parsed_date_column

    column = pa.array(["2020-01-01", value, None]).slice(1)
    try:
        expected = parse_release_date(value, "f", ("day",))
    except SciprobeError as exc:
        with pytest.raises(SciprobeError) as info:
            parsed_date_column(column, "f")
        assert str(info.value) == str(exc)
    else:
        days = parsed_date_column(column, "f")
        assert str(days[0]) == expected.iso and str(days[1]) == "NaT"


def test_nesting_limit_is_checked_without_recursion():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(SciprobeError, match=f"deeper than {MAX_JSON_DEPTH}"):
        check_depth({"a": deep}, "x")
    check_depth({"a": [[["fine"]]]}, "x")


# ---------------------------------------------------------------- cutoffs on parsed dates

def _claims(tmp_path: Path, dates: list) -> Path:
    """An IDRBench IPI release whose items carry the given dates (the five few-shot ids are present)."""
    from sciprobe.benchmarks.idrbench.source import IPI_FEWSHOT_IDS

    ids = [*IPI_FEWSHOT_IDS, *(f"2501.{i:05d}" for i in range(len(dates)))]
    dates = ["2024-11-01"] * len(IPI_FEWSHOT_IDS) + dates
    records = [{"id": i, "title": f"t{i}", "abstract": "a", "categories": ["cs.CL"], "date": d, "y_true": True}
               for i, d in zip(ids, dates)]
    src = tmp_path / "src"
    src.mkdir()
    (src / "data_exp_1.json").write_text(json.dumps(records))
    return src


def test_cutoff_compares_parsed_dates_of_every_precision(tmp_path, capsys):
    import datasets

    src = _claims(tmp_path, ["2025-02-02", "2025-02", "2025-03", "2025", "2026", "2025-02-01", ""])
    assert main(["build", "idrbench", "--source", str(src), "--out", str(tmp_path / "out"), "--config", "ipi",
                 "--cutoff", "2025-02-01"]) == 0
    ipi = datasets.load_dataset(str(tmp_path / "out"), "ipi", split="test")
    kept = dict(zip(ipi["date"], ipi["date_precision"]))
    # a period is kept only when all of it is after the cutoff; the undated item (month of its arXiv id, Jan 2025)
    # and the cutoff day itself are dropped
    assert kept == {"2025-02-02": "day", "2025-03-01": "month", "2026-01-01": "year"}
    assert "test=3" in capsys.readouterr().out


def test_load_refuses_a_dataset_whose_dates_are_not_iso(tmp_path):
    import datasets

    from sciprobe.data.cutoffs import filter_dataset

    ds = datasets.Dataset.from_dict({"id": ["a", "b"], "date": ["2025-03-01", "2025/01/08"]})
    with pytest.raises(SciprobeError, match="date '2025/01/08' is not YYYY-MM-DD"):
        filter_dataset(ds, dt.date(2025, 2, 1), "someone's dataset")
    ints = datasets.Dataset.from_dict({"id": ["a"], "date": [20250301]})
    with pytest.raises(SciprobeError, match="holds int64 values"):
        filter_dataset(ints, dt.date(2025, 2, 1), "someone's dataset")
    ok = datasets.Dataset.from_dict({"id": ["a", "b", "c"], "date": ["2025-03-01", None, "2025-02-01"]})
    assert filter_dataset(ok, dt.date(2025, 2, 1))["id"] == ["a"]


# ---------------------------------------------------------------- glob characters in paths

def test_folders_named_with_glob_characters_build_and_load(tmp_path, capsys):
    from sciprobe.core.registry import get_benchmark

    release = tmp_path / "release[1]"
    shutil.copytree(get_benchmark("idrbench").sample_source, release)
    data = tmp_path / "built[1]*?" / "data"
    assert main(["build", "idrbench", "--source", str(release), "--out", str(data), "--config", "ipi"]) == 0
    from sciprobe.benchmarks.idrbench.source import normalize_id

    records = json.loads((release / "data_exp_1.json").read_text())
    preds = tmp_path / "preds[1].jsonl"
    preds.write_text("".join(json.dumps({"id": normalize_id(r["id"]), "prediction": "yes" if r["y_true"] else "no"})
                             + "\n" for r in records))
    capsys.readouterr()
    code = main(["score", "idrbench:ipi", "--predictions", str(preds), "--data", str(data), "--output-dir",
                 str(tmp_path / "o[1]")])
    assert code == 0, capsys.readouterr().err
    results = json.loads(next((tmp_path / "o[1]" / "results").rglob("results_*.json")).read_text())
    assert results["results"]["idrbench:ipi|0"]["macro_f1"] == 1.0


def test_empty_test_split_is_not_blamed_on_a_cutoff(tmp_path):
    import datasets

    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.task_data import load_task_data

    folder = tmp_path / "data"
    datasets.Dataset.from_dict({"id": [], "date": []}, features=datasets.Features(
        {"id": datasets.Value("string"), "date": datasets.Value("string")})).to_parquet(str(folder / "ipi" /
                                                                                            "test.parquet"))
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: ipi\n  data_files:\n  - split: test\n"
                                      "    path: ipi/test*\n---\n")
    bench = get_benchmark("idrbench")
    with pytest.raises(SciprobeError) as info:
        load_task_data(bench, bench.task("ipi"), str(folder))
    assert "cutoff" not in str(info.value) and "'ipi'" in str(info.value) and "\n" not in str(info.value)


def test_a_dataset_with_a_repeated_id_is_refused_when_loaded(tmp_path):
    """A dataset not built by sciprobe (a hub id, someone's folder) is checked too: 17 rows from 16 items never
    reach a run."""
    import datasets

    from sciprobe.core.registry import get_benchmark
    from sciprobe.data.task_data import load_task_data

    folder = tmp_path / "data"
    datasets.Dataset.from_dict({"id": ["a", "b", "a"], "date": ["2025-03-01"] * 3}).to_parquet(
        str(folder / "ipi" / "test.parquet"))
    (folder / "README.md").write_text("---\nconfigs:\n- config_name: ipi\n  data_files:\n  - split: test\n"
                                      "    path: ipi/test*\n---\n")
    bench = get_benchmark("idrbench")
    with pytest.raises(SciprobeError, match="duplicate id 'a' in .* config 'ipi'"):
        load_task_data(bench, bench.task("ipi"), str(folder))
