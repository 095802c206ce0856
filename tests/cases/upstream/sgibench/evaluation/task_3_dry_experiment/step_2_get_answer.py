# A stand-in for SGI-Bench's dry-experiment step_2_get_answer.py (our own text, upstream's names).
output_requirements = """
TEST-DRY: give the completed functions between <answer> and </answer>.
"""
