"""Data: building each benchmark's dataset from its release (builders, cards, sources, strict release-file
readers), temporal cutoffs, the rows a task runs on, and predictions files."""
