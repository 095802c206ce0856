"""IDRBench's own metrics: the official I2R ranking scores."""
