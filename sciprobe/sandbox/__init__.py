"""The bubblewrap sandbox for model-written code: the runner, its command line, host checks, environment,
the files shipped in and out, and supervision of the process tree."""
