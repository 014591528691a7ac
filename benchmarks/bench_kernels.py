"""Benchmark: building a 50-kernel Gaussian stack with mklcore vs scikit-learn.

For each n, on random 784-dimensional data in [0, 1] (MNIST-sized pixels), it times

* ``kernel_stack(kernel_bank("kloft_median", n_kernels=M), X)``: M Gaussian kernels
  ``exp(-D / (c_k d_med))`` with the median heuristic (widths of our choice for Kloft et al. 2009, Sec. 3.1), the
  median included; float64 and float32;
* one ``sklearn.metrics.pairwise.rbf_kernel(X, gamma=...)`` call, multiplied by M (the
  naive loop building the same stack kernel by kernel);

and measures the peak memory of the mklcore call with ``tracemalloc`` (a separate run),
against the size of the stack itself, ``M * n^2 * itemsize``.

Two times are printed for the float64 stack. *cold*: the first build at that n, which
also pays the operating system for M n^2 8 bytes of fresh pages (zeroing, and on Linux with
transparent huge pages in ``madvise`` mode, compaction; this is sys time, and any code that
materialises a stack of that size pays it once). *warm*: the best of ``--repeats`` further
builds, whose memory the allocator recycles, which is how ``rbf_kernel`` is timed (best of
3 calls into recycled n x n buffers). The target ratio (<= 1.2) compares like with like:
warm against warm.

Usage::

    python benchmarks/bench_kernels.py            # n = 1000, 2000, 4000
    python benchmarks/bench_kernels.py --quick    # n = 500, 1000
    python benchmarks/bench_kernels.py --n 3000 --n-kernels 20
"""

import argparse
import gc
import os
import platform
import time
import tracemalloc

import numpy as np
import sklearn
from sklearn.metrics.pairwise import rbf_kernel

from mklcore.kernels import available_memory, fit_kernels, kernel_bank, kernel_stack


def _cold_time(fn):
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - t0
    del out
    gc.collect()
    return elapsed


def _best_time(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        del out
        gc.collect()
    return best


def _peak_bytes(fn):
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    out = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del out
    gc.collect()
    return peak


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 500, 1000")
    parser.add_argument("--n", type=int, nargs="+", default=None, help="sample sizes")
    parser.add_argument("--n-kernels", type=int, default=50, help="number of Gaussian kernels M")
    parser.add_argument("--dim", type=int, default=784, help="input dimension")
    parser.add_argument("--repeats", type=int, default=2,
                        help="warm timing repeats after the cold build (best of)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sizes = args.n or ([500, 1000] if args.quick else [1000, 2000, 4000])
    M = args.n_kernels

    print(f"mklcore kernel_stack benchmark: M={M} Gaussian kernels (kloft_median bank), "
          f"dim={args.dim}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, scikit-learn "
          f"{sklearn.__version__}, {os.cpu_count()} CPUs")
    avail = available_memory()
    if avail is not None:
        print(f"available memory: {avail / 2 ** 30:.1f} GiB")
    print()
    header = (f"{'n':>6} {'cold_f64_s':>10} {'warm_f64_s':>10} {'rbf_1call_s':>11} "
              f"{'rbf_x{}_s'.format(M):>10} {'ratio':>6} {'ratio_cold':>10} {'peak_f64_MB':>11} "
              f"{'bound_MB':>9} {'peak/bnd':>8} {'warm_f32_s':>10} {'ratio32':>7} "
              f"{'peak_f32_MB':>11} {'bnd32_MB':>9}")
    print(header)
    print("-" * len(header))
    rng = np.random.default_rng(args.seed)
    bank = kernel_bank("kloft_median", n_kernels=M)
    for n in sizes:
        X = rng.random((n, args.dim))
        bound64, bound32 = M * n * n * 8, M * n * n * 4
        if avail is not None and bound64 * 1.1 > avail:
            print(f"{n:>6} skipped: the float64 stack needs {bound64 / 2 ** 30:.1f} GiB")
            continue
        # any width will do: the cost of rbf_kernel does not depend on it
        gamma = fit_kernels(bank, X)[M // 2].gamma_
        t_cold = _cold_time(lambda: kernel_stack(bank, X))
        t_ours = _best_time(lambda: kernel_stack(bank, X), args.repeats)
        t_one = _best_time(lambda: rbf_kernel(X, gamma=gamma), max(args.repeats, 3))
        t_ours32 = _best_time(lambda: kernel_stack(bank, X, dtype=np.float32), args.repeats)
        peak64 = _peak_bytes(lambda: kernel_stack(bank, X))
        peak32 = _peak_bytes(lambda: kernel_stack(bank, X, dtype=np.float32))
        print(f"{n:>6} {t_cold:>10.3f} {t_ours:>10.3f} {t_one:>11.4f} {M * t_one:>10.3f} "
              f"{t_ours / (M * t_one):>6.2f} {t_cold / (M * t_one):>10.2f} "
              f"{peak64 / 2 ** 20:>11.1f} {bound64 / 2 ** 20:>9.1f} "
              f"{peak64 / bound64:>8.3f} {t_ours32:>10.3f} {t_ours32 / (M * t_one):>7.2f} "
              f"{peak32 / 2 ** 20:>11.1f} {bound32 / 2 ** 20:>9.1f}")
    print()
    print("ratio = warm float64 build / (M x one rbf_kernel call), target <= 1.2; ratio_cold = the "
          "first build (it also pays the OS for M n^2 8 bytes of fresh pages, mostly sys time; see "
          "the module docstring); peak/bnd = tracemalloc peak of kernel_stack / (M n^2 8 bytes). "
          "The float32 peak includes one float64 n x n workspace.")


if __name__ == "__main__":
    main()
