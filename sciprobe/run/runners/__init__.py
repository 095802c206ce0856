"""Generic runners a benchmark's tasks can use: one call per item, and the Swiss tournament."""
