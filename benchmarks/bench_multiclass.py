"""Benchmark: multiclass MKL (one-vs-rest, kernel weights shared) against SVC on the summed kernel.

scikit-learn's 8 x 8 digits (1797 points, 10 classes) on random stratified 50/50 splits:
pixels scaled to [0, 1]; or (``--dataset letter``) the UCI/KEEL letter set (26 classes): a
stratified sample of ``LETTER_SAMPLE`` = 5000 of its 20000 points (seed 0), random stratified
80/20 splits of it (4000 training points), the 16 integer features scaled to [0, 1]. Then a bank of Gaussian kernels :math:`\\exp(-D/(s\\,d_{med}))` with
``s`` in (0.25, 0.5, 1, 2, 4), a linear and a quadratic polynomial kernel, each
trace-normalised on the training points. ``C`` is chosen by 3-fold cross-validation on the
training part from ``C_GRID`` for every method. The reference is ``sklearn.svm.SVC``
(one-vs-one, its default) on the sum of the same kernels. Prints the mean test accuracy,
its difference to the SVC, the fit time with the chosen C and the kernel weights.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_multiclass.py [--splits 3] [--quick]
        [--dataset letter] [--methods "LpMKL p=2 (shared)" ...] [--first-split 1]

With ``--dataset letter`` the script also prints the CPU time of each method's C search.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.svm import SVC

from mklcore import decision
from machine import machine_line  # benchmarks/machine.py: what the timings depend on
from mklcore.datasets import load_digits, load_letter
from mklcore.kernels import KernelBank, gaussian, linear, polynomial
from mklcore.lpnorm import lpmkl_solve, sum_kernel_svm_solve
from mklcore.simplemkl import simplemkl_solve

C_GRID = (1.0, 10.0, 100.0)
LETTER_SAMPLE = 5000
BANK = [gaussian(sigma="median", scale=s) for s in (0.25, 0.5, 1.0, 2.0, 4.0)] + [
    linear(), polynomial(degree=2, coef0=1.0)]


def _svc(K, y, C):
    return SVC(kernel="precomputed", C=C).fit(K.sum(0), y)


METHODS = {
    "SVC (sklearn ovo, sum)": _svc,
    "sum kernel (ovr)": lambda K, y, C: sum_kernel_svm_solve(K, y, C=C),
    "LpMKL p=2 (shared)": lambda K, y, C: lpmkl_solve(K, y, p=2.0, C=C),
    "LpMKL p=4/3 (shared)": lambda K, y, C: lpmkl_solve(K, y, p=4 / 3, C=C),
    "SimpleMKL (shared)": lambda K, y, C: simplemkl_solve(K, y, C=C),
}


def _predict(model, K_test, classes):
    if isinstance(model, SVC):
        return model.predict(K_test.sum(0))
    return classes[np.argmax(decision(model, K_test), axis=1)]


def _data(dataset):
    """Features in [0, 1], integer labels, the test fraction and a description."""
    if dataset == "digits":
        X, y = load_digits(return_X_y=True)
        return X / 16.0, y, 0.5, "stratified 50/50 splits"
    X, y = load_letter(return_X_y=True)
    X, _, y, _ = train_test_split(X, y, train_size=LETTER_SAMPLE, stratify=y, random_state=0)
    y = np.unique(y, return_inverse=True)[1]
    return X / 15.0, y, 0.2, f"stratified {LETTER_SAMPLE}-point sample, stratified 80/20 splits"


def main(n_splits=3, dataset="digits", first_split=0):
    """Run every method on splits ``first_split, ..., first_split + n_splits - 1`` (the seed of
    each split); print the table."""
    X, y, test_size, protocol = _data(dataset)
    classes = np.unique(y)
    acc = {m: [] for m in METHODS}
    times = {m: [] for m in METHODS}
    cv_times = {m: [] for m in METHODS}
    weights = {m: [] for m in METHODS}
    for seed in range(first_split, first_split + n_splits):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size, random_state=seed,
                                                  stratify=y)
        bank = KernelBank(kernels=BANK, normalize="trace")
        K, K_te = bank.fit_transform(X_tr), None
        K_te = bank.transform(X_te)
        folds = list(StratifiedKFold(3, shuffle=True, random_state=seed).split(X_tr, y_tr))
        for method, solve in METHODS.items():
            t_cv = time.process_time()
            scores = np.zeros((len(folds), len(C_GRID)))
            for f, (tr, va) in enumerate(folds):  # slice each fold's stacks once
                K_tr, K_va = K[:, tr][:, :, tr], K[:, va][:, :, tr]
                for c, C in enumerate(C_GRID):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model = solve(K_tr, y_tr[tr], C)
                    scores[f, c] = np.mean(_predict(model, K_va, classes) == y_tr[va])
                del K_tr, K_va
            C = C_GRID[int(np.argmax(scores.mean(0)))]
            cv_times[method].append(time.process_time() - t_cv)
            t0 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = solve(K, y_tr, C)
            times[method].append(time.process_time() - t0)
            acc[method].append(np.mean(_predict(model, K_te, classes) == y_te))
            if not isinstance(model, SVC):
                weights[method].append(np.round(model.weights, 3))
            if dataset != "digits":
                print(f"    split {seed} {method}: C={C:g} acc {acc[method][-1]:.4f} "
                      f"fit {times[method][-1]:.1f} s, C search {cv_times[method][-1]:.1f} s CPU",
                      flush=True)
    print(f"{dataset}: n={len(y)}, {len(classes)} classes, {len(BANK)} kernels, "
          f"{n_splits} {protocol} (seeds {first_split}-{first_split + n_splits - 1})")
    ref = np.array(acc["SVC (sklearn ovo, sum)"])
    for method in METHODS:
        a = np.array(acc[method])
        print(f"  {method:24s} acc {100 * a.mean():6.2f} ± {100 * a.std():4.2f}   minus SVC "
              f"{100 * np.mean(a - ref):+5.2f} pts   fit {np.mean(times[method]):6.2f} s"
              + (f"   C search {np.mean(cv_times[method]):7.1f} s" if dataset != "digits" else "")
              + (f"   weights {weights[method][0].tolist()}" if weights[method] else ""),
              flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=3, help="random splits")
    parser.add_argument("--quick", action="store_true", help="one split, C = 10 (no search)")
    parser.add_argument("--dataset", choices=("digits", "letter"), default="digits")
    parser.add_argument("--first-split", type=int, default=0,
                        help="seed of the first split (run more splits of a run in parts)")
    parser.add_argument("--methods", nargs="*", choices=list(METHODS),
                        help="only these methods (the SVC is always run)")
    args = parser.parse_args()
    if args.methods:
        METHODS = {m: f for m, f in METHODS.items()
                   if m == "SVC (sklearn ovo, sum)" or m in args.methods}
    print(machine_line())
    if args.quick:
        C_GRID = (10.0,)
    main(1 if args.quick else args.splits, args.dataset, args.first_split)
