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


# ----------------------------------------------------------------------------- test order
#: seconds of the slow scopes of ``make test`` (a scope as pytest-xdist's ``--dist loadscope``
#: sees it: a notebook, or a test module), measured on an idle 2-core machine with
#: ``pytest --durations``; scopes not listed count SECONDS_PER_TEST per test. Only the order
#: matters, and roughly: a scope that grew a lot moves up this list.
#: (The five scopes above test_book: CPU seconds of the scope run alone, stop 34; the quick
#: notebooks now run in one process, so their CPU is their time on an idle core.)
SCOPE_SECONDS = {
    "notebooks/dinuzzo2010_rls2.ipynb": 77,
    "notebooks/yang2012_stpmkl.ipynb": 69,
    "notebooks/gonen2008_lmkl.ipynb": 67,
    "notebooks/hinrichs2012_qmkl.ipynb": 56,
    "tests/test_common.py": 54,
    "tests/test_book.py": 50,
    "tests/test_runner.py": 45,
    "tests/test_notebook_determinism.py": 37,
    "notebooks/kloft2009_lpmkl.ipynb": 35,
    "tests/test_bad_inputs.py": 28,
    "notebooks/mkl_benchmark.ipynb": 30,
    "notebooks/large_scale.ipynb": 25,
    "tests/test_packaging.py": 22,
    "tests/test_notebooks.py": 20,
    "notebooks/quickstart.ipynb": 20,
    "tests/test_experiments.py": 14,
    "tests/test_qmkl.py": 13,
    "tests/test_svm.py": 12,
    "tests/test_dask.py": 11,
    "tests/test_localized.py": 10,
    "tests/test_stpmkl.py": 10,
}
SECONDS_PER_TEST = 0.05


def _scope(item):
    """The scope of an item for ``--dist loadscope`` (its node id up to the last ``::``)."""
    return item.nodeid.rsplit("::", 1)[0]


def pytest_collection_modifyitems(session, config, items):
    """Run the longest scopes first, each scope's tests in their collected order.

    ``make test`` runs two processes that take scopes from one queue in this order
    (``--dist loadscope --no-loadscope-reorder``): longest first keeps both busy to the end,
    where xdist's own order (most tests first) left the book test and the slow notebooks to
    the end, one process running them while the other idled.
    """
    scopes = {}
    for item in items:
        scopes.setdefault(_scope(item), []).append(item)

    def cost(scope):
        return SCOPE_SECONDS.get(scope, SECONDS_PER_TEST * len(scopes[scope]))

    items[:] = [item for scope in sorted(scopes, key=cost, reverse=True)
                for item in scopes[scope]]
