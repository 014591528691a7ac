"""Benchmark: the defaults of the wrapper solvers on large banks and at huge C.

Runs the reproducers of issue 16 for the SVM-wrapper solvers and prints, for each, the
status, iterations, gap, time and message:

* ``lpmkl_solve(p=4/3, solver="cutting_plane")`` with the default LP master on the
  ionosphere bank ``kernel_bank("simplemkl", n_features=33)`` (442 kernels) on 245
  standardised training points, C = 1, with the paper's SQCLP master ``master="sqclp"`` (it
  falls back to the exact master when the conic solver fails on a Taylor surrogate), and
  with ``master="exact"``;
* ``lpmkl_solve(p=1, solver="analytic")`` on the same bank;
* ``sum_kernel_svm_solve`` at C = 1e8 (an SVM whose hinge primal certifies nothing: status 2);
* ``simplemkl_solve`` on unscaled breast-cancer features at C = 1e8 and ``max_iter=3``
  (bounded by ``svm_max_iter``).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_defaults.py
"""

import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from mklcore.datasets import load_ionosphere
from mklcore.kernels import kernel_bank, kernel_stack
from mklcore.lpnorm import lpmkl_solve, sum_kernel_svm_solve
from mklcore.simplemkl import simplemkl_solve


def _report(name, solve):
    """Run ``solve()`` and print one line: status, iterations, gap, seconds, message."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = solve()
    print(f"{name:44s} status {res.status}  n_iter {res.n_iter:4d}  gap {res.gap:9.2e}  "
          f"{time.perf_counter() - t0:6.1f}s  {res.message}")


def main():
    """Build the banks and run every reproducer once."""
    X, y = load_ionosphere(return_X_y=True)
    X_tr, _, y_tr, _ = train_test_split(X, y, train_size=245, random_state=0, stratify=y)
    X_tr = StandardScaler().fit_transform(X_tr)
    K = kernel_stack(kernel_bank("simplemkl", n_features=X.shape[1]), X_tr)
    print(f"ionosphere bank: {K.shape[0]} kernels on {K.shape[1]} points")
    _report("cutting plane p=4/3 (default master)",
            lambda: lpmkl_solve(K, y_tr, p=4 / 3, solver="cutting_plane"))
    _report("cutting plane p=4/3 (master='sqclp')",
            lambda: lpmkl_solve(K, y_tr, p=4 / 3, solver="cutting_plane", master="sqclp"))
    _report("cutting plane p=4/3 (master='exact')",
            lambda: lpmkl_solve(K, y_tr, p=4 / 3, solver="cutting_plane", master="exact"))
    _report("analytic p=1", lambda: lpmkl_solve(K, y_tr, p=1.0, solver="analytic"))
    _report("sum kernel, C=1e8", lambda: sum_kernel_svm_solve(K[:20], y_tr, C=1e8))
    Xb, yb = load_breast_cancer(return_X_y=True)
    Kb = np.stack([Xb[:, :10] @ Xb[:, :10].T, Xb[:, 10:20] @ Xb[:, 10:20].T, Xb @ Xb.T])
    _report("SimpleMKL, unscaled features, C=1e8",
            lambda: simplemkl_solve(Kb, yb, C=1e8, max_iter=3))


if __name__ == "__main__":
    main()
