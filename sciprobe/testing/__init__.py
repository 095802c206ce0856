"""Test doubles shipped with the package: a loopback OpenAI-compatible stub server and its canned bodies."""
