"""The sciprobe leaderboard: storage (SQLite or hub datasets), submission validation, server-side scoring
queue and the Gradio app. Nothing here imports gradio or huggingface_hub at package import.

Data contract (shared/spec/ecosystem.md §7, the HF leaderboard template): one request JSON per submission
(status PENDING -> RUNNING -> FINISHED | FAILED) and one results JSON per (model, benchmark version, task,
dataset fingerprint, cutoff, judge set), with per-cell provenance and coverage.
"""
