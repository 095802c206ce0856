"""``sciprobe lacer ...``: the LACER judge tools (a PreScience command hook)."""

from __future__ import annotations

import argparse


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    from sciprobe.benchmarks.prescience import lacer_lattice

    sub = parser.add_subparsers(dest="lacer_command", required=True, metavar="ACTION")
    lacer_lattice.configure_parser(sub.add_parser(
        "build-lattice", help="construct exemplar lattices with any LLM (anchor -> target interpolation)"))
    return parser


def cmd(args: argparse.Namespace) -> int:
    from sciprobe.benchmarks.prescience import lacer_lattice

    return lacer_lattice.cmd(args)
