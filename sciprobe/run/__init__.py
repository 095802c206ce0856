"""Running tasks: the task runner and its runners, evaluation, dry-run plans, executors, the evidence gate every
result passes, replay of predictions files, upstream code at its pin, and the reference baselines."""
