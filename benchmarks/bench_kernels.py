"""Benchmark: kernel stacks and kernel banks of mklcore vs plain numpy and scikit-learn.

Part 1, the ionosphere bank ``kernel_bank("simplemkl", n_features=33)`` (442 kernels: 10
Gaussian widths and 3 polynomial degrees on all features and on each single feature) on 245
standardised training points and the 106 remaining test points; best of 3 runs each:

(a) a plain numpy build of the same 442 training and test kernels, from one inner-product
    and one squared-distance matrix per feature subset shared by all widths and degrees (the
    two stacks are checked equal to the library's to round-off);
(b) the library's bank builder, ``KernelBank.fit_transform`` + ``transform`` (target: within
    1.5x of (a));
(c) ``SumKernelSVC`` fit + predict on raw X against scikit-learn's ``SVC(kernel=
    "precomputed")`` on the summed precomputed kernels, sum included (target: within 3x); also
    against the whole numpy pipeline from raw X, (a) + sum + SVC;
(d) ``SumKernelSVC().fit`` (default bank: linear + Gaussian) on n = 1000 points against
    ``SVC(kernel="precomputed")`` fitted on the summed kernel, the sum and scikit-learn's own
    validation included (target: within 3x), and the PSD check of one kernel of that size.

Part 2, a 50-kernel Gaussian stack against scikit-learn: for each n, on random
784-dimensional data in [0, 1] (MNIST-sized pixels), it times

* ``kernel_stack(kernel_bank("kloft_median", n_kernels=M), X)``: M Gaussian kernels
  ``exp(-D / (c_k d_med))`` with the median heuristic (widths of our choice for Kloft et al.
  2009, Sec. 3.1), the median included; float64 and float32;
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

Usage (single-threaded, as the targets are meant)::

    OMP_NUM_THREADS=1 python benchmarks/bench_kernels.py            # part 2: n = 1000, 2000, 4000
    OMP_NUM_THREADS=1 python benchmarks/bench_kernels.py --quick    # part 2: n = 500, 1000
    OMP_NUM_THREADS=1 python benchmarks/bench_kernels.py --n 3000 --n-kernels 20
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

from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mklcore import SumKernelSVC
from mklcore._validation import check_psd
from mklcore.datasets import load_ionosphere
from mklcore.kernels import (KernelBank, available_memory, fit_kernels, kernel_bank,
                             kernel_stack)

from machine import machine_line  # benchmarks/machine.py: what the ratios depend on

#: the widths and degrees of the "simplemkl" bank, for the plain numpy build
_SIGMAS = (0.5, 1.0, 2.0, 5.0, 7.0, 10.0, 12.0, 15.0, 17.0, 20.0)
_DEGREES = (1, 2, 3)


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


def numpy_simplemkl_stack(X, Y):
    """The "simplemkl" bank between rows ``X`` and columns ``Y``, in plain numpy.

    One inner-product matrix ``G`` and one squared-distance matrix ``D`` per feature subset
    (all features, then each single feature), shared by the 10 Gaussian widths and the 3
    polynomial degrees (``(G + 1)^p`` by repeated multiplication, degrees 1, 2, 3 in turn);
    kernels in the order of ``kernel_bank("simplemkl")``.
    """
    n_X, d = X.shape
    n_t = len(_SIGMAS) + len(_DEGREES)
    subsets = [slice(None)] + [slice(j, j + 1) for j in range(d)]
    out = np.empty((n_t * len(subsets), n_X, Y.shape[0]))
    for s, cols in enumerate(subsets):
        A, B = X[:, cols], Y[:, cols]
        G = A @ B.T
        D = np.maximum(np.add.outer((A * A).sum(1), (B * B).sum(1)) - 2.0 * G, 0.0)
        previous = None
        for t in range(n_t):
            slot = out[t if s == 0 else n_t + t * d + (s - 1)]
            if t < len(_SIGMAS):
                np.multiply(D, -1.0 / (2.0 * _SIGMAS[t] ** 2), out=slot)
                np.exp(slot, out=slot)
            elif previous is None:
                np.add(G, 1.0, out=slot)
                base = previous = slot
            else:
                np.multiply(previous, base, out=slot)
                previous = slot
    return out


def _ionosphere():
    X, y = load_ionosphere(return_X_y=True)
    X_tr, X_te, y_tr, _ = train_test_split(X, y, train_size=245, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), scaler.transform(X_te), y_tr


def bank_benchmark(repeats=3):
    """Part 1: print (a)-(d) with their ratios and targets."""
    X_tr, X_te, y_tr = _ionosphere()
    bank = kernel_bank("simplemkl", n_features=X_tr.shape[1])
    print(f"ionosphere bank: {len(bank)} kernels, {X_tr.shape[0]} training and "
          f"{X_te.shape[0]} test points, best of {repeats}")

    def numpy_build():
        return numpy_simplemkl_stack(X_tr, X_tr), numpy_simplemkl_stack(X_te, X_tr)

    def library_build():
        kb = KernelBank(kernels=bank)
        return kb.fit_transform(X_tr), kb.transform(X_te)

    (K_np, Kt_np), (K_lib, Kt_lib) = numpy_build(), library_build()
    dev = max(float(np.max(np.abs(K_np - K_lib))), float(np.max(np.abs(Kt_np - Kt_lib))))
    print(f"  max |numpy - library| over both stacks: {dev:.1e}")
    del K_np, Kt_np
    t_np = _best_time(numpy_build, repeats)
    t_lib = _best_time(library_build, repeats)
    print(f"  (a) numpy build, train + test   {t_np:8.3f} s")
    print(f"  (b) KernelBank build            {t_lib:8.3f} s   ratio (b)/(a) = "
          f"{t_lib / t_np:5.2f}   target <= 1.5")

    def sklearn_sum():
        return SVC(kernel="precomputed").fit(K_lib.sum(0), y_tr).predict(Kt_lib.sum(0))

    def ours():
        return SumKernelSVC(kernels=bank).fit(X_tr, y_tr).predict(X_te)

    np.testing.assert_array_equal(ours(), sklearn_sum())
    t_svc = _best_time(sklearn_sum, repeats)
    t_ours = _best_time(ours, repeats)
    print(f"  (c) SVC on the precomputed sum  {t_svc:8.3f} s (sum + fit + predict)")
    print(f"      SumKernelSVC on raw X       {t_ours:8.3f} s (bank + fit + predict)   ratio = "
          f"{t_ours / t_svc:5.2f}   target <= 3")
    print(f"      numpy pipeline from raw X   {t_np + t_svc:8.3f} s ((a) + SVC)              "
          f"ratio = {t_ours / (t_np + t_svc):5.2f}")
    print(f"      (floor: building the 442 kernels from raw X alone, (a), is "
          f"{t_np / t_svc:.1f}x the SVC on the precomputed sum)")

    X, y = make_classification(n_samples=1000, n_features=20, random_state=0)
    X = StandardScaler().fit_transform(X)
    K = kernel_stack([("linear", {}), ("rbf", {"gamma": "scale"})], X)

    def svc_1000():
        return SVC(kernel="precomputed").fit(K.sum(0), y)

    def ours_1000():
        return SumKernelSVC().fit(X, y)

    t_svc = _best_time(svc_1000, repeats)
    t_ours = _best_time(ours_1000, repeats)
    t_psd = _best_time(lambda: check_psd(K[1]), repeats)
    print(f"  (d) n=1000, 2 kernels: SVC on the sum {t_svc:.3f} s, SumKernelSVC.fit "
          f"{t_ours:.3f} s (bank, validation, fit)   ratio = {t_ours / t_svc:5.2f}   "
          f"target <= 3")
    if "check_input" in SumKernelSVC().get_params():
        t_unchecked = _best_time(lambda: SumKernelSVC(check_input=False).fit(X, y), repeats)
        print(f"      SumKernelSVC(check_input=False).fit {t_unchecked:.3f} s   ratio = "
              f"{t_unchecked / t_svc:5.2f}")
    print(f"      PSD check of one 1000 x 1000 kernel (user callables, solvers' check_input): "
          f"{t_psd:.3f} s")
    print()


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
    print(machine_line())
    bank_benchmark()

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
