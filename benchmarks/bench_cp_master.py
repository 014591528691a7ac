"""CPU time of the lp-norm cutting plane (Kloft et al. 2009, Sec. 2.4.2) per master problem.

Figure 1's setting of ``notebooks/kloft2009_lpmkl.ipynb`` (MNIST odd vs even,
``timing_stack(n, M=50)``, C = 1, svm_tol 1e-3, MKL tol 1e-5, interleaved mode with
``mkl_every = max(10, n // 10)``, stop rule "gap"): ``lpmkl_solve(solver="cutting_plane")`` at
p = 4/3 and 2 with each master given, and the sum-kernel SVM on the same data in the same
process; prints CPU seconds (median over repeats), the ratio to the sum kernel and the
log-log slope of time vs n. Run single-threaded under ``nice``::

    OMP_NUM_THREADS=1 nice -n 19 python benchmarks/bench_cp_master.py --masters lp sqclp

Results: ``benchmarks/README.md`` ("The cutting plane's master problem").
"""

import argparse
import time

import numpy as np

from machine import machine_line  # benchmarks/machine.py: what the ratios depend on
from mklcore.lpnorm import lpmkl_solve, sum_kernel_svm_solve
from mklcore.repro.kloft2009_lpmkl import timing_stack, warm_up


def cpu(func):
    t0 = time.process_time()
    res = func()
    return time.process_time() - t0, res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 400, 1600])
    ap.add_argument("--kernels", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--masters", nargs="+", default=[None],
                    help="master options to compare (None: the default)")
    ap.add_argument("--ps", type=float, nargs="+", default=[4 / 3, 2.0])
    ap.add_argument("--quick", action="store_true", help="n in {100, 400}, 1 run (make bench)")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.repeats = [100, 400], 1
    print(machine_line())
    warm_up()
    masters = [None if m in (None, "None", "default") else m for m in args.masters]
    times = {}
    print(f"# MNIST odd vs even, M={args.kernels}, interleaved, tol 1e-5; CPU s (median of "
          f"{args.repeats}); ratio to the sum-kernel SVC")
    for n in args.sizes:
        K, y = timing_stack(n, args.kernels, 0)
        every = max(10, n // 10)
        t_sum = np.median([cpu(lambda: sum_kernel_svm_solve(K, y, check_input=False))[0]
                           for _ in range(args.repeats)])
        times.setdefault("sum kernel", []).append(t_sum)
        print(f"n={n:5d} sum kernel {t_sum:8.4f}s")
        for p in args.ps:
            for m in masters:
                opt = {} if m is None else {"master": m}
                runs = [cpu(lambda: lpmkl_solve(K, y, p=p, solver="cutting_plane", tol=1e-5,
                                                mode="interleaved", mkl_every=every,
                                                stop="gap", check_input=False, **opt))
                        for _ in range(args.repeats)]
                t = float(np.median([r[0] for r in runs]))
                res = runs[-1][1]
                name = f"CP p={p:.4g} master={m or 'default'}"
                times.setdefault(name, []).append(t)
                print(f"n={n:5d} {name:28s} {t:8.4f}s  x{t / t_sum:7.1f} sum  "
                      f"gap {res.gap:.1e} ok={res.success} iters {res.n_iter} "
                      f"masters {res.get('n_master_solves')} J {res.objective:.8g}",
                      flush=True)
    logn = np.log(args.sizes)
    print("# log-log slopes of CPU time vs n")
    for name, ts in times.items():
        print(f"{name:32s} {np.polyfit(logn, np.log(ts), 1)[0]:.2f}")


if __name__ == "__main__":
    main()
