"""sciprobe leaderboard Space: builds the UI from the registered benchmarks and launches it.

Everything lives in ``sciprobe.leaderboard.app``; configuration comes from environment variables (Space
secrets/variables): SCIPROBE_LEADERBOARD_STORE, SCIPROBE_LEADERBOARD_DIR, SCIPROBE_LEADERBOARD_REQUESTS_REPO,
SCIPROBE_LEADERBOARD_RESULTS_REPO, SCIPROBE_LEADERBOARD_AUTH, SCIPROBE_LEADERBOARD_RATE_LIMIT, HF_TOKEN.
"""

import os
from multiprocessing import parent_process

from sciprobe.leaderboard.app import build_app, launch_options
from sciprobe.leaderboard.scoring_pool import PROCESSES_ENV

# The scoring processes (sciprobe.leaderboard.scoring_pool) are spawned, and a spawned process imports this file
# again: only the Space's own process builds the app.
if parent_process() is None:
    # on a SQLite store, one scoring process per core unless the Space says otherwise (the hub store scores in
    # the request thread whatever this says); see leaderboard_space/README.md
    os.environ.setdefault(PROCESSES_ENV, str(os.cpu_count() or 1))
    demo = build_app()

if __name__ == "__main__":
    # scoring processes start and load their data in the background; the page does not wait
    demo.sciprobe_service.scoring.warm_up(demo.sciprobe_service.pins)
    demo.queue(default_concurrency_limit=8).launch(**launch_options())
