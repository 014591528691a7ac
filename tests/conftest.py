"""Shared pytest configuration for the mklcore test suite."""

import os
from pathlib import Path

import pytest

# Kernels started by the notebook tests (and nbval, when run in the same session) inherit
# these; the Makefile sets them too, this covers a bare ``pytest`` call.
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("PYTHONHASHSEED", "0")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root():
    """Absolute path of the repository root (the folder holding ``pyproject.toml``)."""
    return ROOT
