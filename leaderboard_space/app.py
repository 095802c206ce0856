"""sciprobe leaderboard Space: builds the UI from the registered benchmarks and launches it.

Everything lives in ``sciprobe.leaderboard.app``; configuration comes from environment variables (Space
secrets/variables): SCIPROBE_LEADERBOARD_STORE, SCIPROBE_LEADERBOARD_DIR, SCIPROBE_LEADERBOARD_REQUESTS_REPO,
SCIPROBE_LEADERBOARD_RESULTS_REPO, SCIPROBE_LEADERBOARD_AUTH, SCIPROBE_LEADERBOARD_RATE_LIMIT, HF_TOKEN.
"""

from sciprobe.leaderboard.app import build_app, launch_options

demo = build_app()

if __name__ == "__main__":
    demo.queue(default_concurrency_limit=8).launch(**launch_options())
