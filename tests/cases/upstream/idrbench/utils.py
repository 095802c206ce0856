# A stand-in for irllm-framework's utils.py, written for sciprobe's tests: the same module-level names and
# %-placeholders as upstream, with our own text. sciprobe reads it with ast and never executes it.
import re

sys_prompt = "TEST-SYSTEM: you judge research ideas."

sys_prompt_critical = "TEST-SYSTEM-CRITICAL: you judge research ideas and say No when unsure."


def helper_that_is_never_run():
    raise RuntimeError("upstream files are read, not executed")


prompt_exp_1 = """
TEST-IPI-0SHOT
Paper title: %s;
Paper abstract: %s;
Your verdict: {Yes or No}
Confidence score: {0-100}
Subject: {a list}
"""

prompt_exp_1_fewshot = """
TEST-IPI-5SHOT (the examples live in this template)
Paper title: %s;
Paper abstract: %s;
Your verdict: {Yes or No}
Confidence score: {0-100}
Subject: {a list}
"""

prompt_exp_2 = """
TEST-I3-0SHOT
Paper in Discipline 1:
%s

Paper in Discipline 2:
%s
Your verdict: {Yes or No}
Your reason: {why}
Confidence score: {0-100}
"""

prompt_exp_2_fewshot = """
TEST-I3-3SHOT
%s
---
%s
Your verdict: {Yes or No}
Your reason: {why}
Confidence score: {0-100}
"""

prompt_exp_3 = """
TEST-I2R
Main paper title: %s;
Main paper abstract: %s;

Paper 1 title: %s;
Paper 1 abstract: %s;

Paper 2 title: %s;
Paper 2 abstract: %s;
Your choice: {Paper 1 or Paper 2}
Confidence score: {0-100}
"""

prompt_exp_1 = prompt_exp_1  # a later assignment of the same name wins, as when Python runs the file
