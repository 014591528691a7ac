"""Exact lp-norm MKL from raw features, past the memory wall of the Gram stack.

The targets of the large-scale issue, measured single-threaded (BLAS and numba limited to
one thread), CPU time, in one process:

* **magic** (UCI MAGIC Gamma Telescope, n = 19,020, 10 standardised features): lp-norm MKL
  at p = 2 (``lpmkl_solve``, Newton, its default interleaved engine) on a
  :class:`~mklcore.rowsource.LazyStack` of 10 Gaussian kernels, widths
  :math:`\\gamma=2^k/d`, k = -5..4 (a dyadic grid around scikit-learn's ``gamma="scale"``),
  C = 1, MKL tolerance 1e-3. Targets: peak memory <= 4 GB, CPU <= 5x one scikit-learn
  ``SVC(kernel="rbf", gamma=1/d)`` fit on the same data, relative duality gap <= 1e-3.
  The stack of these kernels would need 8 M n^2 = 29 GB.
* **ringnorm** (Breiman's generator, ``make_ringnorm``, n = 50,000, d = 20): the same with 20
  Gaussian kernels :math:`\\gamma=2^k/d`, k = -15..4. Targets: <= 15 min, <= 8 GB (the stack:
  400 GB).

* **lowrank** (``--lowrank``): the magic bank on 6,000 training and 2,000 held-out points,
  exact rows against Nyström factors of rank 64 and 256
  (:class:`~mklcore.lowrank.LowRankStack`): CPU, test accuracy, the largest decision
  difference to the exact model and the relative kernel error of each width.

* **factors** (``--factors N [N ...]``): the approximate path on ringnorm, 10 Gaussian widths
  :math:`2^k/d`, k = -5..4, float32 Nyström factors of rank ``--rank`` per kernel
  (:class:`~mklcore.lowrank.LowRankStack`), lp-norm MKL p = 2 solved in the primal
  (:func:`~mklcore.factormkl.factor_lpmkl_solve`) to a rigorous gap of 1e-3; test accuracy on
  10,000 held-out points (``make_ringnorm(..., random_state=1)``); ``--exact-n`` first fits
  the exact rows path at that size on the same held-out points. Target: n = 1,000,000,
  rank <= 256, <= 10 min, <= 16 GB, test accuracy within 1 point of the exact fit at
  n = 20,000.

Peak memory is the process's peak resident set (``ru_maxrss``) read right after the MKL fit
(the first thing the process does after loading the data and compiling the loops). The
SVC is fitted afterwards. Both fits print their training accuracy; the MKL fit also its
duality gap, outer iterations, SMO iterations and kernel rows computed.

Usage::

    python benchmarks/bench_scale.py --case magic       # the magic target (a few minutes)
    python benchmarks/bench_scale.py --case ringnorm    # n = 50,000 (long)
    python benchmarks/bench_scale.py --quick            # both cases at n = 2,000 (< 1 min)
    python benchmarks/bench_scale.py --lowrank          # Nystroem ranks 64 and 256
    python benchmarks/bench_scale.py --factors 20000 --exact-n 20000   # approximate path
    python benchmarks/bench_scale.py --factors 1000000 --rank 96       # n = 1e6 (~6 GB)
"""

import argparse
import resource
import time

import numpy as np
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from mklcore.datasets import load_magic, make_ringnorm
from mklcore.kernels import kernel_bank
from mklcore.lpnorm import lpmkl_solve
from mklcore.kernels import KernelBank
from mklcore.lowrank import LowRankStack
from mklcore.factormkl import factor_lpmkl_solve
from mklcore.rowsource import LazyStack, lazy_stack, stack_bytes

from machine import machine_line  # benchmarks/machine.py: what the ratios depend on

#: case -> (exponents k of the widths 2^k / d, memory target in GB, CPU ratio target to
#: one SVC fit, wall-clock target in s)
CASES = {"magic": (range(-5, 5), 4.0, 5.0, None),
         "ringnorm": (range(-15, 5), 8.0, None, 15 * 60.0)}
#: relative duality gap target (and MKL tolerance)
GAP = 1e-3
#: exponents k of the widths 2^k / d of the approximate path (--factors), held-out points
FACTOR_WIDTHS = range(-5, 5)
FACTOR_TEST = 10_000


def peak_gb():
    """Peak resident set of this process so far, in GB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20


def data(case, n):
    """Standardised features and {-1, +1} labels of a case (``n`` points, None: all)."""
    if case == "magic":
        X, y = load_magic(return_X_y=True)
        y = np.where(y == "g", 1.0, -1.0)
        if n is not None and n < len(y):
            idx = np.random.default_rng(0).permutation(len(y))[:n]
            X, y = X[idx], y[idx]
    else:
        X, y = make_ringnorm(50_000 if n is None else n, random_state=0)
        y = np.where(y == 1, 1.0, -1.0)
    return StandardScaler().fit_transform(X), y


def run(case, n, cache_mb, verbose=0):
    exponents, mem_target, ratio_target, wall_target = CASES[case]
    X, y = data(case, n)
    n, d = X.shape
    gamma0 = 1.0 / d
    kernels = kernel_bank("rbf", gamma=[gamma0 * 2.0 ** k for k in exponents])
    # compile the loops on a toy problem first (cache=True: once per machine)
    lpmkl_solve(lazy_stack(kernels, X[:20]), np.where(np.arange(20) % 2, 1.0, -1.0))
    print(f"{case}: n = {n}, d = {d}, M = {len(kernels)} Gaussian kernels "
          f"(the stack would need {stack_bytes(len(kernels), n, 0) / 2 ** 30:.1f} GB); "
          f"row cache {cache_mb} MB", flush=True)

    t0, w0 = time.process_time(), time.perf_counter()
    K = lazy_stack(kernels, X, cache_mb=cache_mb)
    K.verbose = verbose
    res = lpmkl_solve(K, y, p=2.0, C=1.0, tol=GAP, verbose=verbose)
    cpu, wall, mem = time.process_time() - t0, time.perf_counter() - w0, peak_gb()
    f = K.decision(X, res.weights, res.dual_coef, res.intercept)
    acc = float(np.mean(np.sign(f) == y))
    print(f"  lp-MKL p=2 (rows): CPU {cpu:.1f} s, wall {wall:.1f} s, peak RSS {mem:.2f} GB, "
          f"gap {res.gap:.2e}, success {res.success}, {res.n_iter} outer iterations, "
          f"{res.n_smo_iter} SMO iterations, {K.n_rows_computed} rows, "
          f"{np.count_nonzero(res.dual_coef)} SVs, train accuracy {acc:.4f}", flush=True)
    print(f"  weights: {np.array2string(res.weights, precision=3)}")

    t0 = time.process_time()
    svc = SVC(kernel="rbf", gamma=gamma0, C=1.0).fit(X, y)
    cpu_svc = time.process_time() - t0
    print(f"  SVC(rbf, gamma=1/d): CPU {cpu_svc:.1f} s, {svc.n_support_.sum()} SVs, "
          f"train accuracy {svc.score(X, y):.4f}")

    ratio = cpu / cpu_svc
    checks = [f"peak {mem:.2f} GB {'<=' if mem <= mem_target else '>'} {mem_target:g} GB",
              f"gap {res.gap:.1e} {'<=' if res.gap <= GAP else '>'} {GAP:g}"]
    ok = mem <= mem_target and res.gap <= GAP and res.success
    if ratio_target is not None:
        checks.append(f"CPU ratio {ratio:.2f} {'<=' if ratio <= ratio_target else '>'} "
                      f"{ratio_target:g}")
        ok &= ratio <= ratio_target
    else:
        checks.append(f"CPU ratio to SVC {ratio:.2f}")
    if wall_target is not None:
        checks.append(f"wall {wall:.0f} s {'<=' if wall <= wall_target else '>'} "
                      f"{wall_target:.0f} s")
        ok &= wall <= wall_target
    print(f"  {'MET' if ok else 'MISSED'}: " + "; ".join(checks), flush=True)


def run_lowrank(ranks=(64, 256)):
    X, y = data("magic", 8000)
    d = X.shape[1]
    Xtr, ytr, Xte, yte = X[:6000], y[:6000], X[6000:], y[6000:]
    kernels = kernel_bank("rbf", gamma=[2.0 ** k / d for k in CASES["magic"][0]])
    bank = KernelBank(kernels=kernels).fit(Xtr)
    lpmkl_solve(lazy_stack(kernels, Xtr[:20]), ytr[:20])  # compile
    print("lowrank: magic, 6000 training and 2000 held-out points, 10 Gaussian widths")
    t0 = time.process_time()
    K = LazyStack(bank)
    exact = lpmkl_solve(K, ytr, p=2.0, tol=GAP)
    f_exact = K.decision(Xte, exact.weights, exact.dual_coef, exact.intercept)
    print(f"  exact rows: CPU {time.process_time() - t0:.1f} s, gap {exact.gap:.1e}, "
          f"test accuracy {np.mean(np.sign(f_exact) == yte):.4f}", flush=True)
    for rank in ranks:
        t0 = time.process_time()
        R = LowRankStack(bank, rank)
        res = lpmkl_solve(R, ytr, p=2.0, tol=GAP)
        f = R.decision(Xte, res.weights, res.dual_coef, res.intercept)
        print(f"  rank {rank}: CPU {time.process_time() - t0:.1f} s, gap {res.gap:.1e}, "
              f"test accuracy {np.mean(np.sign(f) == yte):.4f}, max |f - f_exact| "
              f"{np.max(np.abs(f - f_exact)):.2f}, kernel error "
              f"{np.array2string(res.kernel_error, precision=3)}", flush=True)


def ringnorm_split(n, n_test=FACTOR_TEST):
    """``n`` training and ``n_test`` held-out ringnorm points (seeds 0 and 1), standardised
    with the training statistics."""
    X, y = make_ringnorm(n, random_state=0)
    Xt, yt = make_ringnorm(n_test, random_state=1)
    scaler = StandardScaler().fit(X)
    return (scaler.transform(X), np.where(y == 1, 1.0, -1.0), scaler.transform(Xt),
            np.where(yt == 1, 1.0, -1.0))


def run_factors(sizes, rank, exponents, exact_n=None):
    """The approximate path: Nystroem factors (float32) + factor_lpmkl_solve at each size;
    with ``exact_n`` first the exact rows fit at that size on the same held-out points."""
    print(f"factors: ringnorm, {len(exponents)} Gaussian widths 2^k/d, k = {list(exponents)}, "
          f"rank {rank} per kernel (float32 factors), p = 2, C = 1, gap tol {GAP:g}, "
          f"{FACTOR_TEST} held-out points", flush=True)
    Xs, ys, _, _ = ringnorm_split(300, 50)  # compile the loops
    small = KernelBank(kernels=kernel_bank("rbf", gamma=[0.05, 0.1])).fit(Xs)
    factor_lpmkl_solve(LowRankStack(small, 10, dtype=np.float32), ys, max_iter=3)
    if exact_n:
        X, y, Xt, yt = ringnorm_split(exact_n)
        d = X.shape[1]
        bank = KernelBank(kernels=kernel_bank("rbf", gamma=[2.0 ** k / d
                                                             for k in exponents])).fit(X)
        t0, w0 = time.process_time(), time.perf_counter()
        K = LazyStack(bank, cache_mb=2048)
        res = lpmkl_solve(K, y, p=2.0, tol=GAP)
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
        acc = np.mean(np.sign(K.decision(Xt, res.weights, res.dual_coef, res.intercept)) == yt)
        print(f"  exact rows n = {exact_n}: CPU {cpu:.1f} s, wall {wall:.1f} s, gap "
              f"{res.gap:.1e}, test accuracy {acc:.4f}, peak RSS {peak_gb():.2f} GB",
              flush=True)
        del K
    for n in sizes:
        X, y, Xt, yt = ringnorm_split(n)
        d = X.shape[1]
        bank = KernelBank(kernels=kernel_bank("rbf", gamma=[2.0 ** k / d
                                                             for k in exponents])).fit(X)
        t0, w0 = time.process_time(), time.perf_counter()
        R = LowRankStack(bank, rank, dtype=np.float32, error_sample=300)
        t_build = time.perf_counter() - w0
        res = factor_lpmkl_solve(R, y, p=2.0, tol=GAP)
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
        acc = np.mean(np.sign(R.decision(Xt, res.weights, res.dual_coef, res.intercept)) == yt)
        print(f"  n = {n}: wall {wall:.1f} s (factors {t_build:.1f} s), CPU {cpu:.1f} s, "
              f"peak RSS {peak_gb():.2f} GB, gap {res.gap:.1e}, success {res.success}, "
              f"{res.n_iter} iterations, {res.n_updates} coordinate updates, test accuracy "
              f"{acc:.4f}, kernel error {res.kernel_error.min():.3f}.."
              f"{res.kernel_error.max():.3f}", flush=True)
        print(f"    weights: {np.array2string(res.weights, precision=3)}", flush=True)
        del R, X, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append",
                        help="case to run (repeatable); default: both")
    parser.add_argument("--n", type=int, default=None, help="points (default: the target's)")
    parser.add_argument("--cache-mb", type=float, default=2048.0, help="row cache in MB")
    parser.add_argument("--quick", action="store_true", help="n = 2000, both cases")
    parser.add_argument("--verbose", type=int, default=0, help="progress of the fit")
    parser.add_argument("--lowrank", action="store_true",
                        help="exact rows against Nystroem factors (magic, n = 6000)")
    parser.add_argument("--factors", type=int, nargs="*", default=None,
                        help="training sizes of the approximate path (ringnorm)")
    parser.add_argument("--rank", type=int, default=128, help="rank per kernel (--factors)")
    parser.add_argument("--exact-n", type=int, default=None,
                        help="with --factors: first the exact rows fit at this size")
    args = parser.parse_args()
    cases = args.case or sorted(CASES)
    n = 2000 if args.quick and args.n is None else args.n
    print(machine_line())
    with threadpool_limits(1):
        if args.factors is not None:
            run_factors(args.factors or [20_000], args.rank, FACTOR_WIDTHS, args.exact_n)
            return
        if args.lowrank:
            run_lowrank((16,) if args.quick else (64, 256))
            return
        for case in cases:
            run(case, n, args.cache_mb, args.verbose)


if __name__ == "__main__":
    main()
