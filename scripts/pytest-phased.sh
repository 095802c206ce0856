#!/usr/bin/env bash
# pytest on one worker per core (pytest-xdist), then, alone, the tests marked `serial`: they add a benchmark to
# the source tree, which every other test reads (the registry, the task listings). Arguments go to both runs.
# SCIPROBE_TEST_WORKERS sets the number of workers; 0 runs everything in one process, in one go.
set -uo pipefail
cd "$(dirname "$0")/.."
workers="${SCIPROBE_TEST_WORKERS:-auto}"
if [ "$workers" = 0 ]; then
  exec .venv/bin/python -m pytest "$@"
fi
SCIPROBE_TEST_PHASE=parallel .venv/bin/python -m pytest -n "$workers" --dist loadgroup "$@"
parallel=$?
case $parallel in 0|1|5) ;; *) exit "$parallel" ;; esac  # interrupted (2), internal or usage error: stop here
echo "== the serial tests (they change the source tree), alone"
SCIPROBE_TEST_PHASE=serial .venv/bin/python -m pytest "$@"
serial=$?
case $serial in 0|1|5) ;; *) exit "$serial" ;; esac
if [ "$parallel" = 1 ] || [ "$serial" = 1 ]; then exit 1; fi
if [ "$parallel" = 5 ] && [ "$serial" = 5 ]; then exit 5; fi  # nothing selected at all, as pytest says
exit 0
