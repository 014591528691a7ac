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

Part 3, the UCI regime of the reproduction (issue 15): sonar, split 0 of
the notebook's ``uci_split`` with its settings (793 kernels, Q = normalised
Laplacian of |Corr| + B + 1e-3 I from ``regulariser("Lap(Cov)+B", ...)``, C = 10, relative
gap 1e-2, SVM tolerance 1e-5). Times, minimum of 3 runs, of the beta steps and support
functions of one fit (the inputs of Algorithm 1's 12 iterations replayed) and of the whole
fit, for this checkout against the Q-MKL code before the speed-up (git revision
``BASELINE_REV``, loaded from git history; Newton from the warm start alone, NNLS support
function). Target: the weight step (beta steps + support functions) >= 5x faster.

Part 4, the notebook's full-mode cells (issue 15): CPU time (``time.process_time``, minimum
of 3 runs) of one Table 1 fold (``table1_fold``, fold 0 of realisation 0, C grid
{0.1, 1, 10} by inner 3-fold CV, 80 MKL fits) and of one Q-SVM fold (``qsvm_fold``, 87 Q-SVM
fits), with this checkout's ``mklcore.qmkl`` against that of ``NOTEBOOK_BASELINE_REV``
(before the lean LIBSVM backend and the direct LAPACK calls of the beta step) patched into
the notebook's namespace; the rows of both must be identical. Target: the Table 1 fold
>= 1.5x faster (the lp-MKL rows, about a third of the fold, run on the lp-norm engines).

BLAS is limited to one thread (threadpoolctl), so the numbers are single-core.

Usage::

    python benchmarks/bench_qmkl.py            # 15 repeats, fits on 3 training folds
    python benchmarks/bench_qmkl.py --quick    # 5 repeats, 1 fold, 1 run of part 3
"""

import argparse
import importlib.util
import pathlib
import platform
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import sklearn
from threadpoolctl import threadpool_limits

from mklcore.datasets import load_mfeat
from mklcore.repro.experiments import kfold_splits, subsample
from mklcore.lpnorm import lpmkl_solve
from mklcore.qmkl import BetaStep, alpha_correlation, q_from_correlation, qmkl_solve
from mklcore.repro import hinrichs2012_qmkl
from mklcore.repro.experiments import spawn_seeds
from mklcore.repro.hinrichs2012_qmkl import multiview_kernels
from mklcore.repro.notebook import notebook_functions

#: the Q-MKL code before the coordinate steps and the pivoting support function
BASELINE_REV = "208251c"
#: the Q-MKL code before the notebook speed-up of issue 15 (scikit-learn's SVC wrapper as
#: the SVM of every Q-MKL fit, scipy's cho_factor/cho_solve in the beta step)
NOTEBOOK_BASELINE_REV = "d4e6a57"


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


def _min_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.min(times))


def baseline_module(rev=BASELINE_REV, name="mklcore.qmkl_baseline"):
    """``mklcore/qmkl.py`` of git revision ``rev`` imported as module ``name``."""
    root = pathlib.Path(__file__).resolve().parents[1]
    source = subprocess.run(["git", "show", f"{rev}:mklcore/qmkl.py"], cwd=root,
                            capture_output=True, text=True, check=True).stdout
    path = pathlib.Path(tempfile.mkdtemp()) / f"{name.rsplit('.', 1)[-1]}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class _Captured(Exception):
    pass


def sonar_inputs():
    """K, y and Q of the first Q-MKL fit of ``uci_split`` on sonar (split 0, notebook settings)."""
    box = {}
    nb = notebook_functions("hinrichs2012_qmkl")  # the notebook's cell functions

    def capture(method, K, y, C, corr, groups, tol, svm_tol):
        box.update(K=K, y=y, Q=hinrichs2012_qmkl.regulariser("Lap(Cov)+B", corr, groups))
        raise _Captured

    nb["fit_mkl"] = capture  # uci_split looks fit_mkl up in the notebook's namespace
    try:
        nb["uci_split"](dataset="sonar", repeat=0, seed=spawn_seeds(2, 10)[0], c_grid=[10.0],
                        sigmas=(2.0 ** np.arange(-3, 7)).tolist(), c_q=1.0, svm_tol=1e-5,
                        mkl_tol_cv=1e-2)
    except _Captured:
        pass
    return box["K"], box["y"], box["Q"]


def bench_sonar(repeats):
    K, y, Q = sonar_inputs()
    settings = {"C": 10.0, "tol": 1e-2, "svm_tol": 1e-5, "max_iter": 500, "check_input": False}

    base = baseline_module()
    rows = {}
    for name, module in (("before", base), ("after", sys.modules["mklcore.qmkl"])):
        step_cls = module.BetaStep
        calls = {"step": [], "support": []}
        step, support = step_cls.step, step_cls.support

        def spy_step(self, W, beta_prev=None, _calls=calls, _step=step):
            _calls["step"].append((np.array(W), None if beta_prev is None else
                                   np.array(beta_prev)))
            return _step(self, W, beta_prev)

        def spy_support(self, G, _calls=calls, _support=support):
            _calls["support"].append(np.array(G))
            return _support(self, G)

        step_cls.step, step_cls.support = spy_step, spy_support
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = module.qmkl_solve(K, y, Q, **settings)
        step_cls.step, step_cls.support = step, support
        rows[name] = {"calls": calls, "result": res, "module": module}
    # replay the same inputs (those of the new code's fit) through both implementations
    calls = rows["after"]["calls"]
    for name, row in rows.items():
        module = row["module"]

        def replay_steps(module=module):
            beta_step = module.BetaStep(Q, "auto")
            for W, beta_prev in calls["step"]:
                beta_step.step(W, beta_prev)

        def replay_supports(module=module):
            beta_step = module.BetaStep(Q, "auto")
            for G in calls["support"]:
                beta_step.support(G)

        def fit(module=module):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module.qmkl_solve(K, y, Q, **settings)

        row["t_step"] = _min_time(replay_steps, repeats)
        row["t_support"] = _min_time(replay_supports, repeats)
        row["t_fit"] = _min_time(fit, repeats)
    return K.shape[0], len(calls["step"]), rows


def _min_cpu(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return float(np.min(times)), out


def bench_notebook_cells(repeats):
    """CPU seconds of one Table 1 fold and one Q-SVM fold, baseline vs this checkout."""
    qm = notebook_functions("hinrichs2012_qmkl")  # the notebook's cell functions and imports
    base = baseline_module(NOTEBOOK_BASELINE_REV, "mklcore.qmkl_notebook_baseline")
    current = sys.modules["mklcore.qmkl"]
    names = ("qmkl_solve", "alpha_correlation", "qsvm_solve")
    cells = {
        "Table 1 fold": lambda: qm["table1_fold"](
            fold=0, repeat=0, seed=spawn_seeds(0, 10)[0], c_grid=[0.1, 1.0, 10.0], c_q=1.0,
            svm_tol=1e-5, mkl_tol=1e-3, mkl_tol_cv=1e-2),
        "Q-SVM fold": lambda: qm["qsvm_fold"](
            fold=0, repeat=0, seed=spawn_seeds(1, 10)[0],
            mus=[0.001, 0.01, 0.1, 1.0, 10.0, 100.0], c_grid=[0.01, 0.1, 1.0, 10.0],
            mu_fixed=10.0, svm_tol=1e-5),
    }
    rows = {}
    for label, module in (("before", base), ("after", current)):
        saved = {n: qm[n] for n in names}
        qm.update({n: getattr(module, n) for n in names})
        try:
            rows[label] = {cell: _min_cpu(fn, repeats) for cell, fn in cells.items()}
        finally:
            qm.update(saved)
    return rows


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

    with threadpool_limits(1):
        M, n_steps, rows = bench_sonar(1 if args.quick else 3)
    before, after = rows["before"], rows["after"]
    print(f"\nUCI sonar, {M} kernels, Q = L_sym(|Corr|) + B + 1e-3 I, C = 10, tol 1e-2: "
          f"{n_steps} beta steps per fit (min of {1 if args.quick else 3} runs, seconds)")
    print(f"{'':<28} {'before':>9} {'after':>9} {'ratio':>8}")
    for key, label in (("t_step", "beta steps (Eq. 8)"), ("t_support", "support functions"),
                       ("t_fit", "whole Q-MKL fit")):
        print(f"{label:<28} {before[key]:>9.3f} {after[key]:>9.3f} "
              f"{before[key] / after[key]:>7.1f}x")
    weight = (before["t_step"] + before["t_support"]) / (after["t_step"] + after["t_support"])
    rb, ra = before["result"], after["result"]
    print(f"fit before: {rb.n_iter} iterations, J = {rb.objective:.12g}; after: {ra.n_iter} "
          f"iterations, J = {ra.objective:.12g}; max |beta diff| / max beta = "
          f"{np.max(np.abs(rb.weights - ra.weights)) / np.max(rb.weights):.1e}")
    print(f"weight step (beta steps + support functions) before / after: {weight:.1f}x "
          f"(target >= 5x: {'met' if weight >= 5 else 'NOT met'})")

    with threadpool_limits(1):
        cells = bench_notebook_cells(1 if args.quick else 3)
    print(f"\nNotebook cells, full-mode settings, CPU seconds (min of {1 if args.quick else 3}"
          f" runs): qmkl of {NOTEBOOK_BASELINE_REV} (before) vs this checkout (after)")
    print(f"{'cell':<16} {'before':>9} {'after':>9} {'ratio':>8} {'rows identical':>15}")
    for cell in cells["before"]:
        (tb, rb), (ta, ra) = cells["before"][cell], cells["after"][cell]
        print(f"{cell:<16} {tb:>9.3f} {ta:>9.3f} {tb / ta:>7.2f}x {str(rb == ra):>15}")
    (tb, rb), (ta, ra) = cells["before"]["Table 1 fold"], cells["after"]["Table 1 fold"]
    print(f"Table 1 fold before / after: {tb / ta:.2f}x (target >= 1.5x with identical rows: "
          f"{'met' if tb / ta >= 1.5 and rb == ra else 'NOT met'})")


if __name__ == "__main__":
    main()
