"""Helpers shared by the tests (importable as ``support``; see ``pythonpath`` in pyproject.toml)."""
