"""Benchmark: epsilon-SVR MKL against scikit-learn's SVR on the summed kernel (R²).

The regression data sets vendored with mklcore (auto-mpg, cpu with the target log-transformed,
housing) on random 70/30 splits: features and target standardised on the training part, the
SimpleMKL bank ``kernel_bank("simplemkl")`` (Gaussian widths and polynomial degrees on all and
on each single feature; Rakotomamonjy et al. 2008, Sec. 5), every kernel trace-normalised on
the training points (``normalize="trace"``), ``epsilon=0.1``. ``C`` is chosen by 3-fold
cross-validation on the training part from ``C_GRID`` for every method (the same folds). The
reference is ``sklearn.svm.SVR(kernel="precomputed")`` on the sum of the same kernels.
Prints the mean and standard deviation of the test R² and of the fit time (with the chosen C)
per method, and the difference to the SVR.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_regression.py [--splits 5] [--quick]
        [--datasets housing] [--methods "LpMKL p=2" ...] [--c-grid 0.1 1 10 100]
        [--epsilons 0.1 0.3] [--scale-c]

``--epsilons`` chooses epsilon jointly with C by the same cross-validation for every method;
``--scale-c`` searches ``C * M ** (1 / p)`` for a method of norm p on M kernels (its grid then
contains, at uniform weights, the SVR of every grid point). The chosen C (on the SVR's scale)
and epsilon are printed per split.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold, train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

from machine import machine_line  # benchmarks/machine.py: what the timings depend on
from mklcore.datasets import load_auto_mpg, load_cpu, load_housing
from mklcore.kernels import KernelBank, kernel_bank
from mklcore.lpnorm import lpmkl_svr_solve, sum_kernel_svr_solve
from mklcore.silp import silp_svr_solve
from mklcore.simplemkl import simplemkl_svr_solve

C_GRID = (1.0, 10.0, 100.0)
EPSILON = 0.1


def _svr(K, y, C, epsilon):
    """scikit-learn's SVR on the summed kernel, as an MKLResult-like dict."""
    svr = SVR(kernel="precomputed", C=C, epsilon=epsilon, tol=1e-3).fit(K.sum(0), y)
    coef = np.zeros(y.size)
    coef[svr.support_] = svr.dual_coef_[0]
    return {"weights": np.ones(K.shape[0]), "dual_coef": coef, "intercept": svr.intercept_[0]}


METHODS = {
    "SVR (sklearn, sum)": _svr,
    "SumKernelSVR": lambda K, y, C, e: sum_kernel_svr_solve(K, y, C=C, epsilon=e),
    "LpMKL p=2": lambda K, y, C, e: lpmkl_svr_solve(K, y, p=2.0, C=C, epsilon=e),
    "LpMKL p=4/3": lambda K, y, C, e: lpmkl_svr_solve(K, y, p=4 / 3, C=C, epsilon=e),
    "SimpleMKL": lambda K, y, C, e: simplemkl_svr_solve(K, y, C=C, epsilon=e),
    "SILP": lambda K, y, C, e: silp_svr_solve(K, y, C=C, epsilon=e),
}


#: Norm of each method's weight constraint: at uniform weights its combined kernel is the sum
#: times M ** (-1 / p) (M kernels), which equals the SVR on the sum with C scaled by the same
#: factor (for the epsilon-SVR, kernel s*K with C is kernel K with s*C).
NORM = {"SVR (sklearn, sum)": np.inf, "SumKernelSVR": np.inf, "LpMKL p=2": 2.0,
        "LpMKL p=4/3": 4 / 3, "SimpleMKL": 1.0, "SILP": 1.0}


def _predict(res, K_test):
    w = np.asarray(res["weights"])
    return np.einsum("m,mij,j->i", w, K_test, res["dual_coef"]) + res["intercept"]


def _data():
    X, y = load_auto_mpg(return_X_y=True)
    yield "auto-mpg", X, y
    X, y = load_cpu(return_X_y=True)
    yield "cpu (log perf)", X, np.log(y)
    X, y = load_housing(return_X_y=True)
    yield "housing", X, y


def _stacks(X_tr, X_te):
    bank = KernelBank(kernels=kernel_bank("simplemkl"), normalize="trace")
    K = bank.fit_transform(X_tr)
    return K, bank.transform(X_te)


def main(n_splits=5, datasets=None, c_grid=C_GRID, epsilons=(EPSILON,), scale_c=False):
    """Run every method on every data set (or those named in ``datasets``) and split.

    ``C`` and ``epsilon`` are chosen jointly from ``c_grid`` x ``epsilons`` by the same 3-fold
    cross-validation for every method. ``scale_c``: each method searches ``C * M ** (1 / p)``
    instead of ``C`` (see ``NORM``), so that its search space contains, at uniform weights,
    the SVR of every grid point."""
    for name, X, y in _data():
        if datasets and name.split()[0] not in datasets:
            continue
        scores = {m: [] for m in METHODS}
        times = {m: [] for m in METHODS}
        chosen = {m: [] for m in METHODS}
        for seed in range(n_splits):
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed)
            sx, sy = StandardScaler().fit(X_tr), StandardScaler().fit(y_tr[:, None])
            X_tr, X_te = sx.transform(X_tr), sx.transform(X_te)
            y_tr, y_te = sy.transform(y_tr[:, None]).ravel(), sy.transform(y_te[:, None]).ravel()
            K, K_te = _stacks(X_tr, X_te)
            folds = list(KFold(3, shuffle=True, random_state=seed).split(X_tr))
            for method, solve in METHODS.items():
                factor = K.shape[0] ** (1 / NORM[method]) if scale_c else 1.0
                grid = [(C * factor, e) for C in c_grid for e in epsilons]
                cv = []
                for C, eps in grid:
                    r2 = []
                    for tr, va in folds:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            res = solve(K[:, tr][:, :, tr], y_tr[tr], C, eps)
                        r2.append(r2_score(y_tr[va], _predict(res, K[:, va][:, :, tr])))
                    cv.append(np.mean(r2))
                C, eps = grid[int(np.argmax(cv))]
                chosen[method].append(f"{C / factor:g}/{eps:g}")
                t0 = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = solve(K, y_tr, C, eps)
                times[method].append(time.process_time() - t0)
                scores[method].append(r2_score(y_te, _predict(res, K_te)))
        print(f"\n{name}: n={X.shape[0]}, {K.shape[0]} kernels, {n_splits} splits 70/30",
              flush=True)
        ref = np.array(scores["SVR (sklearn, sum)"])
        for method in METHODS:
            s = np.array(scores[method])
            print(f"  {method:20s} R2 {s.mean():.4f} ± {s.std():.4f}   "
                  f"minus SVR {np.mean(s - ref):+.4f}   fit {np.mean(times[method]):6.2f} s   "
                  f"C/epsilon {' '.join(chosen[method])}",
                  flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=5, help="random splits")
    parser.add_argument("--quick", action="store_true", help="one split, C = 10 (no search)")
    parser.add_argument("--datasets", nargs="*", choices=("auto-mpg", "cpu", "housing"),
                        help="only these data sets")
    parser.add_argument("--methods", nargs="*", choices=list(METHODS),
                        help="only these methods (the SVR is always run)")
    parser.add_argument("--c-grid", nargs="*", type=float, default=list(C_GRID),
                        help="values of C searched (default: %(default)s)")
    parser.add_argument("--epsilons", nargs="*", type=float, default=[EPSILON],
                        help="values of epsilon searched jointly with C (default: %(default)s)")
    parser.add_argument("--scale-c", action="store_true",
                        help="each method searches C * M ** (1 / p) (M kernels, p its norm)")
    args = parser.parse_args()
    if args.methods:
        METHODS = {m: f for m, f in METHODS.items()
                   if m == "SVR (sklearn, sum)" or m in args.methods}
    print(machine_line())
    c_grid = (10.0,) if args.quick else tuple(args.c_grid)
    main(1 if args.quick else args.splits, args.datasets, c_grid, tuple(args.epsilons),
         args.scale_c)
