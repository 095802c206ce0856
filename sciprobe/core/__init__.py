"""The core: benchmark declarations and their registry, errors, numbers, lazy imports and where sciprobe keeps
things on disk. Imports nothing else of sciprobe."""
