"""Peer table: our solvers against one scikit-learn SVC on the summed kernel (and MKLpy).

Two tables, every row with its CPU time, its ratio to the sum-kernel SVC (the summation
included) and, where there is a test set, its test accuracy:

* the ionosphere bank of SimpleMKL (Rakotomamonjy et al. 2008): ``kernel_bank("simplemkl",
  n_features=33)``, 442 kernels (Gaussian widths and polynomial degrees on all features and on
  each single feature), 245 standardised training points (70 %), C = 1: scikit-learn's
  ``SVC(kernel="precomputed")`` on the summed stack (sum + fit), the ``SumKernelSVC``
  estimator on raw features (kernels built inside, summed one by one without a stack; also
  fit + predict against fit + predict on the precomputed sums, the target), ``silp_solve``, ``lpmkl_solve`` at p = 1
  (cutting plane, analytic), ``simplemkl_solve``, ``lpmkl_solve`` at p = 2 (analytic, Newton;
  default engines), ``stpmkl_solve`` (q = 0.2, lam = 1/n) and ``lmkl_solve``;
* the scaling table on ``timing_stack(n, 50)`` of :mod:`mklcore.repro.kloft2009_lpmkl`
  (MNIST odd vs even, 50 Gaussian kernels), n in {1000, 2000}: the SVC on the sum,
  ``lpmkl_solve(p=2)`` with its default engine and in each mode, SILP (default and wrapper)
  and SimpleMKL (the targets of the compiled engine are printed by ``bench_engine.py``).

MKLpy is optional (never a dependency): when it is not installed its rows are skipped with one
line. The MKLpy GRAM time on the ionosphere bank, 259 s, is the time RECORDED in issue 15, not
measured here; our certified solvers are printed against it (target: >= 100x faster).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_peers.py          # full tables, min of 3 runs
    OMP_NUM_THREADS=1 python benchmarks/bench_peers.py --quick  # n in {300, 600}, one run

Targets (reported, not enforced): default ``lpmkl_solve`` p = 2 within 1.5x of the sum-kernel
SVC at n = 2000, M = 50; every certified method at least 100x faster than the recorded MKLpy
GRAM time; ``SumKernelSVC`` fit + predict on raw X within 3x of the SVC on the precomputed
sums; SimpleMKL within 3x of SILP (both certified) on every table.
"""

import argparse
import importlib.util
import sys
import time
import warnings

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from mklcore import SumKernelSVC, decision
from mklcore.datasets import load_ionosphere
from mklcore.kernels import kernel_bank, kernel_stack
from mklcore.localized import lmkl_solve
from mklcore.lpnorm import lpmkl_solve
from mklcore.repro.kloft2009_lpmkl import timing_stack
from mklcore.silp import silp_solve
from mklcore.simplemkl import simplemkl_solve
from mklcore.stpmkl import stpmkl_solve

from machine import machine_line  # benchmarks/machine.py: what the ratios depend on

#: MKLpy's GRAM on the ionosphere bank, as recorded in issue 15 (not measured here)
MKLPY_GRAM_RECORDED_S = 259.0
BASELINE = "SVC on the sum (sum + fit)"
#: targets of issue 15: SumKernelSVC (fit + predict on raw X) and SimpleMKL against SILP
SUM_TARGET, SIMPLEMKL_TARGET = 3.0, 3.0
#: target lines printed at the end
SUMMARY = []
TARGET_N, TARGET_RATIO = 2000, 1.5


def cpu_time(fit, repeats):
    """Minimum CPU seconds of ``repeats`` calls of ``fit()`` and the last return value."""
    best, out = np.inf, None
    for _ in range(repeats):
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fit()
        best = min(best, time.process_time() - t0)
    return best, out


def svc_on_sum(K, y, C):
    """scikit-learn's SVC on the summed precomputed stack (the baseline)."""
    return SVC(kernel="precomputed", C=C).fit(K.sum(axis=0), y)


def print_row(name, seconds, base, accuracy=None, result=None):
    """One table line: CPU time, ratio to the baseline, accuracy and certificate."""
    acc = "" if accuracy is None else f"  test acc {accuracy:6.3f}"
    cert = ""
    if result is not None and hasattr(result, "get"):
        cert = f"  status {result.get('status', '-')}  gap {float(result.get('gap', np.nan)):.1e}"
    print(f"  {name:44s} {seconds:8.3f}s  x{seconds / base:7.2f}{acc}{cert}", flush=True)


def ionosphere_table(args):
    """The 442-kernel ionosphere table; returns ``{name: seconds}`` of the certified rows."""
    X, y = load_ionosphere(return_X_y=True)
    y = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=0.7, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_tr)
    X_tr, X_te = scaler.transform(X_tr), scaler.transform(X_te)
    bank = kernel_bank("simplemkl", n_features=X.shape[1])
    if args.quick:
        bank = bank[:: max(1, len(bank) // 100)]
    K, K_te = kernel_stack(bank, X_tr), kernel_stack(bank, X_te, X_tr)
    n, C = K.shape[1], 1.0
    print(f"# ionosphere: {K.shape[0]} kernels, {n} training / {K_te.shape[1]} test points, "
          f"C={C:g}, CPU seconds (min of {args.repeats}), check_input=False for the solvers")
    base, svc = cpu_time(lambda: svc_on_sum(K, y_tr, C), args.repeats)
    acc = float(np.mean(svc.predict(K_te.sum(axis=0)) == y_te))
    print_row(BASELINE, base, base, acc)
    sec, est = cpu_time(lambda: SumKernelSVC(kernels=bank, C=C).fit(X_tr, y_tr), args.repeats)
    print_row("SumKernelSVC on raw X (kernels built)", sec, base,
              float(np.mean(est.predict(X_te) == y_te)))
    # the target of issue 15: fit + predict on raw X against fit + predict on the precomputed
    # sums (the kernels of the baseline are given; SumKernelSVC builds and sums all of them)
    base_fp, _ = cpu_time(lambda: svc_on_sum(K, y_tr, C).predict(K_te.sum(axis=0)), args.repeats)
    ours_fp, _ = cpu_time(lambda: SumKernelSVC(kernels=bank, C=C).fit(X_tr, y_tr).predict(X_te),
                          args.repeats)
    print_row("  fit + predict: SVC on the precomputed sums", base_fp, base_fp)
    print_row("  fit + predict: SumKernelSVC on raw X", ours_fp, base_fp)
    SUMMARY.append(f"SumKernelSVC fit + predict on raw X within {SUM_TARGET:g}x of SVC on the "
                   f"precomputed sums: {'MET' if ours_fp <= SUM_TARGET * base_fp else 'MISSED'} "
                   f"({ours_fp / base_fp:.2f}x)")
    quiet = {"check_input": False}
    runs = {
        "silp_solve": lambda: silp_solve(K, y_tr, C=C, **quiet),
        "lpmkl p=1 cutting plane": lambda: lpmkl_solve(K, y_tr, p=1.0, C=C,
                                                        solver="cutting_plane", **quiet),
        "simplemkl_solve": lambda: simplemkl_solve(K, y_tr, C=C, **quiet),
        "lpmkl p=1 analytic": lambda: lpmkl_solve(K, y_tr, p=1.0, C=C, solver="analytic",
                                                  **quiet),
        "lpmkl p=2 analytic": lambda: lpmkl_solve(K, y_tr, p=2.0, C=C, solver="analytic",
                                                  **quiet),
        "lpmkl p=2 newton": lambda: lpmkl_solve(K, y_tr, p=2.0, C=C, **quiet),
        "lpmkl p=2 newton (mode=wrapper)": lambda: lpmkl_solve(K, y_tr, p=2.0, C=C,
                                                               mode="wrapper", **quiet),
        "stpmkl q=0.2 lam=1/n": lambda: stpmkl_solve(K, y_tr, noise_level=0.2, lam=1.0 / n,
                                                     **quiet),
        "lmkl_solve": lambda: lmkl_solve(K, y_tr, X_tr, C=C, random_state=0, **quiet),
    }
    times, gaps = {}, {}
    for name, fit in runs.items():
        sec, res = cpu_time(fit, args.repeats)
        inputs = {"X_gate": X_te} if name == "lmkl_solve" else {}
        acc = float(np.mean(np.sign(decision(res, K_te, **inputs)) == y_te))
        print_row(name, sec, base, acc, res)
        if res.success:
            times[name], gaps[name] = sec, float(res.gap)
    simplemkl_vs_silp("ionosphere", times, gaps)
    return times


def simplemkl_vs_silp(label, times, gaps):
    """Record SimpleMKL / SILP (target: <= 3x at equal certified gap)."""
    if "simplemkl_solve" in times and "silp_solve" in times:
        ratio = times["simplemkl_solve"] / times["silp_solve"]
        SUMMARY.append(f"SimpleMKL / SILP on {label}: {ratio:.2f}x "
                       f"({'MET' if ratio <= SIMPLEMKL_TARGET else 'MISSED'}, target <= "
                       f"{SIMPLEMKL_TARGET:g}x; gaps {gaps['simplemkl_solve']:.1e} and "
                       f"{gaps['silp_solve']:.1e})")


def scaling_table(args):
    """The n = 1000 / 2000, M = 50 table; returns ``{n: ratio}``, the ratio of the default
    p = 2 to the SVC on the sum."""
    ratios = {}
    for n in args.sizes:
        K, y = timing_stack(n, args.kernels, 0)
        print(f"# MNIST odd vs even, n={n}, M={args.kernels} Gaussian kernels, C=1, tol 1e-5, "
              f"CPU seconds (min of {args.repeats})")
        base, _ = cpu_time(lambda: svc_on_sum(K, y, 1.0), args.repeats)
        print_row(BASELINE, base, base)
        quiet = {"check_input": False}

        def default():
            return lpmkl_solve(K, y, **quiet)

        runs = {
            "lpmkl p=2 (default: newton, interleaved)": default,
            "lpmkl p=2 newton, mode=wrapper": lambda: lpmkl_solve(K, y, mode="wrapper",
                                                                  **quiet),
            "lpmkl p=2 analytic (default)": lambda: lpmkl_solve(K, y, solver="analytic",
                                                                **quiet),
            "lpmkl p=2 analytic, mode=wrapper": lambda: lpmkl_solve(
                K, y, solver="analytic", mode="wrapper", **quiet),
            "lpmkl p=2 cutting plane (default: wrapper)": lambda: lpmkl_solve(
                K, y, solver="cutting_plane", **quiet),
            "lpmkl p=2 cutting plane, interleaved": lambda: lpmkl_solve(
                K, y, solver="cutting_plane", mode="interleaved", **quiet),
            "silp_solve (default: interleaved)": lambda: silp_solve(K, y, **quiet),
            "silp_solve, mode=wrapper": lambda: silp_solve(K, y, mode="wrapper", **quiet),
        }
        if not args.no_simplemkl:
            runs["simplemkl_solve"] = lambda: simplemkl_solve(K, y, **quiet)
        after = np.nan
        times, gaps = {}, {}
        for name, fit in runs.items():
            sec, res = cpu_time(fit, args.repeats)
            print_row(name, sec, base, result=res)
            key = name.split(" (")[0]
            if key in ("silp_solve", "simplemkl_solve") and res.success:
                times[key], gaps[key] = sec, float(res.gap)
            if name.startswith("lpmkl p=2 (default"):
                after = sec / base
        ratios[n] = after
        simplemkl_vs_silp(f"n={n}, M={args.kernels}", times, gaps)
        print(f"  p=2 default / {BASELINE}, n={n}: x{after:.2f}", flush=True)
        del K
    return ratios


def main(argv=None):
    """Run both tables and print the targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="n in {300, 600}, ~100 kernels on ionosphere, one run (< 1 min)")
    parser.add_argument("--sizes", type=int, nargs="*", help="override the sample sizes")
    parser.add_argument("--repeats", type=int, help="runs per row (minimum CPU time)")
    parser.add_argument("--kernels", type=int, default=50, help="number of kernels M")
    parser.add_argument("--no-simplemkl", action="store_true",
                        help="skip SimpleMKL in the scaling table")
    args = parser.parse_args(argv)
    args.sizes = args.sizes or ([300, 600] if args.quick else [1000, 2000])
    args.repeats = args.repeats or (1 if args.quick else 3)
    t0 = time.perf_counter()
    print(machine_line())
    if importlib.util.find_spec("MKLpy") is None:
        print("# MKLpy is not installed: its rows are skipped (it is optional, not a "
              "dependency)")
    else:  # pragma: no cover - MKLpy is not installed in the project environment
        print("# MKLpy is installed, but its rows are not implemented here: skipped")
    times = ionosphere_table(args)
    ratios = scaling_table(args)
    print()
    for n, after in ratios.items():
        print(f"default lpmkl_solve p=2 / {BASELINE}, n={n}: x{after:.2f}")
    n_max = max(args.sizes)
    note = "" if n_max == TARGET_N else f" [target at n={TARGET_N}; here n={n_max}: indicative]"
    ratio = ratios[n_max]
    print(f"default lpmkl_solve p=2 within {TARGET_RATIO}x of the sum-kernel SVC: "
          f"{'MET' if ratio <= TARGET_RATIO else 'MISSED'} ({ratio:.2f}x){note}")
    print(f"against MKLpy GRAM, {MKLPY_GRAM_RECORDED_S:g} s on the ionosphere bank (RECORDED in "
          f"issue 15, not measured here; target >= 100x faster"
          f"{', this run uses a reduced bank: indicative' if args.quick else ''}):")
    for name, sec in times.items():
        speedup = MKLPY_GRAM_RECORDED_S / max(sec, 1e-9)
        print(f"  {name:44s} {speedup:9.0f}x faster  {'MET' if speedup >= 100 else 'MISSED'}")
    for line in SUMMARY:
        print(line)
    print(f"# total {time.perf_counter() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
