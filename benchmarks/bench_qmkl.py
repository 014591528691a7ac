"""Benchmark: the Q-MKL beta step (root finder vs SOCP) and whole Q-MKL fits vs lp-MKL Newton.

Part 1, Module 2 (Eq. 8 of Hinrichs et al. 2012) for M in {10, 30, 100} kernels, on a random
``Q = Lap(|Corr|) + B`` (trace M) and per-kernel terms ``W`` spread over ~4 orders of
magnitude. Times (median over repeats) of

* ``root``: the Newton root finder of Eqs. (9)-(11), cold start;
* ``root warm``: the same, started from a perturbed solution (as in Algorithm 1);
* ``socp``: the cvxpy/Clarabel SOCP with the problem already compiled (as in Algorithm 1);
* ``socp cold``: the SOCP including cvxpy's problem construction and compilation;

and the largest difference between the root finder's and the SOCP's beta.

Part 2, whole fits on the mfeat stand-in of the notebook (digits 0-4 vs 5-9, 120 samples,
six views, 72 kernels, one 10-fold training split of 108 points): Q-MKL with
``Q = Lap(Cov_alpha) + B`` (root finder and SOCP) and ``Q = Cov_alpha``, against
``lpmkl_solve(p=2)`` and ``p=1.5`` with the Newton update, all at the same MKL tolerance
(relative duality gap 1e-3), SVM tolerance (1e-6) and C = 1. Kernel construction and Q are
excluded from the times. Target: Q-MKL (root) within 3x of the lp-MKL Newton fit.

BLAS is limited to one thread (threadpoolctl), so the numbers are single-core.

Usage::

    python benchmarks/bench_qmkl.py            # 15 repeats, fits on 3 training folds
    python benchmarks/bench_qmkl.py --quick    # 5 repeats, 1 fold (< 1 min)
"""

import argparse
import platform
import time
import warnings

import numpy as np
import sklearn
from threadpoolctl import threadpool_limits

from mklcore.datasets import load_mfeat
from mklcore.repro.experiments import kfold_splits, subsample
from mklcore.lpnorm import lpmkl_solve
from mklcore.qmkl import BetaStep, alpha_correlation, q_from_correlation, qmkl_solve
from mklcore.repro.hinrichs2012_qmkl import multiview_kernels


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def bench_beta_step(sizes, repeats, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for M in sizes:
        corr = np.corrcoef(rng.normal(size=(3 * M, M)).T)
        Q = q_from_correlation(corr, kind="lap+block", groups=np.arange(M) // 5)
        W = rng.exponential(size=M) * np.exp(rng.normal(scale=2.0, size=M))
        root = BetaStep(Q, "root")
        socp = BetaStep(Q, "socp")
        beta_root = root.step(W)
        beta_socp = socp.step(W)  # compiles and caches the cvxpy problem
        warm = beta_root * np.exp(0.1 * rng.normal(size=M))
        t_root = _median_time(lambda: root.step(W), repeats)
        t_warm = _median_time(lambda: root.step(W, warm), repeats)
        t_socp = _median_time(lambda: socp.step(W, warm), repeats)
        t_cold = _median_time(lambda: BetaStep(Q, "socp").step(W), max(1, repeats // 3))
        rows.append((M, t_root, t_warm, t_socp, t_cold, float(np.max(np.abs(beta_root - beta_socp))),
                     root.counts["fallback"]))
    return rows


def _mfeat_fold(fold):
    bunch = load_mfeat()
    positive = bunch.target >= 5
    sel = subsample(positive.astype(int), 120, seed=0)
    y = np.where(positive[sel], 1.0, -1.0)
    views = {k: v[sel] for k, v in bunch.views.items()}
    train = kfold_splits(y, n_splits=10, seed=0)[fold]["train"]
    K, _, groups, _ = multiview_kernels({k: v[train] for k, v in views.items()}, y[train])
    return K, y[train], groups


def bench_fits(n_folds, repeats):
    fits = {}
    for fold in range(n_folds):
        K, y, groups = _mfeat_fold(fold)
        corr = alpha_correlation(K, y, C=1.0)
        q_lap_block = q_from_correlation(corr, kind="lap+block", groups=groups)
        q_cov = q_from_correlation(corr, kind="cov")
        common = {"C": 1.0, "tol": 1e-3, "svm_tol": 1e-6, "check_input": False}
        methods = {
            "lpmkl newton p=2": lambda: lpmkl_solve(K, y, p=2.0, solver="newton", **common),
            "lpmkl newton p=1.5": lambda: lpmkl_solve(K, y, p=1.5, solver="newton", **common),
            "qmkl Lap(Cov)+B root": lambda: qmkl_solve(K, y, q_lap_block, beta_step="root",
                                                       **common),
            "qmkl Lap(Cov)+B socp": lambda: qmkl_solve(K, y, q_lap_block, beta_step="socp",
                                                       **common),
            "qmkl Cov root": lambda: qmkl_solve(K, y, q_cov, beta_step="root", **common),
        }
        for name, fn in methods.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = fn()
                t = _median_time(fn, repeats)
            fits.setdefault(name, []).append((t, res.n_iter, res.gap))
    return fits


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 repeats, 1 fold (< 1 min)")
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else 15
    n_folds = 1 if args.quick else 3
    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"scikit-learn {sklearn.__version__}, {platform.machine()}, BLAS threads: 1")
    with threadpool_limits(1):
        rows = bench_beta_step((10, 30, 100), repeats)
        print("\nModule 2 (one beta step), median seconds")
        print(f"{'M':>5} {'root':>10} {'root warm':>10} {'socp':>10} {'socp cold':>10} "
              f"{'socp/root':>10} {'max|diff|':>10} {'fallbacks':>9}")
        for M, t_root, t_warm, t_socp, t_cold, diff, fb in rows:
            print(f"{M:>5} {t_root:>10.2e} {t_warm:>10.2e} {t_socp:>10.2e} {t_cold:>10.2e} "
                  f"{t_socp / t_root:>10.1f} {diff:>10.1e} {fb:>9}")
        fits = bench_fits(n_folds, max(1, repeats // 5))
    base = np.mean([t for t, _, _ in fits["lpmkl newton p=2"]])
    print(f"\nWhole fits, mfeat 0-4 vs 5-9, 72 kernels, n = 108, C = 1, tol 1e-3 "
          f"({n_folds} fold(s), median of {max(1, repeats // 5)} runs each)")
    print(f"{'method':<22} {'seconds':>9} {'iters':>6} {'rel gap':>9} {'vs p=2 Newton':>14}")
    for name, vals in fits.items():
        t = np.mean([v[0] for v in vals])
        it = np.mean([v[1] for v in vals])
        gap = np.max([v[2] for v in vals])
        print(f"{name:<22} {t:>9.3f} {it:>6.1f} {gap:>9.1e} {t / base:>13.2f}x")
    ratio = np.mean([t for t, _, _ in fits["qmkl Lap(Cov)+B root"]]) / base
    print(f"\nQ-MKL (Lap(Cov)+B, root) / lp-MKL Newton (p=2): {ratio:.2f}x "
          f"(target <= 3x: {'met' if ratio <= 3 else 'NOT met'})")


if __name__ == "__main__":
    main()
