"""Benchmark: SimpleMKL against SILP on the same l1-norm MKL problem, at equal certified gap.

Problems (C = 1, trace-normalised kernels where stated):

* ``ionosphere``: the 442-kernel bank of Rakotomamonjy et al. (2008), Gaussian widths
  (0.5, ..., 20) and polynomial degrees 1-3 on all features and on each of the 33 features
  (``kernel_bank("simplemkl")``), standardised UCI Ionosphere, a stratified subsample of 245
  training points, kernels scaled to trace n;
* ``mnist n``: ``timing_stack(n, 50, 0)`` of :mod:`mklcore.repro.kloft2009_lpmkl` (MNIST odd
  vs even, 50 Gaussian kernels).

SILP runs first to ``--tol`` and certifies its final gap (its stopping value); SimpleMKL then
runs until its own certified duality gap is at most that value (never looser than
``--tol``). Times are CPU seconds with one BLAS thread, input checks off for both, minimum
of ``--repeats`` runs. Target (reported, not enforced): SimpleMKL <= 3x SILP.

Usage::

    python benchmarks/bench_simplemkl.py            # ionosphere, mnist 1000 and 2000
    python benchmarks/bench_simplemkl.py --quick    # mnist 500 (< 1 min)
"""

import argparse
import time
import warnings

import numpy as np

from mklcore.silp import silp_solve
from mklcore.simplemkl import simplemkl_solve

TARGET = 3.0


def ionosphere_stack(n_train=245, seed=0):
    """The 442-kernel SimpleMKL bank on a stratified subsample of standardised Ionosphere."""
    from mklcore.datasets import load_ionosphere
    from mklcore.kernels import kernel_bank, kernel_stack, normalize_trace
    from mklcore.repro.experiments import subsample

    X, y = load_ionosphere(return_X_y=True)
    X = np.asarray(X, dtype=float)
    y = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    idx = subsample(y, n_train, seed)
    K = kernel_stack(kernel_bank("simplemkl", n_features=X.shape[1]), X[idx])
    return normalize_trace(K)[0], y[idx]


def mnist_stack(n, n_kernels=50):
    """Figure 1 data of the Kloft et al. (2009) reproduction."""
    from mklcore.repro.kloft2009_lpmkl import timing_stack

    return timing_stack(n, n_kernels, 0)


def best_of(fn, repeats):
    """Minimum CPU time over ``repeats`` calls, and the last result."""
    best, res = np.inf, None
    for _ in range(repeats):
        t0 = time.process_time()
        res = fn()
        best = min(best, time.process_time() - t0)
    return best, res


def compare(name, K, y, args):
    """Time SILP, then SimpleMKL to SILP's certified gap; print one row, return the ratio."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_silp, silp = best_of(lambda: silp_solve(K, y, C=args.C, tol=args.tol,
                                                  check_input=False), args.repeats)
        gap = max(float(silp.criterion), 1e-12)
        t_smkl, smkl = best_of(lambda: simplemkl_solve(
            K, y, C=args.C, tol=min(gap, args.tol), check_input=False,
            svm_backend=args.backend, line_search=args.line_search), args.repeats)
    ratio = t_smkl / t_silp
    print(f"{name:>14} {K.shape[0]:>4} {K.shape[1]:>5} {t_silp:>7.2f} {silp.n_svm_calls:>5} "
          f"{gap:>8.1e} {t_smkl:>7.2f} {smkl.n_svm_calls:>5} {smkl.n_iter:>5} "
          f"{smkl.gap:>8.1e} {smkl.status:>3} {ratio:>6.2f} "
          f"{'ok' if ratio <= TARGET else 'MISSED'}", flush=True)
    return ratio


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="mnist n = 500 only")
    parser.add_argument("--n", type=int, nargs="+", default=None, help="mnist sizes")
    parser.add_argument("--no-ionosphere", action="store_true")
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--tol", type=float, default=1e-2, help="SILP's tolerance")
    parser.add_argument("--backend", default="libsvm", help="SimpleMKL's svm_backend")
    parser.add_argument("--line-search", default="derivative", choices=["derivative", "golden"],
                        help="SimpleMKL's line_search")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats = 1
    sizes = args.n or ([500] if args.quick else [1000, 2000])
    print(f"SimpleMKL vs SILP at equal certified gap (C={args.C:g}, SILP tol={args.tol:g}, "
          f"SimpleMKL backend {args.backend!r}, line search {args.line_search!r}; CPU s, min of {args.repeats}); "
          f"target ratio <= {TARGET:g}")
    print(f"{'problem':>14} {'M':>4} {'n':>5} {'silp_s':>7} {'svm':>5} {'gap':>8} "
          f"{'smkl_s':>7} {'svm':>5} {'iter':>5} {'gap':>8} {'st':>3} {'ratio':>6}")
    ratios = []
    if not (args.quick or args.no_ionosphere):
        ratios.append(compare("ionosphere", *ionosphere_stack(), args))
    for n in sizes:
        ratios.append(compare(f"mnist {n}", *mnist_stack(n), args))
    print(f"worst ratio {max(ratios):.2f} (target <= {TARGET:g}): "
          f"{'met' if max(ratios) <= TARGET else 'not met'}")


if __name__ == "__main__":
    main()
