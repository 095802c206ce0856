"""A stand-in for upstream's LACER scoring script, in its layout (our own text): sciprobe reads the module-level
SYSTEM_PROMPT literal with ast and never runs the file."""

import sys

SYSTEM_PROMPT = "TEST-LACER-SYSTEM: you compare two research papers."
SCORE_REGEX = None


def main():
    sys.exit("never executed by sciprobe")
