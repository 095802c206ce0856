"""The bundled SGI-Bench sample: a few items of each of the five hub datasets in their exact released schema
(shared/spec/sgibench.md §2), written for this project. Every question, answer, protocol, program and image is
invented here (images drawn with PIL); nothing is copied from the real datasets or the upstream repository.

    python -m sciprobe.benchmarks.sgibench.sample_writer sciprobe/benchmarks/sgibench/sample

writes ``<folder>/SGI-<Name>/data/test-00000-of-00001.parquet`` (the hub snapshot layout the source reader
reads) with the hub features of :func:`sciprobe.benchmarks.sgibench.synthetic.hub_features`: stringified Python
dicts in the idea fields, a float16 ``runtime``, a 0-based int32 ``answer`` and lists of PNG images. The dry
experiments use the standard library only, and their reference outputs are produced by running the reference
program on each unit test's data (``stderr + "\\n" + stdout``, stripped, as upstream stores them), so they match
on any Python 3.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

# ---------------------------------------------------------------- deep research
DEEP_RESEARCH = [
    {"idx": "SGI_DeepResearch_sample_0000", "discipline": "astronomy",
     "direction": "fast_radio_burst_detection_and_localization", "type": "Properties",
     "question": ("A fast radio burst is detected with an observed dispersion measure DM_obs = 520 pc cm^-3. The "
                  "Milky Way (disk and halo together) contributes 60 pc cm^-3 along this line of sight, and the host "
                  "galaxy contributes 50 pc cm^-3 in its rest frame. The host lies at redshift z = 0.25, and a "
                  "rest-frame contribution is observed divided by (1 + z). What dispersion measure, in pc cm^-3, is "
                  "left for the intergalactic medium? Round to the nearest integer and give the number only."),
     "steps": ["Step 1. Split the observed DM into Milky Way, intergalactic and host contributions.",
               "Step 2. Convert the host contribution to the observer frame: 50 / (1 + 0.25) = 40 pc cm^-3.",
               "Step 3. Subtract: 520 - 60 - 40 = 420 pc cm^-3."],
     "answer": "420"},
    {"idx": "SGI_DeepResearch_sample_0001", "discipline": "earth", "direction": "ocean_heat_content", "type": "Data",
     "question": ("An ocean layer 700 m thick covering 3.6e14 m^2 warms uniformly by 0.1 K. Take the seawater "
                  "density as 1025 kg m^-3 and the specific heat capacity as 3990 J kg^-1 K^-1. By how much does "
                  "the heat content of the layer change, in units of 10^22 J? Give two decimals, no units."),
     "steps": ["Step 1. Volume = 700 m x 3.6e14 m^2 = 2.52e17 m^3.",
               "Step 2. Mass = 2.52e17 m^3 x 1025 kg m^-3 = 2.583e20 kg.",
               "Step 3. Heat = 2.583e20 kg x 3990 J kg^-1 K^-1 x 0.1 K = 1.0306e23 J = 10.31 x 10^22 J."],
     "answer": "10.31"},
    {"idx": "SGI_DeepResearch_sample_0002", "discipline": "life", "direction": "strain_metabolic_reconstruction",
     "type": "Micro-experiments",
     "question": ("An overnight bacterial culture has an optical density OD600 of 0.8. You need 40 mL of fresh "
                  "culture at OD600 0.06 to start a growth curve. How many millilitres of the overnight culture do "
                  "you add? Give two decimals, no units."),
     "steps": ["Step 1. Dilution keeps the amount of cells: C1 V1 = C2 V2.",
               "Step 2. V1 = 0.06 x 40 mL / 0.8 = 3.00 mL."],
     "answer": "3.00"},
]

# ---------------------------------------------------------------- idea generation
_IDEA_PREAMBLE = ("You are a leading researcher in this field. From the context below, propose a novel and "
                  "detailed research method.")


def _idea_question(item: dict[str, Any]) -> str:
    def block(name: str, value: str) -> str:
        return f"## {name}\n{value}"

    import ast

    related = "\n".join(f"- {k}: {v}" for k, v in ast.literal_eval(item["related_work"]).items())
    existing = "\n".join(f"- {k}: {v}" for k, v in ast.literal_eval(item["existing_solutions"]).items())
    return "\n\n".join([_IDEA_PREAMBLE, block("RelatedWork", related), block("Challenges", item["challenge"]),
                        block("Limitation", item["limitation"]), block("Motivation", item["motivation"]),
                        block("TaskObjective", item["task_objective"]), block("ExistingSolutions", existing)])


IDEA_GENERATION = [
    {"idx": "SGI_IdeaGeneration_sample_0000", "discipline": "earth", "direction": "seismic_wave_detection",
     "related_work": str({
         "Template matching (2010s)": "cross-correlates continuous records with known events; misses new sources.",
         "Single-station deep pickers (2019)": "label P and S arrivals per station; ignore the array geometry."}),
     "challenge": "Small earthquakes are buried in noise and look different at every station.",
     "limitation": "Per-station pickers disagree, and association into events is done afterwards by heuristics.",
     "motivation": "A detector that looks at the whole array at once could use the moveout of a wave across "
                   "stations as evidence.",
     "task_objective": "Detect and locate small earthquakes in continuous records of a dense seismic array.",
     "existing_solutions": str({"STA/LTA triggers": "simple energy ratios; many false alarms.",
                                "Phase pickers + associators": "two stages whose errors compound."}),
     "keywords": ["array processing", "earthquake detection", "graph neural network", "phase association"],
     "core_idea": "Treat the array as a graph of stations and train one network that detects events and "
                  "predicts their location jointly from all waveforms.",
     "implementation_steps": str({"1": "Collect continuous records and a catalogue.",
                                  "2": "Build the station graph from distances.",
                                  "3": "Train the joint detection and location network.",
                                  "4": "Compare with pickers plus association on held-out months."}),
     "implementation_order": ["1-2", "2-3", "3-4"],
     "data": "One year of 100 Hz records from 60 stations, with an analyst catalogue.",
     "evaluation_metrics": str({"Detection recall": "share of catalogued events found",
                                "Location error": "epicentral distance to the catalogue in km"}),
     "expected_outcome": "More small events detected at the same false-alarm rate, located within a few km.",
     "related_work_test": str({"Beamforming detectors (2021)": "stack waveforms over trial locations; costly."})},
    {"idx": "SGI_IdeaGeneration_sample_0001", "discipline": "material", "direction": "nano_adsorption_materials",
     "related_work": str({
         "High-throughput screening (2018)": "ranks porous frameworks by simulated uptake; slow for large sets.",
         "Descriptor regression (2020)": "predicts uptake from pore size and surface area; misses chemistry."}),
     "challenge": "Adsorption depends on both pore geometry and the chemistry of the pore walls.",
     "limitation": "Geometric descriptors alone cannot tell apart frameworks with the same pores.",
     "motivation": "Learning from the atomic structure directly could capture both factors.",
     "task_objective": "Predict carbon dioxide uptake of porous frameworks at low pressure.",
     "existing_solutions": str({"Grand canonical Monte Carlo": "accurate but hours per structure.",
                                "Descriptor models": "fast but coarse."}),
     "keywords": ["metal-organic frameworks", "carbon capture", "equivariant networks"],
     "core_idea": "Train an equivariant network on simulated isotherms and use it to screen a large database.",
     "implementation_steps": str({"1": "Simulate uptake for a training set.", "2": "Train the network.",
                                  "3": "Screen the database.", "4": "Re-simulate the top candidates."}),
     "implementation_order": ["1-2", "2-3", "3-4"],
     "data": "Ten thousand frameworks with simulated uptake at 0.15 bar.",
     "evaluation_metrics": str({"MAE": "mean absolute error of uptake", "Top-100 recall": "best frameworks found"}),
     "expected_outcome": "Screening a hundred times faster with most of the best frameworks recovered.",
     "related_work_test": str({"Graph networks for porous materials (2022)": "message passing on crystal graphs."})},
]
for _item in IDEA_GENERATION:
    _item["question"] = _idea_question(_item)

# ---------------------------------------------------------------- dry experiments (standard library only)
_STUB = "    pass  # Please complete the function based on the context.\n"

_GLACIER_FUNCTION = (
    "def glacier_volume(area_km2, c=0.034, gamma=1.375):\n"
    '    """Volume-area scaling of a glacier.\n\n'
    "    Tag: [Numerical Calculation]\n\n"
    "    Args:\n        area_km2 (float): glacier area in km^2\n        c (float): scaling constant\n"
    "        gamma (float): scaling exponent\n    Returns:\n        float: volume in km^3\n"
    '    Examples:\n        >>> round(glacier_volume(1.0), 3)\n        0.034\n    """\n')
_GLACIER_BODY = "    return c * area_km2 ** gamma\n"
_GLACIER_MAIN = (
    "import json\n\n\n{function}\n\n"
    "def total_volume(areas):\n"
    '    """Tag: [Statistical Analysis]"""\n'
    "    return sum(glacier_volume(a) for a in areas)\n\n\n"
    'if __name__ == "__main__":\n'
    '    with open("data/glaciers.json") as handle:\n'
    "        areas = json.load(handle)\n"
    '    print(f"{{len(areas)}} glaciers")\n'
    '    print("[Final Output]")\n'
    '    print(f"{{total_volume(areas):.6f}}")\n')
_GLACIER_DATA = (
    "import json\nimport os\nimport random\n\n"
    'os.makedirs("data", exist_ok=True)\n'
    "rng = random.Random({seed})\n"
    "areas = [round(rng.lognormvariate(0.0, 1.2), 3) for _ in range({n})]\n"
    'with open("data/glaciers.json", "w") as handle:\n'
    "    json.dump(areas, handle)\n")

_SPIKE_FUNCTION = (
    "def firing_rates(spike_times, duration_s, n_bins):\n"
    '    """Firing rate of a neuron in equal time bins.\n\n'
    "    Tag: [Data Processing]\n\n"
    "    Args:\n        spike_times (list of float): spike times in seconds, in [0, duration_s)\n"
    "        duration_s (float): recording length in seconds\n        n_bins (int): number of bins\n"
    "    Returns:\n        list of float: spikes per second in each bin\n"
    '    Examples:\n        >>> firing_rates([0.1, 0.2, 1.5], 2.0, 2)\n        [2.0, 1.0]\n    """\n')
_SPIKE_BODY = (
    "    width = duration_s / n_bins\n"
    "    counts = [0] * n_bins\n"
    "    for t in spike_times:\n"
    "        counts[min(int(t // width), n_bins - 1)] += 1\n"
    "    return [c / width for c in counts]\n")
_SPIKE_MAIN = (
    "import json\nimport statistics\n\n\n{function}\n\n"
    'if __name__ == "__main__":\n'
    '    with open("data/spikes.json") as handle:\n'
    "        record = json.load(handle)\n"
    '    rates = firing_rates(record["spikes"], record["duration_s"], 10)\n'
    '    print("[Final Output]")\n'
    '    print(f"{{max(rates):.3f}} {{statistics.fmean(rates):.3f}}")\n')
_SPIKE_DATA = (
    "import json\nimport os\nimport random\n\n"
    'os.makedirs("data", exist_ok=True)\n'
    "rng = random.Random({seed})\n"
    "duration = 5.0\n"
    "spikes = sorted(round(rng.uniform(0.0, duration), 4) for _ in range({n}))\n"
    'with open("data/spikes.json", "w") as handle:\n'
    '    json.dump({{"duration_s": duration, "spikes": spikes}}, handle)\n')


def _dry_item(idx: str, discipline: str, direction: str, function_type: str, function: str, body: str,
              main: str, data: str, name: str, background: str, sizes: list[int]) -> dict[str, Any]:
    main_code = main.format(function=function + body)
    incomplete = main.format(function=function + _STUB)
    item: dict[str, Any] = {
        "idx": idx, "discipline": discipline, "direction": direction, "function_type": function_type,
        "data_code": data.format(seed=0, n=sizes[0]), "main_code": main_code, "incomplete_main_code": incomplete,
        "incomplete_functions": [name],
        "question": f"{background}\n\nData generation code:\n```python\n{data.format(seed=0, n=sizes[0])}```\n\n"
                    f"Main code with the functions to complete:\n```python\n{incomplete}```"}
    for i in range(5):
        item[f"unit_test_{i}_data"] = data.format(seed=i, n=sizes[i])
    return item


DRY_EXPERIMENT = [
    _dry_item("SGI_DryExperiment_sample_0000", "earth", "glacier_estimation", "Numerical Calculation",
              _GLACIER_FUNCTION, _GLACIER_BODY, _GLACIER_MAIN, _GLACIER_DATA, "glacier_volume",
              "Glacier volumes are rarely measured; volume-area scaling estimates a glacier's volume from its area "
              "as V = c * A^gamma. Complete the function so that the script prints the total volume of a regional "
              "glacier inventory.", [40, 25, 60, 10, 80]),
    _dry_item("SGI_DryExperiment_sample_0001", "neuroscience", "neural_activity_and_behavior_prediction",
              "Data Processing", _SPIKE_FUNCTION, _SPIKE_BODY, _SPIKE_MAIN, _SPIKE_DATA, "firing_rates",
              "Spike trains recorded from one neuron are summarised by their firing rate over time. Complete the "
              "function that bins the spike times so that the script prints the peak and the mean rate.",
              [120, 45, 300, 80, 200]),
]

# ---------------------------------------------------------------- wet experiments
_WET_POOL = (
    "<Culture cells>(cell_line, medium)\nArgs:\n    cell_line: the cells to grow\n    medium: growth medium\n"
    "Returns:\n    culture: growing cells\n\n"
    "<Treat cells>(culture, compound, concentration)\nArgs:\n    culture: cells to treat\n"
    "    compound: the substance added\n    concentration: final concentration\n"
    "Returns:\n    treated: treated cells\n\n"
    "<Extract RNA>(cells, kit)\nArgs:\n    cells: cells to lyse\n    kit: extraction kit\n"
    "Returns:\n    rna: total RNA\n\n"
    "<Measure expression>(rna, gene, method)\nArgs:\n    rna: template RNA\n    gene: target gene\n"
    "    method: quantification method\nReturns:\n    expression: relative expression\n\n"
    "<Stain nuclei>(cells, dye)\nArgs:\n    cells: fixed cells\n    dye: nuclear dye\n"
    "Returns:\n    stained: stained cells\n")
_WET_ANSWER = (
    "culture = <Culture cells>(\n    cell_line=\"HeLa\",\n    medium=\"DMEM with 10% serum\"\n)\n"
    "treated = <Treat cells>(\n    culture=culture,\n    compound=\"heat-shock inducer\",\n"
    "    concentration=\"5 uM\"\n)\n"
    "rna = <Extract RNA>(\n    cells=treated,\n    kit=\"column-based kit\"\n)\n"
    "expression = <Measure expression>(\n    rna=rna,\n    gene=\"HSPA1A\",\n    method=\"RT-qPCR\"\n)")
_FILM_POOL = (
    "<Clean substrate>(substrate, solvent)\nArgs:\n    substrate: glass or silicon slide\n    solvent: cleaning "
    "solvent\nReturns:\n    clean_substrate: cleaned slide\n\n"
    "<Prepare solution>(polymer, solvent, concentration)\nArgs:\n    polymer: polymer powder\n    solvent: solvent\n"
    "    concentration: mass per volume\nReturns:\n    solution: polymer solution\n\n"
    "<Spin coat film>(substrate, solution, speed)\nArgs:\n    substrate: slide\n    solution: polymer solution\n"
    "    speed: rotation speed\nReturns:\n    film: coated slide\n\n"
    "<Dope film>(film, dopant, time)\nArgs:\n    film: polymer film\n    dopant: dopant solution\n    time: immersion "
    "time\nReturns:\n    doped_film: doped film\n\n"
    "<Measure Seebeck coefficient>(sample, temperature_difference)\nArgs:\n    sample: film\n"
    "    temperature_difference: applied gradient\nReturns:\n    seebeck: Seebeck coefficient\n\n"
    "<Measure conductivity>(sample, method)\nArgs:\n    sample: film\n    method: four-probe or van der Pauw\n"
    "Returns:\n    conductivity: electrical conductivity\n")
_FILM_ANSWER = (
    "clean = <Clean substrate>(\n    substrate=\"glass slide\",\n    solvent=\"isopropanol\"\n)\n"
    "solution = <Prepare solution>(\n    polymer=\"conjugated polymer\",\n    solvent=\"chlorobenzene\",\n"
    "    concentration=\"10 mg/mL\"\n)\n"
    "film = <Spin coat film>(\n    substrate=clean,\n    solution=solution,\n    speed=\"2000 rpm\"\n)\n"
    "doped = <Dope film>(\n    film=film,\n    dopant=\"FeCl3 in nitromethane\",\n    time=\"10 min\"\n)\n"
    "conductivity = <Measure conductivity>(\n    sample=doped,\n    method=\"four-probe\"\n)\n"
    "seebeck = <Measure Seebeck coefficient>(\n    sample=doped,\n    temperature_difference=\"5 K\"\n)")


def _wet_question(direction: str, pool: str) -> str:
    return ("Design the experimental process for the research direction given in <research direction> and "
            "</research direction> by arranging actions from the action pool given in <action> and </action>. "
            f"Give every step its parameters.\n\n<research direction>{direction}</research direction>\n\n"
            f"<action>\n{pool}</action>")


WET_EXPERIMENT = [
    {"idx": "SGI_WetExperiment_sample_0000", "discipline": "life", "direction": "disease_biomarker_discovery",
     "question": _wet_question("Test whether a heat-shock inducer raises the expression of a chaperone gene in "
                               "cultured human cells.", _WET_POOL), "action_pool": _WET_POOL, "answer": _WET_ANSWER},
    {"idx": "SGI_WetExperiment_sample_0001", "discipline": "material", "direction": "polymer_thermoelectric",
     "question": _wet_question("Make a doped conjugated-polymer film and characterise its thermoelectric "
                               "properties.", _FILM_POOL), "action_pool": _FILM_POOL, "answer": _FILM_ANSWER},
]

# ---------------------------------------------------------------- experimental reasoning (images drawn here)
_COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189)]


def _bar_chart(values: list[float], size: tuple[int, int] = (96, 64)) -> bytes:
    from PIL import Image, ImageDraw

    width, height = size
    img = Image.new("RGB", size, (255, 255, 255))
    draw = ImageDraw.Draw(img)
    draw.line([(4, height - 4), (width - 2, height - 4)], fill=(0, 0, 0))
    draw.line([(4, 2), (4, height - 4)], fill=(0, 0, 0))
    bar = (width - 12) // len(values)
    top = max(values)
    for i, v in enumerate(values):
        x0 = 8 + i * bar
        y0 = height - 4 - int((height - 10) * v / top)
        draw.rectangle([x0, y0, x0 + bar - 3, height - 5], fill=_COLOURS[i % len(_COLOURS)])
    return _png(img)


def _curve(points: list[float], size: tuple[int, int] = (96, 64)) -> bytes:
    from PIL import Image, ImageDraw

    width, height = size
    img = Image.new("RGB", size, (255, 255, 255))
    draw = ImageDraw.Draw(img)
    draw.line([(4, height - 4), (width - 2, height - 4)], fill=(0, 0, 0))
    draw.line([(4, 2), (4, height - 4)], fill=(0, 0, 0))
    top = max(points)
    step = (width - 10) / (len(points) - 1)
    xy = [(6 + i * step, height - 5 - (height - 12) * p / top) for i, p in enumerate(points)]
    draw.line(xy, fill=(214, 39, 40), width=2)
    return _png(img)


def _png(img: Any) -> bytes:
    buffer = io.BytesIO()
    img.save(buffer, format="PNG")
    return buffer.getvalue()


def _reasoning_items() -> list[dict[str, Any]]:
    conductivity = [120.0, 340.0, 210.0, 90.0]
    growth = [[0.05, 0.08, 0.2, 0.5, 0.9, 1.1, 1.15], [0.05, 0.06, 0.09, 0.15, 0.3, 0.55, 0.8]]
    return [
        {"idx": "SGI_Reasoning_sample_0000", "discipline": "material", "direction": "chloride_solid_state_electrolyte",
         "image_type": "Visualization", "type": "Comparative Reasoning",
         "question": ("The first image shows the ionic conductivity measured for four electrolyte samples, "
                      "left to right: S1, S2, S3, S4. Which sample conducts best?"),
         "images": [{"bytes": _bar_chart(conductivity), "path": "conductivity.png"}],
         "options": ["S1", "S2", "S3", "S4", "S1 and S3 equally", "S2 and S4 equally", "All equal",
                     "Cannot be told from the figure", "S3, after S2", "None of them"],
         "steps": ["Compare the bar heights.", "The second bar (S2) is the tallest."], "step_images": [],
         "answer": 1},
        {"idx": "SGI_Reasoning_sample_0001", "discipline": "life", "direction": "strain_metabolic_reconstruction",
         "image_type": "Experiment", "type": "Causal Reasoning",
         "question": ("The first image is the growth curve (optical density over time) of a wild-type strain, the "
                      "second image the same measurement for a mutant lacking one metabolic enzyme. What does the "
                      "comparison suggest?"),
         "images": [{"bytes": _curve(growth[0]), "path": "wild_type.png"},
                    {"bytes": _curve(growth[1]), "path": "mutant.png"}],
         "options": ["The mutant grows faster", "The mutant has a longer lag and grows more slowly",
                     "The mutant does not grow at all", "Both grow identically", "The wild type dies earlier",
                     "The mutant reaches a higher final density", "The curves show no growth",
                     "The enzyme inhibits growth", "The measurement failed", "The wild type has a longer lag"],
         "steps": ["", "Compare when each curve starts to rise and how steeply.",
                   "The mutant rises later and more slowly, so the enzyme supports growth."],
         "step_images": [{"bytes": _curve([a - b + 0.05 for a, b in zip(*growth)]), "path": None}],
         "answer": 1},
        {"idx": "SGI_Reasoning_sample_0002", "discipline": "astronomy",
         "direction": "real_time_optical_transient_survey",
         "image_type": "Observation", "type": "Signal Perception",
         "question": ("The first image shows the light curve of a transient (brightness over time, arbitrary "
                      "units). At which of the seven observations is it brightest?"),
         "images": [{"bytes": _curve([0.2, 0.6, 1.0, 0.8, 0.5, 0.3, 0.2]), "path": "light_curve.png"}],
         "options": [f"Observation {k}" for k in range(1, 8)] + ["Before the first", "After the last", "Constant"],
         "steps": ["Find the highest point of the curve.", "It is the third observation."], "step_images": [],
         "answer": 2},
    ]


# ---------------------------------------------------------------- writing
def run_reference(item: dict[str, Any], python: str = sys.executable, timeout_s: float = 60.0) -> list[str]:
    """The five reference outputs of a dry item: ``stderr + "\\n" + stdout``, stripped (upstream's format)."""
    outputs = []
    for i in range(5):
        with tempfile.TemporaryDirectory() as work:
            for name, code in (("data_en.py", item[f"unit_test_{i}_data"]), ("main_en.py", item["main_code"])):
                Path(work, name).write_text(code, encoding="utf-8")
            for script in ("data_en.py", "main_en.py"):
                done = subprocess.run([python, script], cwd=work, capture_output=True, text=True, timeout=timeout_s,
                                      check=False)
                if done.returncode != 0:
                    raise RuntimeError(f"{item['idx']} test {i}: {script} failed: {done.stderr.strip()}")
            outputs.append(f"{done.stderr}\n{done.stdout}".strip())
    return outputs


def records() -> dict[str, list[dict[str, Any]]]:
    """The sample's records per config, in the released hub schema."""
    dry = []
    for item in DRY_EXPERIMENT:
        item = dict(item)
        for i, output in enumerate(run_reference(item)):
            item[f"unit_test_{i}_output"] = output
        item["runtime"] = 0.05
        dry.append(item)
    return {"deep_research": [dict(r) for r in DEEP_RESEARCH], "idea_generation": [dict(r) for r in IDEA_GENERATION],
            "dry_experiment": dry, "wet_experiment": [dict(r) for r in WET_EXPERIMENT],
            "experimental_reasoning": _reasoning_items()}


def write_sample(folder: str | Path) -> Path:
    """Write the five datasets in the hub snapshot layout; returns ``folder``."""
    import datasets

    from sciprobe.benchmarks.sgibench.source import HUB_DATASETS
    from sciprobe.benchmarks.sgibench.synthetic import hub_features

    folder = Path(folder)
    for config, rows in records().items():
        out = folder / HUB_DATASETS[config] / "data"
        out.mkdir(parents=True, exist_ok=True)
        features = hub_features(config)
        ordered = [{name: row[name] for name in features} for row in rows]  # the hub's column order
        ds = datasets.Dataset.from_list(ordered, features=features)
        ds.to_parquet(str(out / "test-00000-of-00001.parquet"))
    return folder


if __name__ == "__main__":
    print(write_sample(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent / "sample"))
