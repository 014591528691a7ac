"""Timing of the lp-norm MKL solvers against one sum-kernel SVM (Kloft et al. 2009, Fig. 1).

Setup (spec §4.1, stand-in A): ``sklearn.datasets.load_digits`` scaled to [0, 1], odd vs even
digits; for n larger than the 1,797 digits the images are resampled with replacement and
jittered (Gaussian noise, sd 0.05) so that no two points coincide. M = 50 Gaussian kernels
``exp(-D / (c_k * d_med))`` with ``d_med`` the median squared distance and ``c_k`` log-spaced
from 1e-2 to 1e2. C = 1. Every solver runs at its default tolerance with ``check_input=False``
(kernel computation and validation are excluded from the times), and its time is divided by
the time of ONE sum-kernel SVM fit (``sum_kernel_svm_solve``) on the same data.

Usage::

    python benchmarks/bench_lpmkl.py            # n in {500, 1000, 2000}, median of 3 runs
    python benchmarks/bench_lpmkl.py --quick    # n in {200, 500}, 1 run (< 1 min)

Rows: every solver in the default wrapper mode (SVM by LIBSVM on the combined kernel, solved
to ``svm_tol`` before each weight step) and in the paper's interleaved mode (``mode=
"interleaved"``: ``max(10, n // 10)`` steps of our warm-started SMO with per-kernel gradient
caches between weight steps); SimpleMKL also with that SMO as its (warm-started) SVM; the
sum-kernel SVM also with that SMO, to separate the cost of MKL from the SVM engine.

Targets (reported, not enforced): Newton and analytic within 10x of one sum-kernel fit at
n = 2000 (stretch: 3x); SimpleMKL at least 5x slower than Newton.
"""

import argparse
import platform
import statistics
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning

from mklcore.lpnorm import lpmkl_solve, sum_kernel_svm_solve
from mklcore.silp import silp_solve
from mklcore.simplemkl import simplemkl_solve


def make_data(n, seed=0):
    """Odd-vs-even digits, n points (resampled and jittered beyond 1,797)."""
    X, digit = load_digits(return_X_y=True)
    X = X / 16.0
    rng = np.random.default_rng(seed)
    if n <= X.shape[0]:
        idx = rng.choice(X.shape[0], n, replace=False)
        Xn = X[idx]
    else:
        idx = rng.choice(X.shape[0], n, replace=True)
        Xn = X[idx] + 0.05 * rng.normal(size=(n, X.shape[1]))
    y = np.where(digit[idx] % 2 == 1, 1.0, -1.0)
    return Xn, y


def gaussian_stack(X, n_kernels=50):
    """M Gaussian kernels with median-heuristic widths, c_k log-spaced in [1e-2, 1e2]."""
    sq = np.einsum("ij,ij->i", X, X)
    D = np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)
    np.fill_diagonal(D, 0.0)
    d_med = np.median(D[np.triu_indices_from(D, k=1)])
    widths = 10.0 ** np.linspace(-2, 2, n_kernels)
    K = np.empty((n_kernels, X.shape[0], X.shape[0]))
    for k, c in enumerate(widths):
        np.multiply(D, -1.0 / (c * d_med), out=K[k])
        np.exp(K[k], out=K[k])
    return K


def _lp(solver, **kw):
    return lambda K, y: lpmkl_solve(K, y, p=2.0, solver=solver, check_input=False, **kw)


INTERLEAVED = {"mode": "interleaved"}  # svm_backend="smo" implied

#: (label, solve, group); the first row is the baseline of the ratios
SOLVERS = [
    ("sum-kernel SVM", lambda K, y: sum_kernel_svm_solve(K, y, C=1.0, check_input=False),
     "baseline (LIBSVM)"),
    ("sum-kernel (smo)", lambda K, y: lpmkl_solve(K, y, p=np.inf, check_input=False,
                                                  svm_backend="smo"), "baseline, our SMO"),
    ("Newton p=2", _lp("newton"), "wrapper"),
    ("analytic p=2", _lp("analytic"), "wrapper"),
    ("cutting plane p=2", _lp("cutting_plane"), "wrapper"),
    ("SILP (l1)", lambda K, y: silp_solve(K, y, check_input=False), "wrapper"),
    ("SimpleMKL (l1)", lambda K, y: simplemkl_solve(K, y, check_input=False), "wrapper"),
    ("Newton p=2", _lp("newton", **INTERLEAVED), "interleaved"),
    ("analytic p=2", _lp("analytic", **INTERLEAVED), "interleaved"),
    ("cutting plane p=2", _lp("cutting_plane", **INTERLEAVED), "interleaved"),
    ("SILP (l1)", lambda K, y: silp_solve(K, y, check_input=False, **INTERLEAVED),
     "interleaved"),
    ("SimpleMKL (l1)", lambda K, y: simplemkl_solve(K, y, check_input=False,
                                                    svm_backend="smo"), "wrapper, our SMO"),
]


def run(sizes, repeats, n_kernels=50, seed=0):
    rows = []
    for n in sizes:
        X, y = make_data(n, seed)
        t0 = time.perf_counter()
        K = gaussian_stack(X, n_kernels)
        t_build = time.perf_counter() - t0
        print(f"# n={n}: built {n_kernels} kernels in {t_build:.1f}s "
              f"({K.nbytes / 2**20:.0f} MiB)", flush=True)
        base = None
        for name, solve, group in SOLVERS:
            times, res = [], None
            for _ in range(repeats):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    t0 = time.perf_counter()
                    res = solve(K, y)
                    times.append(time.perf_counter() - t0)
            t = statistics.median(times)
            if base is None:
                base = t
            rows.append(dict(n=n, method=name, group=group, time=t, ratio=t / base,
                             n_iter=res.n_iter,
                             n_svm=res.get("n_svm_calls", 1), gap=res.gap,
                             crit=res.get("criterion", res.gap), objective=res.objective,
                             success=res.success, svm_time=res.get("svm_time", t)))
            r = rows[-1]
            print(f"  {name:18s} {group:18s} {t:8.3f}s  x{r['ratio']:6.1f}  iter {r['n_iter']:4d}  "
                  f"svm {r['n_svm']:5d}  gap {r['gap']:.1e}  obj {r['objective']:.6f}",
                  flush=True)
        del K
    return rows


def print_table(rows):
    head = (f"{'n':>5} {'method':18s} {'mode / SVM':18s} {'time[s]':>8} {'x sum-SVM':>9} "
            f"{'iter':>5} {'SVMs':>5} {'rel.gap':>8} {'criterion':>9} {'objective':>12} "
            f"{'conv':>5}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['n']:5d} {r['method']:18s} {r['group']:18s} {r['time']:8.3f} "
              f"{r['ratio']:9.1f} {r['n_iter']:5d} {r['n_svm']:5d} {r['gap']:8.1e} "
              f"{r['crit']:9.1e} {r['objective']:12.6f} {str(bool(r['success'])):>5}")


def check_targets(rows):
    n_max = max(r["n"] for r in rows)
    at = {(r["method"], r["group"]): r for r in rows if r["n"] == n_max}
    lines = []
    for group in ("wrapper", "interleaved"):
        for name in ("Newton p=2", "analytic p=2"):
            ratio = at[name, group]["ratio"]
            lines.append(f"{name} ({group}) within 10x of one sum-kernel fit at n={n_max}: "
                         f"{'MET' if ratio <= 10 else 'MISSED'} ({ratio:.1f}x; stretch 3x "
                         f"{'met' if ratio <= 3 else 'missed'})")
    for smk, newton in ((("SimpleMKL (l1)", "wrapper"), ("Newton p=2", "wrapper")),
                        (("SimpleMKL (l1)", "wrapper, our SMO"), ("Newton p=2", "interleaved"))):
        slow = at[smk]["time"] / at[newton]["time"]
        lines.append(f"SimpleMKL ({smk[1]}) at least 5x slower than Newton ({newton[1]}) at "
                     f"n={n_max}: {'MET' if slow >= 5 else 'MISSED'} ({slow:.1f}x)")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n in {200, 500}, one run")
    parser.add_argument("--sizes", type=int, nargs="*", help="override the sample sizes")
    parser.add_argument("--repeats", type=int, help="override the number of runs")
    parser.add_argument("--kernels", type=int, default=50, help="number of kernels M")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="BLAS threads (default 1: on a shared 2-core machine multi-threaded "
                             "gemv is up to 10x slower under load; 0 = library default)")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([200, 500] if args.quick else [500, 1000, 2000])
    repeats = args.repeats or (1 if args.quick else 3)
    print(f"# bench_lpmkl: M={args.kernels}, C=1, sizes={sizes}, median of {repeats} run(s); "
          f"BLAS threads {args.blas_threads or 'default'}; python {platform.python_version()}, "
          f"numpy {np.__version__}", flush=True)
    t0 = time.perf_counter()
    if args.blas_threads > 0:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(args.blas_threads):
            rows = run(sizes, repeats, n_kernels=args.kernels)
    else:
        rows = run(sizes, repeats, n_kernels=args.kernels)
    print()
    print_table(rows)
    print()
    for line in check_targets(rows):
        print(line)
    print(f"# total {time.perf_counter() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
