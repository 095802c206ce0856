"""SciTaste-Bench's own metrics: WAPE bands, the correlation composite, the taste dimensions."""
