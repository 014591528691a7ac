"""What the benchmark ratios depend on: one line about this machine, printed by the benchmarks.

Two rates set most of the ratios of ``bench_peers.py`` and ``bench_kernels.py``:

* **float64 ``numpy.exp``**, which every Gaussian kernel pays per entry. NumPy vectorises it
  with AVX-512 only; on a CPU without AVX-512 (AMD Zen 1-3, most laptops, Apple silicon) it
  calls the C library's scalar ``exp``, several times slower. A bank of Gaussian kernels built
  from raw features is then exp-bound, and so is ``SumKernelSVC`` on raw features, while the
  scikit-learn baseline on precomputed kernels does not pay it.
* **memory bandwidth** (one streaming pass over a kernel stack): the MKL solvers read their
  stack once or more per weight step, the sum-kernel baseline once.

Usage::

    python benchmarks/machine.py      # the line alone
"""

import os
import platform
import time

import numpy as np


def cpu_model():
    """The CPU model name (``/proc/cpuinfo`` on Linux, else ``platform.processor()``)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def numpy_simd():
    """The SIMD extensions NumPy found on this CPU, e.g. ``"AVX2"`` or ``"AVX512F ..."``."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as features
        except ImportError:
            return "unknown"
    found = [name for name, on in features.items() if on and name.startswith(("AVX", "ASIMD",
                                                                              "SVE", "NEON"))]
    wide = [name for name in found if name.startswith(("AVX512F", "SVE"))]
    top = [name for name in found if name in ("AVX2", "AVX512F", "ASIMD", "SVE")]
    return ", ".join(top or found[-1:] or ["none"]) + ("" if wide else " (no AVX-512)")


def exp_ns_per_entry(size=2 ** 16, repeats=200):
    """Best time of float64 ``numpy.exp`` per entry, in ns (in-cache operands)."""
    x = -np.linspace(0.0, 20.0, size)
    out = np.empty_like(x)
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(repeats // 5):
            np.exp(x, out=out)
        best = min(best, (time.perf_counter() - t0) / (repeats // 5))
    return 1e9 * best / size


def stream_gb_per_s(megabytes=256, repeats=3):
    """Best read bandwidth of one ``sum`` over a float64 array of ``megabytes``, in GB/s."""
    x = np.ones(megabytes * 2 ** 20 // 8)
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        x.sum()
        best = min(best, time.perf_counter() - t0)
    return x.nbytes / best / 1e9


def machine_line():
    """One line: CPU, cores, NumPy and its SIMD, float64 exp ns/entry and read GB/s."""
    return (f"# machine: {cpu_model()}, {os.cpu_count()} cores; numpy {np.__version__} SIMD "
            f"{numpy_simd()}; float64 exp {exp_ns_per_entry():.1f} ns/entry; stream read "
            f"{stream_gb_per_s():.0f} GB/s")


if __name__ == "__main__":
    print(machine_line())
