# A stand-in for SGI-Bench's wet-experiment step_1_get_answer.py (our own text, upstream's names).
output_requirements = """
TEST-WET: give the protocol between <answer> and </answer>, one block per step:
<answer>
a = <Do something>(
    x="1"
)
</answer>
"""
