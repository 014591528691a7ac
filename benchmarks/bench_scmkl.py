"""mklcore's approximate path against scMKL (random features + group lasso) on grouped data.

scMKL is never a dependency: it runs in its own virtual environment (``--scmkl-python``,
default ``/work/venv-scmkl/bin/python``; create it with ``python -m venv /work/venv-scmkl &&
/work/venv-scmkl/bin/pip install scmkl``) as a child process on the same arrays, saved to a
temporary folder; its CPU time and peak resident memory are the child's (``resource``), ours
are this process's. Both single-threaded.

Data (``grouped_data``): ``n`` training and 2,000 held-out points, 20 groups of 5 standard
normal features, label ``sign(sum over the 4 informative groups of (||x_g||^2 - 5) + 2 e)``,
``e ~ N(0, 1)`` (a nonlinear signal in four groups; seeded). mklcore: one Gaussian kernel per
group (``gamma = 0.1``), float32 Nyström factors of rank 128 per kernel, lp-norm MKL p = 2
solved in the primal (``factor_lpmkl_solve``, rigorous gap <= 1e-3), C = 1; printed beside
it: the gap and the kernel errors. scMKL 0.5.x: ``create_adata`` (no scaling, our split),
``estimate_sigma``, ``calculate_z`` (its default number of random features), ``train_model``
(group lasso, ``alpha``), ``predict``; it reports neither a duality gap nor a kernel error.

Usage::

    python benchmarks/bench_scmkl.py --n 10000 50000
"""

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from mklcore.factormkl import factor_lpmkl_solve
from mklcore.kernels import KernelBank, gaussian
from mklcore.lowrank import LowRankStack

from machine import machine_line  # benchmarks/machine.py

GROUPS, WIDTH, INFORMATIVE, N_TEST = 20, 5, 4, 2000

SCMKL_CHILD = r'''
import json, resource, sys, time
import numpy as np
import scmkl
folder, alpha = sys.argv[1], float(sys.argv[2])
X = np.load(folder + "/X.npy"); y = np.load(folder + "/y.npy"); split = np.load(folder + "/split.npy")
groups = json.load(open(folder + "/groups.json"))
names = np.array([f"f{j}" for j in range(X.shape[1])])
group_dict = {g: np.array(cols) for g, cols in groups.items()}
t0 = time.process_time()
adata = scmkl.create_adata(X=X, feature_names=names, cell_labels=y, group_dict=group_dict,
                           split_data=split, scale_data=False, random_state=1)
adata = scmkl.estimate_sigma(adata)
adata = scmkl.calculate_z(adata)
adata = scmkl.train_model(adata, alpha=alpha)
cpu = time.process_time() - t0
out = scmkl.predict(adata, metrics=["Accuracy"])
acc = out[1]["Accuracy"] if isinstance(out, tuple) else out["Accuracy"]
print(json.dumps({"cpu": cpu, "accuracy": float(acc), "D": int(adata.uns["D"]),
                  "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20}))
'''


def grouped_data(n, seed=0):
    """``n + N_TEST`` points of the grouped problem (see the module docstring)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + N_TEST, GROUPS * WIDTH))
    signal = sum((X[:, g * WIDTH:(g + 1) * WIDTH] ** 2).sum(axis=1) - WIDTH
                 for g in range(INFORMATIVE))
    y = np.where(signal + 2.0 * rng.normal(size=n + N_TEST) > 0, 1.0, -1.0)
    return X, y


def run_mklcore(X, y, n, rank, p=2.0):
    kernels = [gaussian(gamma=0.1, columns=tuple(range(g * WIDTH, (g + 1) * WIDTH)))
               for g in range(GROUPS)]
    t0, w0 = time.process_time(), time.perf_counter()
    bank = KernelBank(kernels=kernels).fit(X[:n])
    R = LowRankStack(bank, rank, dtype=np.float32, error_sample=300)
    res = factor_lpmkl_solve(R, y[:n], p=p, C=1.0, tol=1e-3)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    f = R.decision(X[n:], res.weights, res.dual_coef, res.intercept)
    acc = float(np.mean(np.sign(f) == y[n:]))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
    top = np.argsort(res.weights)[::-1][:INFORMATIVE]
    print(f"  mklcore (Nystroem rank {rank}, p = {p:g}): CPU {cpu:.1f} s, wall {wall:.1f} s, peak "
          f"RSS {peak:.2f} GB (process so far), accuracy {acc:.4f}, gap {res.gap:.1e}, "
          f"success {res.success}, kernel error {res.kernel_error.min():.3f}.."
          f"{res.kernel_error.max():.3f}, largest weights on groups {sorted(top.tolist())}",
          flush=True)


def run_scmkl(X, y, n, python, alpha):
    with tempfile.TemporaryDirectory() as folder:
        np.save(f"{folder}/X.npy", X)
        np.save(f"{folder}/y.npy", np.where(y > 0, "pos", "neg"))
        np.save(f"{folder}/split.npy", np.array(["train"] * n + ["test"] * N_TEST))
        groups = {f"g{g}": [f"f{j}" for j in range(g * WIDTH, (g + 1) * WIDTH)]
                  for g in range(GROUPS)}
        Path(f"{folder}/groups.json").write_text(json.dumps(groups))
        env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "NUMBA_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
        w0 = time.perf_counter()
        proc = subprocess.run([python, "-c", SCMKL_CHILD, folder, str(alpha)],
                              capture_output=True, text=True, env=env)
        wall = time.perf_counter() - w0
    if proc.returncode != 0:
        print(f"  scMKL failed (return code {proc.returncode}, negative: killed by that signal):"
              f" {proc.stderr[-2000:]}")
        return
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"  scMKL (D = {out['D']}, alpha = {alpha}): CPU {out['cpu']:.1f} s, wall {wall:.1f} "
          f"s, peak RSS {out['peak_gb']:.2f} GB, accuracy {out['accuracy']:.4f}, gap and "
          f"kernel error not reported", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10000, 50000])
    parser.add_argument("--rank", type=int, default=128)
    parser.add_argument("--alpha", type=float, default=0.9, help="scMKL's group lasso alpha")
    parser.add_argument("--scmkl-python", default="/work/venv-scmkl/bin/python")
    parser.add_argument("--p", type=float, nargs="+", default=[2.0], help="our norms p")
    parser.add_argument("--no-scmkl", action="store_true", help="mklcore only")
    args = parser.parse_args()
    print(machine_line())
    with threadpool_limits(1):
        for n in args.n:
            X, y = grouped_data(n)
            print(f"grouped data: n = {n} training, {N_TEST} held-out, {GROUPS} groups of "
                  f"{WIDTH} features, {INFORMATIVE} informative", flush=True)
            if not args.no_scmkl:
                run_scmkl(X, y, n, args.scmkl_python, args.alpha)
            for p in args.p:
                run_mklcore(X, y, n, args.rank, p)


if __name__ == "__main__":
    sys.exit(main())
