# A stand-in for SGI-Bench's step_1_get_answer.py, written for sciprobe's tests: the module-level name upstream
# appends to the question, with our own text. sciprobe reads it with ast and never executes it.
import sys
from datasets import load_dataset

dataset = load_dataset("never/loaded")
output_requirements = """
TEST-DR: think, then put the final answer between <answer> and </answer>.
<answer>0.5</answer>
"""
