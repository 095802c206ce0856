"""Small synthetic SGI-Bench sources in the released hub schemas (shared/spec/sgibench.md §2), for tests and
demos. Every text is invented here; images are drawn with PIL. Nothing is copied from the real datasets.

``write_synthetic_source(folder, n=3)`` writes ``<folder>/SGI-*/data/test-00000-of-00001.parquet`` for the five
datasets, with the quirks the reader must handle: stringified Python dicts (with single quotes), a float16
``runtime``, 0-based reasoning answers, several images per item, an item needing external files.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

DISCIPLINES = ("astronomy", "chemistry", "earth", "energy", "information", "life", "material", "mathematics",
               "neuroscience", "physics")

WET_ANSWER = (
    "sample = <Collect soil sample>(\n"
    '    site="plot {i}",\n'
    '    depth="10 cm"\n'
    ")\n"
    "extract = <Extract DNA>(\n"
    "    material=sample,\n"
    '    kit="column kit"\n'
    ")\n"
    "reads = <Sequence DNA>(\n"
    "    dna=extract,\n"
    '    platform="short-read"\n'
    ")"
)
ACTION_POOL = (
    "<Collect soil sample>(site, depth)\nArgs:\n    site: where\n    depth: how deep\nReturns:\n    sample\n\n"
    "<Extract DNA>(material, kit)\nArgs:\n    material: input\n    kit: kit name\nReturns:\n    dna\n\n"
    "<Sequence DNA>(dna, platform)\nArgs:\n    dna: extracted DNA\n    platform: sequencer\nReturns:\n    reads\n\n"
    "<Dry sample>(sample, temperature)\nArgs:\n    sample: input\n    temperature: degrees\nReturns:\n    dried\n"
)
MAIN_CODE = (
    "import json\n\n\n"
    "def scale(values, factor):\n"
    '    """Tag: [Numerical Calculation]"""\n'
    "    return [v * factor for v in values]\n\n\n"
    "def total(values):\n"
    '    """Tag: [Statistical Analysis]"""\n'
    "    return sum(values)\n\n\n"
    'if __name__ == "__main__":\n'
    '    data = json.load(open("data/values.json"))\n'
    '    print("[Final Output]")\n'
    "    print(total(scale(data, 2)))\n"
)
STUB = "    pass  # Please complete the function based on the context.\n"


def _png(seed: int, size: int = 32) -> bytes:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (size, size), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    draw.rectangle([seed % 8, seed % 5, size - 1 - seed % 7, size - 1 - seed % 3], outline=(seed * 40 % 256, 0, 128))
    draw.line([0, 0, size - 1, (seed * 7) % size], fill=(0, 128, 0))
    buffer = io.BytesIO()
    img.save(buffer, format="PNG")
    return buffer.getvalue()


def deep_research_records(n: int) -> list[dict[str, Any]]:
    return [{"idx": f"SGI_DeepResearch_{i:04d}",
             "question": f"A synthetic survey reports {10 + i} events per year over {i + 2} years. How many events "
                         "were reported in total? Give an integer without units.",
             "steps": [f"Step 1. Find the synthetic survey paper {i}.", f"Step 2. Multiply {10 + i} by {i + 2}."],
             "answer": str((10 + i) * (i + 2)), "discipline": DISCIPLINES[i % 10],
             "direction": "synthetic_direction", "type": ("Data", "Properties", "Micro-experiments",
                                                          "Macro-experiments")[i % 4]} for i in range(n)]


def idea_records(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        out.append({
            "idx": f"SGI_IdeaGeneration_{i:04d}",
            "question": f"You are a leading researcher. Propose a detailed method for synthetic problem {i}.",
            "related_work": str({"Smith (2020)": "used method A; it is slow.", "Lee (2022)": "used method B."}),
            "challenge": "The signal is weak.", "limitation": "Existing methods ignore noise.",
            "motivation": "Better noise handling.", "task_objective": "Recover the signal.",
            "existing_solutions": str({"Method A": "filters the data.", "Method B": "averages runs."}),
            "keywords": ["denoising", "signal recovery", "robust estimation"],
            "core_idea": "Combine a learned denoiser with robust estimation to recover weak signals.",
            "implementation_steps": str({"1": "Collect data.", "2": "Train the denoiser.", "3": "Estimate robustly."}),
            "implementation_order": ["1-2", "2-3"],
            "data": "Synthetic traces, 10k samples.",
            "evaluation_metrics": str({"SNR": "signal-to-noise ratio", "MAE": "mean absolute error"}),
            "expected_outcome": "Higher SNR than the baselines.",
            "related_work_test": str({"Kim (2023)": "a transformer denoiser."}),
            "discipline": DISCIPLINES[i % 10], "direction": "synthetic_direction"})
    if n > 1:  # a malformed dict literal the reader must survive
        out[1]["related_work_test"] = "{'Kim (2023)': 'unterminated"
    return out


def dry_records(n: int) -> list[dict[str, Any]]:
    incomplete = MAIN_CODE.replace("    return [v * factor for v in values]\n", STUB)
    out = []
    for i in range(n):
        idx = f"SGI_DryExperiment_{i:04d}" if i else "SGI_DryExperiment_0200"
        row = {"idx": idx, "question": f"Background.\n\n{incomplete}", "data_code": "# data generation",
               "main_code": MAIN_CODE, "incomplete_main_code": incomplete, "incomplete_functions": ["scale"],
               "function_type": "Numerical Calculation", "runtime": 1.25 + i, "discipline": DISCIPLINES[i % 10],
               "direction": "synthetic_direction"}
        for t in range(5):
            values = list(range(t + 1))
            row[f"unit_test_{t}_data"] = ("import json, os\nos.makedirs('data', exist_ok=True)\n"
                                          f"json.dump({values}, open('data/values.json', 'w'))\n")
            row[f"unit_test_{t}_output"] = f"[Final Output]\n{2 * sum(values)}"
        out.append(row)
    return out


def wet_records(n: int) -> list[dict[str, Any]]:
    return [{"idx": f"SGI_WetExperiment_{i:04d}",
             "question": "Design an experimental process for the research direction in <research direction>"
                         f"soil microbiome {i}</research direction> using the actions in "
                         f"<action>{ACTION_POOL}</action>.",
             "action_pool": ACTION_POOL, "answer": WET_ANSWER.format(i=i),
             "discipline": ("life", "material", "physics")[i % 3], "direction": "soil_microbiome"} for i in range(n)]


def reasoning_records(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        images = [{"bytes": _png(i * 3 + k), "path": f"{i:04d}_{k}.png"} for k in range(2 + i % 2)]
        out.append({"idx": f"SGI_Reasoning_{i:04d}",
                    "question": "Which panel shows the larger rectangle, judging from the first image?",
                    "images": images, "options": [f"Option {chr(65 + k)}" for k in range(10)],
                    "steps": ["", "Compare the rectangles.", "The first is larger."],
                    "step_images": [{"bytes": _png(100 + i), "path": None}] if i % 2 else [],
                    "answer": i % 10, "image_type": "Visualization", "discipline": DISCIPLINES[i % 10],
                    "direction": "synthetic_direction", "type": "Comparative Reasoning"})
    return out


def hub_features(config: str):
    """The released hub schema of one dataset (spec §2)."""
    from datasets import Features, Image, List, Value

    s = Value("string")
    if config == "deep_research":
        return Features({"idx": s, "question": s, "steps": List(s), "answer": s, "discipline": s, "direction": s,
                         "type": s})
    if config == "idea_generation":
        names = ("idx", "question", "related_work", "challenge", "limitation", "motivation", "task_objective",
                 "existing_solutions", "keywords", "core_idea", "implementation_steps", "implementation_order",
                 "data", "evaluation_metrics", "expected_outcome", "related_work_test", "discipline", "direction")
        return Features({k: List(s) if k in ("keywords", "implementation_order") else s for k in names})
    if config == "dry_experiment":
        tests = {f"unit_test_{i}_{k}": s for i in range(5) for k in ("data", "output")}
        return Features({"idx": s, "question": s, "data_code": s, "main_code": s, "incomplete_main_code": s,
                         "incomplete_functions": List(s), **tests, "function_type": s, "runtime": Value("float16"),
                         "discipline": s, "direction": s})
    if config == "wet_experiment":
        return Features({"idx": s, "question": s, "action_pool": s, "answer": s, "discipline": s, "direction": s})
    return Features({"idx": s, "question": s, "images": List(Image()), "options": List(s), "steps": List(s),
                     "step_images": List(Image()), "answer": Value("int32"), "image_type": s, "discipline": s,
                     "direction": s, "type": s})


RECORDS = {"deep_research": deep_research_records, "idea_generation": idea_records, "dry_experiment": dry_records,
           "wet_experiment": wet_records, "experimental_reasoning": reasoning_records}


def write_synthetic_source(folder: str | Path, n: int = 3) -> Path:
    """Write the five synthetic datasets (``n`` items each) in the hub layout; returns ``folder``."""
    import datasets

    from sciprobe.benchmarks.sgibench.source import HUB_DATASETS

    folder = Path(folder)
    for config, make in RECORDS.items():
        out = folder / HUB_DATASETS[config] / "data"
        out.mkdir(parents=True, exist_ok=True)
        ds = datasets.Dataset.from_list(make(n), features=hub_features(config))
        ds.to_parquet(str(out / "test-00000-of-00001.parquet"))
    return folder
