"""Other tools' formats: lighteval task configs, CLI and results, `evaluate` metric modules and Spaces, and
publishing the Hub artifacts."""
