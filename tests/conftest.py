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


@pytest.fixture(scope="session")
def under_two_blas_kernels():
    """Run a Python snippet under this CPU's OpenBLAS kernels and another CPU type's.

    OpenBLAS picks its kernels by CPU type at run time, and their sums differ in the last
    bits, which is what makes a result change between machines. The fixture is a function
    ``run(code) -> (stdout_native, stdout_other)``, each run in a fresh interpreter with
    ``OPENBLAS_CORETYPE`` unset or set to another type. Skips where OpenBLAS is not an x86-64
    build that picks its kernels at run time.
    """
    import platform
    import subprocess
    import sys

    threadpoolctl = pytest.importorskip("threadpoolctl")
    arch = [info.get("architecture") for info in threadpoolctl.threadpool_info()
            if info.get("internal_api") == "openblas"]
    if not arch or arch[0] is None or platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("needs an x86-64 OpenBLAS that picks its kernels at run time")
    other = "Sandybridge" if arch[0].lower() == "haswell" else "Haswell"

    def run(code):
        outputs = []
        for coretype in (None, other):
            env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep
                       + os.environ.get("PYTHONPATH", ""))
            env.pop("OPENBLAS_CORETYPE", None)
            if coretype:
                env["OPENBLAS_CORETYPE"] = coretype
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 env=env, cwd=ROOT, timeout=300)
            assert out.returncode == 0, out.stderr
            outputs.append(out.stdout.strip())
        return tuple(outputs)

    return run
