r"""Experiments of ``notebooks/gonen2008_lmkl.ipynb`` (Gönen & Alpaydın, ICML 2008).

Reproduces M. Gönen and E. Alpaydın, "Localized multiple kernel learning", Proceedings of the
25th International Conference on Machine Learning (ICML 2008), pp. 352–359,
https://doi.org/10.1145/1390156.1390201. The notebook keeps its cells thin and calls the
functions below; equation, section, figure and table numbers are the paper's.

Localized MKL (LMKL) learns the discriminant (eq. 4)
:math:`f(x) = \sum_m \eta_m(x) \langle w_m, \Phi_m(x)\rangle + b` with a softmax gating model
:math:`\eta_m(x)` (Sec. 2). For a fixed gating the primal (5) is an SVM whose dual (7) uses the
locally combined kernel :math:`K_\eta(x_i, x_j) = \sum_m \eta_m(x_i) K_m(x_i, x_j) \eta_m(x_j)`;
Algorithm 1 alternates that SVM with gradient steps on the gating parameters. The solver is
:func:`mklcore.localized.lmkl_solve`; the MKL baseline (Bach et al. 2004) is SimpleMKL.

What each function reproduces:

* Protocol of Sec. 4 (one third test, 5×2 cv for :math:`C \in \{0.01, 0.1, 1, 10, 100\}`,
  unit-trace kernels; the grid is applied as :math:`C N` with :math:`N` the training-fold
  size, see :func:`prepare`): :class:`Protocol`, :func:`make_protocol`, :func:`load`,
  :func:`splits`, :func:`data_table`, :func:`prepare`, :func:`test_stacks`,
  :func:`fold_seed`, :func:`fit_method`, :func:`decide`, :func:`protocol_fold` (one fold,
  the cell function of :func:`mklcore.repro.experiments.run`), :func:`run_protocol`,
  :func:`select_C`,
  :func:`per_method`, :func:`fold_diffs`, :func:`f_test` (5×2 cv paired F test, Alpaydın
  1999), :func:`literal_grid` (the paper's grid on unit-trace kernels without the factor N),
  :func:`convergence`.
* Gradient of :math:`J(\eta)` with respect to the gating parameters (Sec. 2) checked against
  finite differences: :func:`gradient_check`.
* Figures 1–2 (Gauss4, Sec. 4.1): :func:`fit_models` (the refits of the figures, in the
  worker processes, each model once), :func:`boundary_model`, :func:`grid_values`,
  :func:`panel_grid`, :func:`draw_panel`, :func:`boundary_figure`, :func:`figure1`,
  :func:`figure2`, :func:`gauss4_rows`.
* Figure 3 (Banana, Sec. 4.2): :func:`figure3`, :func:`banana_f_tests`, :func:`banana_rows`,
  and the test-time cost of gate thresholding (Sec. 3.1): :func:`gate_variants`.
* Table 1 (Sec. 4.2): :func:`pairs`, :func:`pair_tests`, :func:`table_view`, :func:`counts`,
  :func:`counts_lines`, :func:`wilcoxon_table`, :func:`plot_sv_scatter`, :func:`table1_rows`.
* Table 2 stand-in (Sec. 4.3; UCI splice instead of the TIS sets): :func:`splice_rows`.
* Claims and checks: :func:`value`, :func:`lmkl_fits`, :func:`gain_claim`,
  :func:`equivalence_claim`, :func:`all_sets_claim`, :func:`claims_for`, :func:`claims`,
  :func:`paper_rows`, :func:`differences`, :func:`sanity_check`, :func:`summary_table`.
"""

import time
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap

from .. import datasets, decision
from ..kernels import fit_kernels, kernel_bank, kernel_stack, normalize_cosine, normalize_trace
from ..localized import (LMKLClassifier, lmkl_decision, lmkl_objective, lmkl_solve,
                         locally_combined_kernel, softmax_gating)
from ..simplemkl import simplemkl_solve
from ..svm import svm_solve
from .experiments import (cv52_f_test, kfold_splits, repeated_splits, run, spawn_seeds,
                          subsample, wilcoxon)
from .plotting import method_palette
from .reporting import INCONCLUSIVE, Claim, equivalence_verdict, gain_verdict
from .reporting import summary_table as summary_schema

__all__ = [
    "lmkl_path",
    "PAPER_ID", "C_GRID", "GAUSS4", "TABLE1", "QUICK_TABLE1", "ASSUMED", "QUICK_CAPS",
    "BASE_METHODS", "METHODS", "NORM_SUFFIX", "NORM_NAME", "NORM_FILE", "FIG_METHODS",
    "T1_BASE", "G4_METHODS", "T1_METHODS", "BANANA_METHODS", "SV_TOL", "ALPHA", "EQUIV_MARGIN",
    "CRISP_GATE", "CACHE_VERSION", "CLAIM_SOURCE", "Protocol", "make_protocol", "load",
    "splits", "data_table", "prepare", "test_stacks", "fold_seed", "fit_method", "decide",
    "protocol_fold", "run_protocol", "select_C", "per_method", "fold_diffs", "f_test",
    "literal_grid", "convergence", "gradient_check", "fit_models", "boundary_model",
    "grid_values", "panel_grid", "draw_panel", "boundary_figure", "figure1", "figure2",
    "figure3", "value", "gauss4_rows",
    "banana_f_tests", "banana_rows", "gate_variants", "pairs", "pair_tests", "table_view",
    "counts", "counts_lines", "wilcoxon_table", "plot_sv_scatter", "table1_rows",
    "splice_rows", "paper_rows", "lmkl_fits", "gain_claim", "equivalence_claim",
    "all_sets_claim", "EQUIV_RULE", "claims_for", "claims", "differences", "sanity_check",
    "summary_table",
]

PAPER_ID = "gonen2008_lmkl"

#: the values of C tried on the validation folds (Sec. 4). With the paper's unit-trace kernels
#: every value is multiplied by the training-fold size N (see :func:`prepare`): a unit-trace
#: kernel has entries of order 1/N, and the grid taken literally over-regularises most
#: methods (:func:`literal_grid` measures it)
C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)
#: Gauss4 with the recalled class -1 variance 4 ("recalled") and with equal variances ("equal")
GAUSS4 = ("gauss4_equal", "gauss4_recalled")
#: the ten Table 1 sets: five named in Sec. 4.2, five assumed (their names are lost)
TABLE1 = ("banana", "heart", "pima", "spambase", "wdbc",
          "german", "ionosphere", "bupa", "ringnorm", "sonar")
#: the Table 1 sets of the quick mode
QUICK_TABLE1 = ("banana", "heart", "pima", "wdbc")
#: Table 1 sets whose membership is assumed
ASSUMED = frozenset({"german", "ionosphere", "bupa", "ringnorm", "sonar"})
#: quick mode: data sets subsampled (stratified) to these sizes
QUICK_CAPS = {"gauss4_equal": 600, "gauss4_recalled": 600, "banana": 1000, "splice": 600}

#: methods: name -> (family, indices of the kernels combined: 0 = K_L, 1 = K_P, 2 = K_G)
BASE_METHODS = {
    "SVM K_L": ("svm", [0]), "SVM K_P": ("svm", [1]), "SVM K_G": ("svm", [2]),
    "MKL K_L-K_P": ("mkl", [0, 1]), "LMKL K_L-K_P": ("lmkl", [0, 1]),
    "MKL K_P-K_G": ("mkl", [1, 2]), "LMKL K_P-K_G": ("lmkl", [1, 2]),
    "LMKL K_L-K_L-K_L": ("lmkl", [0, 0, 0]),
}
#: every method with unit-trace kernels and C x N ("trace", Sec. 4) and with unit-diagonal
#: kernels ("diag", the suffix " [diag]"; the normalisation of Gönen's later LMKSVM code)
METHODS = {name: (fam, idx, "trace") for name, (fam, idx) in BASE_METHODS.items()}
METHODS.update({f"{name} [diag]": (fam, idx, "diag") for name, (fam, idx) in BASE_METHODS.items()})
#: normalisation name -> method-name suffix
NORM_SUFFIX = {"unit_trace": "", "unit_diagonal": " [diag]"}
#: method-name suffix -> readable normalisation
NORM_NAME = {"": "unit trace, C x N", " [diag]": "unit diagonal"}
#: method-name suffix -> file-name part of the tables written beside the report
NORM_FILE = {"": "unit_trace", " [diag]": "unit_diagonal"}
FIG_METHODS = ["MKL K_L-K_P", "LMKL K_L-K_P", "LMKL K_L-K_L-K_L"]
T1_BASE = ["SVM K_L", "SVM K_P", "SVM K_G", "MKL K_P-K_G", "LMKL K_P-K_G", "LMKL K_L-K_L-K_L"]
G4_METHODS = [m + sfx for sfx in ("", " [diag]") for m in ["SVM K_L", "SVM K_G"] + FIG_METHODS]
T1_METHODS = [m + sfx for sfx in ("", " [diag]") for m in T1_BASE]
BANANA_METHODS = T1_METHODS + [m + sfx for sfx in ("", " [diag]") for m in FIG_METHODS[:2]]
#: alpha_i > SV_TOL * C counts as a support vector, for every method
SV_TOL = 1e-3
#: level of the 5x2 cv F test, of the Wilcoxon test and of the one-sided gain tests
ALPHA = 0.05
#: "as accurate as": the 90 % interval of the accuracy difference within +- this many points
EQUIV_MARGIN = 2.0
#: the gates are "crisp" when the mean maximal gate reaches this value
CRISP_GATE = 0.9
#: part of the cache key of :func:`protocol_fold`; bump after changing the experiment code
CACHE_VERSION = 2

#: where in the paper each claim is made (claim id prefix -> location)
CLAIM_SOURCE = {
    "C1": "Sec. 2 (gradient of J)", "C2": "Sec. 2, Algorithm 1", "C3": "Sec. 4.1, Fig. 1-2",
    "C4": "Sec. 4.2, Fig. 3", "C5": "Sec. 4.2, Table 1", "C6": "Sec. 4.2, Table 1",
    "C7": "Sec. 4.3, Table 2",
}


@dataclass
class Protocol:
    """Settings of one run of the experimental protocol of Sec. 4.

    Parameters
    ----------
    table1 : list of str
        Table 1 data sets run.
    n_rep : int
        Replications of 2-fold cv (the paper: 5, i.e. 5×2 cv).
    n_iter : int
        LMKL gating updates (the paper: 50).
    caps : dict
        Data set -> maximal number of points (stratified subsample above it).
    seed : int, default=0
        Master seed.
    n_jobs : int, default=1
        Worker processes of :func:`mklcore.repro.experiments.run`.
    C_grid : list of float, default=list(C_GRID)
        Values of C tried on the validation folds.
    cache_dir : path-like or None, default=None
        Cache of finished folds (None: always recompute).
    folds : dict
        Counters ``{"cached": int, "computed": int}`` of protocol folds, updated by
        :func:`run_protocol`.
    models : dict
        Models refitted by :func:`fit_models` (for the figures), keyed by ``(dataset, fold,
        method, C)``: each is fitted once per protocol and shared by the figures that draw it.
    """

    table1: list
    n_rep: int
    n_iter: int
    caps: dict
    seed: int = 0
    n_jobs: int = 1
    C_grid: list = field(default_factory=lambda: list(C_GRID))
    cache_dir: object = None
    folds: dict = field(default_factory=lambda: {"cached": 0, "computed": 0})
    models: dict = field(default_factory=dict, repr=False)

    @property
    def data_seed(self):
        """int : the seed :func:`mklcore.repro.experiments.run` passes to repeat 0."""
        return spawn_seeds(self.seed, 1)[0]


def make_protocol(quick, *, seed=0, n_jobs=1, n_iter=50, max_samples=1500, cache_dir=None):
    """Protocol of the quick (CI) or the full run.

    Parameters
    ----------
    quick : bool
        Quick mode: four Table 1 sets, one 2-fold cv replication, 20 LMKL iterations and the
        sizes of :data:`QUICK_CAPS`.
    seed : int, default=0
        Master seed.
    n_jobs : int, default=1
        Worker processes.
    n_iter : int, default=50
        LMKL iterations of the full run (the paper: 50).
    max_samples : int, default=1500
        Full run: every data set is subsampled (stratified) to at most this size.
    cache_dir : path-like or None, default=None
        Cache of finished folds.

    Returns
    -------
    protocol : Protocol
    """
    table1 = list(QUICK_TABLE1 if quick else TABLE1)
    caps = (dict(QUICK_CAPS) if quick
            else {name: max_samples for name in table1 + ["splice"] + list(GAUSS4)})
    return Protocol(table1=table1, n_rep=1 if quick else 5, n_iter=20 if quick else n_iter,
                    caps=caps, seed=seed, n_jobs=n_jobs, cache_dir=cache_dir)


def load(name, seed, cap):
    """Load a data set with labels in {-1, +1}, subsampled (stratified) to ``cap`` rows.

    Parameters
    ----------
    name : str
        ``"gauss4_equal"``, ``"gauss4_recalled"`` (1200 points, Sec. 4.1), ``"splice"`` (UCI
        splice, EI vs rest, each nucleotide one-hot coded with 5 bits A, C, G, T, other: the
        stand-in of the TIS sets of Sec. 4.3) or a name known to
        :func:`mklcore.datasets.load_dataset`.
    seed : int
        Seed of the Gauss4 draw and of the subsample.
    cap : int or None
        Maximal number of rows.

    Returns
    -------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels in {-1, +1} (+1 = the largest class label).
    """
    if name.startswith("gauss4_"):
        X, y = datasets.make_gauss4(1200, variant=name.split("_", 1)[1], random_state=seed)
    elif name == "splice":
        bunch = datasets.load_splice()
        seqs = np.asarray(bunch.data)
        onehot = [seqs == base for base in "ACGT"] + [~np.isin(seqs, list("ACGT"))]
        X = np.stack(onehot, axis=-1).reshape(len(seqs), -1)
        y = np.asarray(bunch.target) == "EI"
    else:
        X, y = datasets.load_dataset(name, return_X_y=True)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    y = np.where(y == np.unique(y)[-1], 1.0, -1.0)
    if cap is not None and len(y) > cap:
        idx = subsample(y, cap, seed)
        X, y = X[idx], y[idx]
    return X, y


def splits(y, seed, n_rep):
    """Splits of Sec. 4: a stratified third as test set, ``n_rep`` × 2 cv on the rest.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels.
    seed : int
        Seed of both splits.
    n_rep : int
        Replications of the stratified 2-fold split.

    Returns
    -------
    folds : list of tuple
        ``2 * n_rep`` triples ``(train, validation, test)`` of index arrays.
    """
    outer = repeated_splits(y, n_repeats=1, test_size=1 / 3, seed=seed)[0]
    rest, test = outer["train"], outer["test"]
    folds = kfold_splits(y[rest], n_splits=2, n_repeats=n_rep, seed=seed)
    return [(rest[f["train"]], rest[f["test"]], test) for f in folds]


def data_table(protocol):
    """Sizes of every data set run (before and after subsampling), its first training fold
    and its test set.

    Parameters
    ----------
    protocol : Protocol
        The run's settings.

    Returns
    -------
    table : pandas.DataFrame
    """
    rows = []
    for name in list(GAUSS4) + protocol.table1 + ["splice"]:
        X, y = load(name, protocol.data_seed, protocol.caps.get(name))
        n_all = len(load(name, protocol.data_seed, None)[1])
        tr, va, te = splits(y, protocol.data_seed, protocol.n_rep)[0]
        rows.append({"data set": name + (" (assumed)" if name in ASSUMED else ""),
                     "n (all)": n_all, "n": len(y), "d": X.shape[1], "class +1": int((y > 0).sum()),
                     "class -1": int((y < 0).sum()), "train fold": len(tr), "test": len(te)})
    return pd.DataFrame(rows)


def prepare(dataset, fold, *, n_rep, cap, seed):
    """Data, splits, standardisation and Gram matrices of one fold.

    Inputs are z-scored with the training fold's mean and standard deviation (features
    constant on it dropped). Kernels (Sec. 4): :math:`K_L = \\langle x, x'\\rangle`,
    :math:`K_P = (\\langle x, x'\\rangle + 1)^2`, :math:`K_G = \\exp(-\\|x - x'\\|^2 / s^2)`
    with :math:`s` the mean nearest-neighbour distance of the training fold. Training Grams
    are normalised to trace :math:`N` (the training-fold size) and to unit diagonal; test
    blocks use the training factors. Trace :math:`N` is the paper's unit trace with every
    :math:`C` multiplied by :math:`N`: the SVM dual with :math:`K/N` and :math:`CN` equals
    the one with :math:`K` and :math:`C` after :math:`\\alpha \\to N\\alpha` (same decision
    function, same support vectors).

    Parameters
    ----------
    dataset : str
        Data set name (see :func:`load`).
    fold : int
        Index of the (training, validation) pair of :func:`splits`.
    n_rep : int
        Replications of 2-fold cv.
    cap : int or None
        Maximal data set size.
    seed : int
        Data seed.

    Returns
    -------
    p : dict
        ``X, y, tr, va, te`` (data and index arrays), ``std`` (the standardisation),
        ``bank, factors, d_tr`` (fitted kernels, trace factors, raw training diagonals),
        ``Xtr, Xva, Xte`` (standardised inputs), ``Ktr, Kva, Kte`` (trace N) and
        ``Ktr_diag, Kva_diag, Kte_diag`` (unit diagonal) stacks.
    """
    X, y = load(dataset, seed, cap)
    tr, va, te = splits(y, seed, n_rep)[fold]
    mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
    keep = sd > 0  # drop features constant on the training fold

    def std(A):
        return (A[:, keep] - mu[keep]) / sd[keep]

    Xtr, Xva, Xte = std(X[tr]), std(X[va]), std(X[te])
    bank = fit_kernels(kernel_bank("lmkl"), Xtr)
    raw = kernel_stack(bank, Xtr)
    d_tr = np.einsum("mii->mi", raw)
    Ktr, factors = normalize_trace(raw, target="n")
    p = dict(X=X, y=y, tr=tr, va=va, te=te, std=std, bank=bank, factors=factors, d_tr=d_tr,
             Xtr=Xtr, Xva=Xva, Xte=Xte, Ktr=Ktr, Ktr_diag=normalize_cosine(raw))
    for part, Z in (("va", Xva), ("te", Xte)):
        p[f"K{part}"], p[f"K{part}_diag"] = test_stacks(p, Z)
    return p


def test_stacks(p, Z):
    """Trace-N and unit-diagonal stacks between ``Z`` (rows) and the training fold.

    Parameters
    ----------
    p : dict
        A fold from :func:`prepare`.
    Z : ndarray of shape (n_test, d)
        Standardised test inputs.

    Returns
    -------
    K_trace, K_diag : ndarray of shape (3, n_test, n_train)
    """
    raw = kernel_stack(p["bank"], Z, p["Xtr"])
    d_rows = np.stack([k.diag(Z) for k in p["bank"]])
    return (normalize_trace(raw, p["factors"])[0],
            normalize_cosine(raw, d_rows, p["d_tr"], copy=False))


def lmkl_path(res, key):
    """One quantity of an LMKL fit over its iterations, the initial gating first.

    Parameters
    ----------
    res : MKLResult
        A result of :func:`mklcore.lmkl_solve` (its ``history`` has one row per gating
        update; ``initial`` holds the row of the initial gating, line 1 of Algorithm 1).
    key : str
        A history key, e.g. ``"objective"``, ``"max_gate"`` or ``"gating_coef"``.

    Returns
    -------
    values : ndarray of shape (n_iter + 1, ...)
    """
    first = np.asarray(res.initial[key])[None]
    return np.concatenate([first, np.asarray(res.history[key]).reshape(-1, *first.shape[1:])])


def fold_seed(seed, fold):
    """Seed of the LMKL initial gating on one fold (the same for every method and C).

    Parameters
    ----------
    seed : int
        Data seed (:attr:`Protocol.data_seed`).
    fold : int
        Fold index of :func:`splits`.

    Returns
    -------
    fit_seed : int
    """
    return int(np.random.SeedSequence([seed, fold]).generate_state(1)[0])


def fit_method(p, method, C, *, n_iter, seed, **lmkl_options):
    """Train one method of :data:`METHODS` on the training fold.

    Parameters
    ----------
    p : dict
        A fold from :func:`prepare`.
    method : str
        Key of :data:`METHODS`.
    C : float
        Regularisation parameter.
    n_iter : int
        LMKL iterations.
    seed : int
        LMKL initialisation seed.
    **lmkl_options
        Extra options of :func:`mklcore.localized.lmkl_solve`.

    Returns
    -------
    result : MKLResult
        SVM (dual (7) with one kernel), MKL (SimpleMKL) or LMKL (Algorithm 1) result.
    """
    family, idx, norm = METHODS[method]
    K = (p["Ktr"] if norm == "trace" else p["Ktr_diag"])[idx]
    y = p["y"][p["tr"]]
    if family == "svm":
        return svm_solve(K[0], y, C=C, tol=1e-3)
    if family == "mkl":
        return simplemkl_solve(K, y, C=C, check_input=False)
    return lmkl_solve(K, y, p["Xtr"], C=C, max_iter=n_iter, random_state=seed, check_input=False,
                      **lmkl_options)


def decide(method, res, stacks, Z):
    """Decision values of a fitted method on test stacks.

    Parameters
    ----------
    method : str
        Key of :data:`METHODS`.
    res : MKLResult
        Result of :func:`fit_method`.
    stacks : tuple of ndarray
        (trace-N, unit-diagonal) test stacks, from :func:`test_stacks`.
    Z : ndarray of shape (n_test, d)
        Standardised test inputs (the gating inputs of LMKL).

    Returns
    -------
    f : ndarray of shape (n_test,)
        For LMKL the gated discriminant (8).
    """
    family, idx, norm = METHODS[method]
    K = stacks[0] if norm == "trace" else stacks[1]
    if family == "svm":
        return K[idx[0]] @ res.dual_coef + res.intercept
    if family == "mkl":
        return decision(res, K[idx])
    return lmkl_decision(res, K[idx], Z)


def protocol_fold(*, dataset, fold, methods, Cs, lmkl_iter, n_rep, cap, version, repeat, seed):
    """Train every method for every C on one fold (cell function of ``experiments.run``).

    Parameters
    ----------
    dataset : str
        Data set name.
    fold : int
        Fold index of :func:`splits`.
    methods : list of str
        Keys of :data:`METHODS`.
    Cs : list of float
        Values of C.
    lmkl_iter : int
        LMKL iterations.
    n_rep : int
        Replications of 2-fold cv.
    cap : int or None
        Maximal data set size.
    version : int
        Cache version (:data:`CACHE_VERSION`); unused otherwise.
    repeat : int
        Repeat index given by ``experiments.run`` (unused).
    seed : int
        Data seed given by ``experiments.run``.

    Returns
    -------
    rows : list of dict
        One row per (method, C): validation and test accuracy (%), support-vector percentage,
        kernel weights (MKL: :math:`\\beta`; LMKL: mean gate), iterations, fit time and, for
        LMKL, the first and last objective, monotonicity of :math:`J`, mean maximal gate and
        number of SVM solves; ``status`` is the solver's status (0: its stopping rule was met;
        -1: not reported, as for LIBSVM's single SVMs, which run without an iteration cap).
    """
    p = prepare(dataset, fold, n_rep=n_rep, cap=cap, seed=seed)
    y = p["y"]
    fit_seed = fold_seed(seed, fold)
    rows = []
    for method in methods:
        family = METHODS[method][0]
        for C in Cs:
            t0 = time.perf_counter()
            res = fit_method(p, method, C, n_iter=lmkl_iter, seed=fit_seed)
            fit_time = time.perf_counter() - t0
            alpha = np.abs(res.dual_coef)
            row = {"method": method, "C": C, "fit_time": fit_time,
                   "val_acc": 100 * np.mean(np.sign(decide(
                       method, res, (p["Kva"], p["Kva_diag"]), p["Xva"])) == y[p["va"]]),
                   "test_acc": 100 * np.mean(np.sign(decide(
                       method, res, (p["Kte"], p["Kte_diag"]), p["Xte"])) == y[p["te"]]),
                   "sv_pct": 100 * np.mean(alpha > SV_TOL * C),
                   "weights": [float(w) for w in np.atleast_1d(res.get("weights", [1.0]))],
                   "n_iter": 1 if family == "svm" else int(res.n_iter),
                   "status": int(res.get("status", -1)),
                   "n_train": len(p["tr"])}
            if family == "lmkl":
                J, gate = lmkl_path(res, "objective"), lmkl_path(res, "max_gate")
                row.update(J_first=J[0], J_last=J[-1], monotone=bool(np.all(np.diff(J) <= 0)),
                           max_gate_first=gate[0], max_gate_last=gate[-1],
                           n_svm_calls=res.n_svm_calls)
            rows.append(row)
    return rows


def run_protocol(protocol, names, methods, desc):
    """Run :func:`protocol_fold` on every fold of the given data sets.

    Parameters
    ----------
    protocol : Protocol
        The run's settings; its fold counters are updated.
    names : list of str
        Data sets.
    methods : list of str
        Keys of :data:`METHODS`.
    desc : str
        Progress-bar label.

    Returns
    -------
    df : pandas.DataFrame
        One row per (data set, fold, method, C).
    """
    grid = [dict(dataset=name, fold=fold, methods=methods, Cs=protocol.C_grid,
                 lmkl_iter=protocol.n_iter, n_rep=protocol.n_rep, cap=protocol.caps.get(name),
                 version=CACHE_VERSION)
            for name in names for fold in range(2 * protocol.n_rep)]
    df = run(protocol_fold, grid, n_repeats=1, seed=protocol.seed, cache_dir=protocol.cache_dir,
             n_jobs=protocol.n_jobs, desc=desc)
    protocol.folds["cached"] += df.attrs["n_cached"]
    protocol.folds["computed"] += df.attrs["n_computed"]
    return df.drop(columns=["methods", "Cs", "lmkl_iter", "n_rep", "cap", "version", "repeat"])


def select_C(df):
    """Rows of the C with the best mean validation accuracy, per (data set, method).

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`run_protocol`.

    Returns
    -------
    sel : pandas.DataFrame
        The rows (one per fold) of the selected C; ties go to the smaller C.
    """
    mean_val = df.groupby(["dataset", "method", "C"], sort=False).val_acc.mean().reset_index()
    mean_val = mean_val.sort_values(["dataset", "method", "C"], kind="stable")
    best = mean_val.loc[mean_val.groupby(["dataset", "method"]).val_acc.idxmax(),
                        ["dataset", "method", "C"]]
    return df.merge(best, on=["dataset", "method", "C"]).sort_values(
        ["dataset", "method", "fold"], kind="stable").reset_index(drop=True)


def per_method(sel):
    """Mean and standard deviation over the folds of the selected C.

    Parameters
    ----------
    sel : pandas.DataFrame
        Output of :func:`select_C`.

    Returns
    -------
    summary : pandas.DataFrame
        Columns ``dataset, method, C, acc, acc_sd, sv, sv_sd, weights``.
    """
    g = sel.groupby(["dataset", "method"], sort=False)
    out = g.agg(C=("C", "first"), acc=("test_acc", "mean"), acc_sd=("test_acc", "std"),
                sv=("sv_pct", "mean"), sv_sd=("sv_pct", "std")).reset_index()
    out["weights"] = [np.mean(np.vstack(w), axis=0).round(3).tolist()
                      for _, w in g.weights]
    return out


#: readable names of the :func:`per_method` columns, for the report's tables
READABLE_COLUMNS = {"dataset": "data set", "C": "C (grid value)", "acc": "test accuracy (%)",
                    "acc_sd": "accuracy s.d.", "sv": "SV (%)", "sv_sd": "SV s.d.",
                    "weights": "kernel weights (MKL: beta; LMKL: mean gate)"}


def fold_diffs(sel, dataset, a, b, metric):
    """Per-fold paired differences ``a - b`` of one metric at the selected C.

    Parameters
    ----------
    sel : pandas.DataFrame
        Output of :func:`select_C`.
    dataset : str
        Data set.
    a, b : str
        Methods compared.
    metric : str
        ``"test_acc"`` or ``"sv_pct"``.

    Returns
    -------
    diffs : ndarray of shape (n_folds,)
        In fold order.
    """
    rows = sel[sel.dataset == dataset]
    da = rows[rows.method == a].sort_values("fold")[metric].to_numpy()
    db = rows[rows.method == b].sort_values("fold")[metric].to_numpy()
    return da - db


def f_test(sel, dataset, a, b, metric, n_rep):
    """5×2 cv paired F test (Alpaydın 1999) of method ``a`` against ``b``.

    Parameters
    ----------
    sel : pandas.DataFrame
        Output of :func:`select_C`.
    dataset : str
        Data set.
    a, b : str
        Methods compared.
    metric : str
        ``"test_acc"`` or ``"sv_pct"``.
    n_rep : int
        Replications of 2-fold cv.

    Returns
    -------
    result
        :func:`mklcore.repro.experiments.cv52_f_test` result (``statistic``, ``pvalue``).
    """
    return cv52_f_test(fold_diffs(sel, dataset, a, b, metric).reshape(n_rep, 2))


def literal_grid(protocol, summary, names=("gauss4_equal", "banana", "splice"),
                 methods=("SVM K_L", "SVM K_G", "LMKL K_L-K_L-K_L")):
    """The paper's C grid taken literally on unit-trace kernels, on fold 0, against the protocol.

    A unit-trace kernel is our trace-N kernel divided by N, and the SVM with :math:`K/N` and
    :math:`C` is the one with :math:`K` and :math:`C/N`; so every method is refitted on fold 0
    with :math:`C/N` for :math:`C` in the grid, the C with the best validation accuracy is
    kept (ties: the smaller), and its test accuracy and SV% are set beside the protocol's
    result (C x N, mean over the folds).

    Parameters
    ----------
    protocol : Protocol
        The run's settings.
    summary : pandas.DataFrame
        :func:`per_method` rows of the protocol for these data sets.
    names : sequence of str, default=("gauss4_equal", "banana", "splice")
        Data sets.
    methods : sequence of str, default=("SVM K_L", "SVM K_G", "LMKL K_L-K_L-K_L")
        Methods (unit-trace ones).

    Returns
    -------
    table : pandas.DataFrame
        One row per (data set, method): majority-class share of the test set, the literal
        grid's selected C, test accuracy and SV% (fold 0), and the protocol's C, accuracy and
        SV%.
    """
    grid = [dict(dataset=name, method=method, C_lit=C, n_iter=protocol.n_iter,
                 n_rep=protocol.n_rep, cap=protocol.caps.get(name))
            for name in names for method in methods for C in protocol.C_grid]
    fits = _in_workers(protocol, _literal_cell, grid, "literal grid")
    rows = []
    for (name, method), g in fits.groupby(["dataset", "method"], sort=False):
        best = None
        for r in g.itertuples():
            if best is None or r.val > best[0]:
                best = (r.val, r.C_lit, r.test, r.sv)
        majority = g.majority.iloc[0]
        rows.append({"dataset": name, "method": method, "majority (%)": majority,
                     "literal C": best[1], "literal acc (fold 0)": best[2],
                     "literal SV% (fold 0)": best[3],
                     "C x N": value(summary, method, "C", name),
                     "acc": value(summary, method, "acc", name),
                     "SV%": value(summary, method, "sv", name)})
    return pd.DataFrame(rows)


def _in_workers(protocol, func, grid, desc):
    """Rows of ``func`` over ``grid`` (one cell each), computed in the protocol's worker
    processes and not cached."""
    return run(func, grid, n_repeats=1, seed=protocol.seed, n_jobs=protocol.n_jobs, desc=desc)


def _literal_cell(*, dataset, method, C_lit, n_iter, n_rep, cap, repeat, seed):
    """One fit of :func:`literal_grid`: ``method`` with ``C_lit / N`` on fold 0."""
    p = prepare(dataset, 0, n_rep=n_rep, cap=cap, seed=seed)
    n_tr, y = len(p["tr"]), p["y"]
    res = fit_method(p, method, C_lit / n_tr, n_iter=n_iter, seed=fold_seed(seed, 0))
    return {"val": 100 * np.mean(np.sign(decide(
                method, res, (p["Kva"], p["Kva_diag"]), p["Xva"])) == y[p["va"]]),
            "test": 100 * np.mean(np.sign(decide(
                method, res, (p["Kte"], p["Kte_diag"]), p["Xte"])) == y[p["te"]]),
            "sv": 100 * np.mean(np.abs(res.dual_coef) > SV_TOL * C_lit / n_tr),
            "majority": 100 * max(np.mean(y[p["te"]] > 0), np.mean(y[p["te"]] < 0))}


#: size of the round-off perturbation of :func:`roundoff_check`, in units in the last place:
#: each entry of a training kernel moves by ``k * ROUNDOFF_ULPS`` ulps, ``k`` in {-1, 0, 1} (the
#: size of the differences between BLAS builds and between the ``exp`` implementations of
#: different processors)
ROUNDOFF_ULPS = 1


def perturb_kernels(K, seed, ulps=None):
    """A training stack with every entry moved by at most ``ulps`` units in the last place.

    Parameters
    ----------
    K : ndarray of shape (n_kernels, n, n)
        Symmetric training Gram matrices.
    seed : int
        Seed of the directions.
    ulps : int, default=None
        Units in the last place; ``None``: :data:`ROUNDOFF_ULPS`.

    Returns
    -------
    K_pert : ndarray of shape (n_kernels, n, n)
        Each entry of the upper triangle moved ``ulps`` floating-point numbers up, down or not
        at all (drawn uniformly), mirrored below the diagonal.
    """
    ulps = ROUNDOFF_ULPS if ulps is None else int(ulps)
    k = np.random.default_rng(seed).integers(-1, 2, size=K.shape)
    k = np.triu(k) + np.swapaxes(np.triu(k, 1), 1, 2)
    target = np.where(k > 0, np.inf, -np.inf)
    out = np.array(K, dtype=float, copy=True)
    moved = k != 0
    for _ in range(ulps):
        out[moved] = np.nextafter(out[moved], target[moved])
    return out


def roundoff_check(protocol, g4_sel, sfx, methods=("LMKL K_L-K_P", "LMKL K_L-K_L-K_L")):
    r"""How much round-off moves the LMKL results: the protocol rerun on kernels moved by one ulp.

    For every fold of Gauss4, the LMKL methods are refitted for every C of the grid on
    training kernels whose entries were moved by at most one unit in the last place
    (:func:`perturb_kernels`), same data, splits and initial gating, and C is selected again
    on the validation fold (:func:`select_C`). LMKL's 50 gradient steps on the gating follow
    the SVM's support vectors, so machines whose BLAS or ``exp`` differ in the last bit give
    different fits, and a near tie of validation accuracies can select another C; this
    measures by how much, and :func:`crisp_claim` uses it for claim C3d, whose threshold rule
    is the one a difference of that size can flip.

    Parameters
    ----------
    protocol : Protocol
        The run's settings.
    g4_sel : pandas.DataFrame
        Gauss4 :func:`select_C` rows.
    sfx : str
        Method suffix of the normalisation.
    methods : sequence of str, default=("LMKL K_L-K_P", "LMKL K_L-K_L-K_L")
        LMKL methods (without suffix), those of claim C3d.

    Returns
    -------
    table : pandas.DataFrame
        One row per (data set, method, fold): the selected C, test accuracy (%), SV% and final
        mean maximal gate of the protocol and of the rerun (``*_pert``).
    """
    names = [m + sfx for m in methods]
    rows = g4_sel[g4_sel.method.isin(names)]
    grid = [dict(dataset=name, fold=int(fold), method=method, C=float(C),
                 n_iter=protocol.n_iter, n_rep=protocol.n_rep, cap=protocol.caps.get(name))
            for (name, method, fold) in rows[["dataset", "method", "fold"]].itertuples(
                index=False)
            for C in protocol.C_grid]
    refits = select_C(_in_workers(protocol, _roundoff_cell, grid, "round-off refits"))
    keys = ["dataset", "method", "fold"]
    base = rows[keys + ["C", "test_acc", "sv_pct", "max_gate_last"]]
    pert = refits[keys + ["C", "test_acc", "sv_pct", "max_gate_last"]].rename(
        columns=lambda c: c if c in keys else f"{c}_pert")
    return base.merge(pert, on=keys).reset_index(drop=True)


def _roundoff_cell(*, dataset, fold, method, C, n_iter, n_rep, cap, repeat, seed):
    """One refit of :func:`roundoff_check` (its validation and test accuracy, SV%, gate)."""
    p = prepare(dataset, fold, n_rep=n_rep, cap=cap, seed=seed)
    key = "Ktr" if METHODS[method][2] == "trace" else "Ktr_diag"
    p[key] = perturb_kernels(p[key], fold_seed(seed, fold))
    res = fit_method(p, method, C, n_iter=n_iter, seed=fold_seed(seed, fold))
    y = p["y"]
    return {"val_acc": 100 * np.mean(np.sign(decide(
                method, res, (p["Kva"], p["Kva_diag"]), p["Xva"])) == y[p["va"]]),
            "test_acc": 100 * np.mean(np.sign(decide(
                method, res, (p["Kte"], p["Kte_diag"]), p["Xte"])) == y[p["te"]]),
            "sv_pct": 100 * np.mean(np.abs(res.dual_coef) > SV_TOL * C),
            "max_gate_last": float(lmkl_path(res, "max_gate")[-1])}


def roundoff_summary(table):
    """Per data set: the largest change of a fit and the change of the means over the folds.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`roundoff_check` output.

    Returns
    -------
    summary : pandas.DataFrame
        One row per data set: fits, largest |change| of test accuracy (points), SV% and final
        maximal gate of one fit, fits whose test accuracy changed, folds where another C was
        selected, and the mean final maximal gate over the fits, protocol and rerun.
    """
    rows = []
    for name, g in table.groupby("dataset", sort=False):
        rows.append({
            "dataset": name, "fits": len(g),
            "max |d acc| (points)": float(np.max(np.abs(g.test_acc_pert - g.test_acc))),
            "max |d SV%|": float(np.max(np.abs(g.sv_pct_pert - g.sv_pct))),
            "max |d gate|": float(np.max(np.abs(g.max_gate_last_pert - g.max_gate_last))),
            "fits with acc changed": int(np.sum(g.test_acc_pert != g.test_acc)),
            "folds with another C": int(np.sum(g.C_pert != g.C)),
            "mean max gate": float(g.max_gate_last.mean()),
            "mean max gate (perturbed)": float(g.max_gate_last_pert.mean())})
    return pd.DataFrame(rows)


def convergence(raws):
    """How many fits of the protocol met their solver's stopping rule, per family.

    Parameters
    ----------
    raws : list of pandas.DataFrame
        Outputs of :func:`run_protocol`.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``family, fits, met stopping rule, status counts`` (status -1: not reported)
        and, for LMKL, how many gating updates the fits made (``n_iter``, where the rows
        have it): ``full schedule`` (status 1: every update of the paper's fixed schedule
        was made), ``stopped early`` (status 0 after at least two updates: no descent step
        left, a local optimum), ``stopped after <= 1 update`` (status 0 with ``n_iter <= 1``:
        no descent step after the first update) and ``updates (median [min, max])``; these
        columns are empty for the other families.
    """
    rows = pd.concat(raws, ignore_index=True)
    family = rows.method.map(lambda m: METHODS[m][0])
    out = []
    for fam, g in rows.groupby(family, sort=False):
        counts_ = g.status.value_counts().sort_index()
        row = {"family": fam, "fits": len(g), "met stopping rule": int((g.status == 0).sum()),
               "status counts": ", ".join(f"{k}: {v}" for k, v in counts_.items()),
               "full schedule": "", "stopped early": "", "stopped after <= 1 update": "",
               "updates (median [min, max])": ""}
        if fam == "lmkl" and "n_iter" in g:
            it = g.n_iter.astype(int)
            stopped = g.status == 0
            row.update({"full schedule": int((g.status == 1).sum()),
                        "stopped early": int((stopped & (it > 1)).sum()),
                        "stopped after <= 1 update": int((stopped & (it <= 1)).sum()),
                        "updates (median [min, max])":
                            f"{float(it.median()):g} [{it.min()}, {it.max()}]"})
        out.append(row)
    return pd.DataFrame(out)


def gradient_check(seed, *, n=60, C=10.0, h=1e-5, svm_tol=1e-12):
    """Analytic gradient of :math:`J` against central finite differences.

    On ``n`` Gauss4 points (equal variances) with unit-trace :math:`(K_L, K_P)` and random
    gating parameters, compares the gradient of Sec. 2 (:math:`\\partial J/\\partial v_m`,
    :math:`\\partial J/\\partial v_{m0}`) with central differences of :math:`J` computed with
    the SVM solved to a KKT tolerance ``svm_tol``.

    Parameters
    ----------
    seed : int
        Seed of the data and of the gating parameters.
    n : int, default=60
        Number of points.
    C : float, default=10.0
        Regularisation parameter.
    h : float, default=1e-5
        Finite-difference step.
    svm_tol : float, default=1e-12
        Tolerance of the SVM sub-solver.

    Returns
    -------
    rel_err : float
        Maximal absolute difference divided by the largest finite-difference entry.
    rows_sum_zero : bool
        Whether the gradient rows sum to zero (softmax invariance).
    """
    Xg, yg = datasets.make_gauss4(n, variant="equal", random_state=seed)
    Xg = (Xg - Xg.mean(axis=0)) / Xg.std(axis=0)
    Kg = normalize_trace(kernel_stack(kernel_bank("lmkl"), Xg)[:2], target=1.0)[0]
    Vg = np.random.default_rng(seed).normal(size=(2, 3))
    analytic = lmkl_objective(Kg, yg, Xg, Vg, C=C, svm_tol=svm_tol).gradient
    numeric = np.zeros_like(Vg)
    for idx in np.ndindex(*Vg.shape):
        E = np.zeros_like(Vg)
        E[idx] = h
        numeric[idx] = (lmkl_objective(Kg, yg, Xg, Vg + E, C=C, svm_tol=svm_tol).objective
                        - lmkl_objective(Kg, yg, Xg, Vg - E, C=C, svm_tol=svm_tol).objective
                        ) / (2 * h)
    rel_err = float(np.abs(analytic - numeric).max() / np.abs(numeric).max())
    return rel_err, bool(np.allclose(analytic.sum(axis=0), 0))


def fit_models(protocol, requests, desc="refits"):
    """Refit models of the protocol's folds, in its worker processes, each once per protocol.

    A model is the one :func:`protocol_fold` fits (same fold, data, seed and settings); the
    results are kept in ``protocol.models``, so a model drawn by two figures is fitted once.

    Parameters
    ----------
    protocol : Protocol
        The run's settings (``n_jobs`` worker processes).
    requests : list of tuple
        ``(dataset, fold, method, C)`` of each model.
    desc : str, default="refits"
        Progress-bar label.

    Returns
    -------
    results : list of MKLResult
        In the order of ``requests``.
    """
    keys = [(d, int(f), m, float(C)) for d, f, m, C in requests]
    todo = [k for k in dict.fromkeys(keys) if k not in protocol.models]
    if todo:
        grid = [dict(dataset=d, fold=f, method=m, C=C, n_iter=protocol.n_iter,
                     n_rep=protocol.n_rep, cap=protocol.caps.get(d)) for d, f, m, C in todo]
        fits = _in_workers(protocol, _model_cell, grid, desc)
        protocol.models.update(zip(todo, (kept.result for kept in fits.result)))
    return [protocol.models[k] for k in keys]


class _Kept:
    """A fitted result passed through ``experiments.run`` as it is (uncached runs convert
    only JSON-like values, and an ``MKLResult`` is a mapping)."""

    __slots__ = ("result",)

    def __init__(self, result):
        self.result = result


def _model_cell(*, dataset, fold, method, C, n_iter, n_rep, cap, repeat, seed):
    """One model of :func:`fit_models` (the fit of :func:`protocol_fold`)."""
    p = prepare(dataset, fold, n_rep=n_rep, cap=cap, seed=seed)
    return {"result": _Kept(fit_method(p, method, C, n_iter=n_iter,
                                       seed=fold_seed(seed, fold)))}


def boundary_model(protocol, dataset, method, C, *, fold=0, **lmkl_options):
    """Refit the model of one fold of the protocol (for the figures).

    Without ``lmkl_options`` the model comes from :func:`fit_models` (fitted once per
    protocol).

    Parameters
    ----------
    protocol : Protocol
        The run's settings.
    dataset : str
        Data set.
    method : str
        Key of :data:`METHODS`.
    C : float
        Regularisation parameter.
    fold : int, default=0
        Fold.
    **lmkl_options
        Extra options of :func:`mklcore.localized.lmkl_solve`.

    Returns
    -------
    p : dict
        The fold (:func:`prepare`).
    res : MKLResult
        The fitted model.
    """
    seed = protocol.data_seed
    p = prepare(dataset, fold, n_rep=protocol.n_rep, cap=protocol.caps.get(dataset), seed=seed)
    if not lmkl_options:
        return p, fit_models(protocol, [(dataset, fold, method, C)])[0]
    res = fit_method(p, method, C, n_iter=protocol.n_iter, seed=fold_seed(seed, fold),
                     **lmkl_options)
    return p, res


def grid_values(p, method, res, xx, yy, chunk=4000):
    """Decision values and (LMKL) gates on a grid of raw input coordinates.

    Parameters
    ----------
    p : dict
        The fold (:func:`prepare`).
    method : str
        Key of :data:`METHODS`.
    res : MKLResult
        The fitted model.
    xx, yy : ndarray
        Grid coordinates (``numpy.meshgrid``).
    chunk : int, default=4000
        Grid points per block.

    Returns
    -------
    f : ndarray of the shape of ``xx``
        Decision values.
    eta : ndarray of shape (n_grid, P) or None
        Gates :math:`\\eta_m` (LMKL only).
    """
    return _grid_values(p, [(method, res)], xx, yy, chunk)[0]


def _grid_values(p, models, xx, yy, chunk):
    """:func:`grid_values` of several ``(method, res)`` models of one fold: the grid's kernel
    stacks are computed once per block of points for all of them."""
    P = np.c_[xx.ravel(), yy.ravel()]
    fs = [np.empty(len(P)) for _ in models]
    gates = [[] for _ in models]
    for s in range(0, len(P), chunk):
        Z = p["std"](P[s:s + chunk])
        stacks = test_stacks(p, Z)
        for (method, res), f, g in zip(models, fs, gates):
            f[s:s + chunk] = decide(method, res, stacks, Z)
            if METHODS[method][0] == "lmkl":
                g.append(softmax_gating(Z, res.gating_coef))
    return [(f.reshape(xx.shape), np.vstack(g) if g else None) for f, g in zip(fs, gates)]


def panel_grid(p, n_grid=150):
    """The grid of raw input coordinates a panel of :func:`draw_panel` is drawn on.

    Parameters
    ----------
    p : dict
        The fold (:func:`prepare`); its data must be two-dimensional.
    n_grid : int, default=150
        Grid points per axis.

    Returns
    -------
    xx, yy : ndarray of shape (n_grid, n_grid)
        ``numpy.meshgrid`` of the data range widened by 0.5 on each side.
    """
    X = p["X"]
    lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
    return np.meshgrid(np.linspace(lo[0], hi[0], n_grid), np.linspace(lo[1], hi[1], n_grid))


def draw_panel(ax, p, method, res, title, bayes_variant=None, n_grid=150, values=None):
    """Draw a decision boundary, the dominant-kernel regions and the training points.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Target axes.
    p : dict
        The fold (:func:`prepare`); its data must be two-dimensional.
    method : str
        Key of :data:`METHODS`.
    res : MKLResult
        The fitted model.
    title : str
        Panel title.
    bayes_variant : str or None, default=None
        Gauss4 variant whose Bayes boundary is drawn (red, dashed).
    n_grid : int, default=150
        Grid points per axis.
    values : tuple or None, default=None
        ``(f, eta)`` of :func:`grid_values` on :func:`panel_grid` ``(p, n_grid)``, when
        already computed.

    Returns
    -------
    ax : matplotlib.axes.Axes
    """
    X = p["X"]
    xx, yy = panel_grid(p, n_grid)
    f, eta = grid_values(p, method, res, xx, yy) if values is None else values
    if eta is not None:  # gating regions: the kernel with the largest gate
        region = eta.argmax(axis=1).reshape(xx.shape)
        ax.contourf(xx, yy, region, levels=np.arange(eta.shape[1] + 1) - 0.5,
                    cmap=ListedColormap(["#fde0c5", "#c6dbef", "#d9f0d3"][:eta.shape[1]]),
                    alpha=0.8)
        ax.contour(xx, yy, region, levels=np.arange(eta.shape[1]) + 0.5, colors="#7f7f7f",
                   linewidths=1.0, linestyles=":")
    Xtr, ytr = X[p["tr"]], p["y"][p["tr"]]
    ax.scatter(*Xtr[ytr > 0].T, s=5, c="#0173b2", marker="o", lw=0, label="class +1")
    ax.scatter(*Xtr[ytr < 0].T, s=7, c="#d55e00", marker="x", lw=0.7, label="class -1")
    ax.contour(xx, yy, f, levels=[0.0], colors="k", linewidths=1.6)
    if bayes_variant is not None:
        b = datasets.gauss4_bayes_predict(np.c_[xx.ravel(), yy.ravel()], bayes_variant)
        ax.contour(xx, yy, b.reshape(xx.shape), levels=[0.0], colors="#cc0000",
                   linewidths=1.2, linestyles="--")
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def boundary_figure(protocol, dataset, table, bayes_variant=None):
    """Boundaries of :data:`FIG_METHODS` on fold 0 at their selected C (Figures 1 and 3).

    Parameters
    ----------
    protocol : Protocol
        The run's settings.
    dataset : str
        A two-dimensional data set.
    table : pandas.DataFrame
        Output of :func:`per_method` (selected C, accuracy, SV%).
    bayes_variant : str or None, default=None
        Gauss4 variant whose Bayes boundary is drawn.

    Returns
    -------
    fig : matplotlib.figure.Figure
        Row 0: unit-trace kernels with C x N (the paper); row 1: unit-diagonal kernels.
    """
    panels = [table[(table.dataset == dataset) & (table.method == base + sfx)].iloc[0]
              for sfx in ("", " [diag]") for base in FIG_METHODS]
    models = fit_models(protocol, [(dataset, 0, row.method, row.C) for row in panels],
                        desc=dataset)
    p = prepare(dataset, 0, n_rep=protocol.n_rep, cap=protocol.caps.get(dataset),
                seed=protocol.data_seed)
    values = _grid_values(p, [(row.method, res) for row, res in zip(panels, models)],
                          *panel_grid(p), chunk=4000)
    fig, axes = plt.subplots(2, len(FIG_METHODS), figsize=(3.6 * len(FIG_METHODS), 7.6))
    for ax, row, res, vals in zip(axes.ravel(), panels, models, values):
        what = "w" if METHODS[row.method][0] == "mkl" else "mean gate"
        draw_panel(ax, p, row.method, res, f"{row.method}, C = {row.C:g}\n"
                   f"acc {row.acc:.1f} %, SV {row.sv:.1f} %, "
                   f"{what} {np.round(res.weights, 2).tolist()}", bayes_variant, values=vals)
    axes[0, 0].legend(loc="lower left", fontsize=7)
    return fig


def figure1(protocol, g4, name, bayes_acc):
    """Figure 1 (Sec. 4.1): Gauss4 boundaries of MKL and LMKL against the Bayes boundary.

    Parameters
    ----------
    protocol : Protocol
        The run's settings.
    g4 : pandas.DataFrame
        :func:`per_method` table of the Gauss4 runs.
    name : str
        ``"gauss4_equal"`` or ``"gauss4_recalled"``.
    bayes_acc : float
        Bayes accuracy of that variant (fraction).

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    variant = name.split("_", 1)[1]
    fig = boundary_figure(protocol, name, g4, variant)
    fig.suptitle(f"Gauss4 ({variant}; Bayes {100 * bayes_acc:.1f} %): decision boundary (black), "
                 "Bayes boundary (red, dashed), dominant kernel (orange: 1st, blue: 2nd, green: "
                 "3rd)\ntop: unit-trace kernels (C x N), bottom: unit-diagonal kernels", fontsize=9)
    return fig


def figure2(protocol, g4):
    """Figure 2 (Sec. 4.1): the locally combined kernel becoming sparse over the iterations.

    Redraws :math:`K_\\eta` of LMKL :math:`(K_L`-:math:`K_L`-:math:`K_L)` on fold 0 of Gauss4
    (equal variances) at iterations 0, 1, 5 and the last, from the stored gating parameters,
    with the points sorted by their final dominant kernel, then class.

    Parameters
    ----------
    protocol : Protocol
        The run's settings.
    g4 : pandas.DataFrame
        :func:`per_method` table of the Gauss4 runs (selected C).

    Returns
    -------
    fig : matplotlib.figure.Figure
    sparsity : pandas.DataFrame
        Per (normalisation, iteration): share of entries of :math:`|K_\\eta|` below
        :math:`10^{-3}` of its maximum, mean maximal gate and :math:`J`.
    """
    rows = [g4[(g4.dataset == "gauss4_equal") & (g4.method == "LMKL K_L-K_L-K_L" + sfx)].iloc[0]
            for sfx in ("", " [diag]")]
    fit_models(protocol, [("gauss4_equal", 0, row.method, row.C) for row in rows],
               desc="gauss4_equal")
    fig, axes = plt.subplots(2, 5, figsize=(15.5, 6.6))
    sparsity = []
    for r, sfx in enumerate(("", " [diag]")):
        method = "LMKL K_L-K_L-K_L" + sfx
        row2 = rows[r]
        p2, res2 = boundary_model(protocol, "gauss4_equal", method, row2.C)
        V_hist = lmkl_path(res2, "gating_coef")
        gate_hist, J_hist = lmkl_path(res2, "max_gate"), lmkl_path(res2, "objective")
        last = len(V_hist) - 1
        steps = sorted({0, min(1, last), min(5, last), last})
        steps = (steps + [last] * 4)[:4]
        order = np.lexsort((p2["y"][p2["tr"]], res2.eta_train.argmax(axis=1)))
        show = order[::max(1, len(order) // 200)]  # draw at most about 200 points
        K_stack = (p2["Ktr"] if sfx == "" else p2["Ktr_diag"])[[0, 0, 0]]
        for ax, t in zip(axes[r, :4], steps):
            K_eta = locally_combined_kernel(K_stack, softmax_gating(p2["Xtr"], V_hist[t]))
            v = np.abs(K_eta).max()
            if not any(s["method"] == method and s["iteration"] == t for s in sparsity):
                sparsity.append({"method": method, "C": row2.C, "iteration": t,
                                  "share of |K_eta| < 1e-3 max":
                                      float(np.mean(np.abs(K_eta) < 1e-3 * v)),
                                  "mean max gate": gate_hist[t], "J": J_hist[t]})
            im = ax.imshow(K_eta[np.ix_(show, show)] / v, cmap="RdBu_r", vmin=-1, vmax=1,
                           interpolation="nearest")
            ax.set_title(f"{method}, C = {row2.C:g}\niteration {t}: mean max gate "
                         f"{gate_hist[t]:.2f}", fontsize=8)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.colorbar(im, ax=axes[r, :4], shrink=0.8, pad=0.01,
                     label=r"$K_\eta(x_i, x_j)$ / max $|K_\eta|$")
        ax = axes[r, 4]
        ax.plot(gate_hist, marker=".", label="mean max gate")
        ax.set_xlabel("iteration")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("mean max gate")
        ax2 = ax.twinx()
        ax2.plot(J_hist, color="#d55e00", marker=".")
        ax2.set_ylabel("J (SVM dual objective)", color="#d55e00", rotation=270, labelpad=14)
        ax2.grid(False)
        ax.set_title("gating crispness (blue) and J (orange)", fontsize=8)
    fig.suptitle("Gauss4 (equal): locally combined kernel of LMKL K_L-K_L-K_L over the "
                 "iterations (points sorted by final dominant kernel, then class)", fontsize=9)
    return fig, pd.DataFrame(sparsity)


def figure3(protocol, ban):
    """Figure 3 (Sec. 4.2): Banana boundaries and gating regions of MKL and LMKL.

    Parameters
    ----------
    protocol : Protocol
        The run's settings.
    ban : pandas.DataFrame
        :func:`per_method` table of the Banana runs.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    fig = boundary_figure(protocol, "banana", ban)
    fig.suptitle("Banana: decision boundary (black), dominant kernel (orange: 1st, blue: 2nd, "
                 "green: 3rd)\ntop: unit-trace kernels (C x N), bottom: unit-diagonal kernels",
                 fontsize=9)
    return fig


def value(table, method, col, dataset=None):
    """One number of a :func:`per_method` table.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`per_method`.
    method : str
        Method.
    col : str
        Column, e.g. ``"acc"`` or ``"sv"``.
    dataset : str or None, default=None
        Data set (None: the table holds one data set).

    Returns
    -------
    value : float
    """
    mask = table.method == method
    if dataset is not None:
        mask &= table.dataset == dataset
    return float(table[mask][col].iloc[0])


def gauss4_rows(g4, bayes, sfx):
    """Paper-vs-ours rows of Sec. 4.1 (Gauss4) for :func:`mklcore.repro.reporting.compare`.

    The Gauss4 means and covariances are recalled, not the paper's verified values, so every
    row is shown with its difference but not compared (verdict n/a).

    Parameters
    ----------
    g4 : pandas.DataFrame
        :func:`per_method` table of the Gauss4 runs.
    bayes : dict
        Gauss4 data set name -> Bayes accuracy (fraction).
    sfx : str
        Method suffix of the normalisation.

    Returns
    -------
    rows : list of dict
    """
    rows = []
    for name in GAUSS4:
        v = name.split("_", 1)[1]
        w = g4[(g4.dataset == name) & (g4.method == "MKL K_L-K_P" + sfx)].weights.iloc[0]
        tag = f"Gauss4 ({v}, {NORM_NAME[sfx]})"
        why = (f"stand-in data: recalled Gauss4 parameters ({v} variances, Bayes accuracy "
               f"{100 * bayes[name]:.2f} %), not the paper's verified values")
        for item, paper, ours, atol, src in [
                ("MKL K_L-K_P weight of K_L", 0.30, w[0], 0.1, "Sec. 4.1, Fig. 1a"),
                ("MKL K_L-K_P weight of K_P", 0.70, w[1], 0.1, "Sec. 4.1, Fig. 1a"),
                ("SVM K_G test accuracy (%)", 89.67, value(g4, "SVM K_G" + sfx, "acc", name),
                 1.5, "Sec. 4.1"),
                ("SVM K_G SV (%)", 100.0, value(g4, "SVM K_G" + sfx, "sv", name), 5.0,
                 "Sec. 4.1"),
                ("LMKL K_L-K_L-K_L test accuracy (%)", 92.00,
                 value(g4, "LMKL K_L-K_L-K_L" + sfx, "acc", name), 1.5, "Sec. 4.1"),
                ("LMKL K_L-K_L-K_L SV (%)", 23.18,
                 value(g4, "LMKL K_L-K_L-K_L" + sfx, "sv", name), 5.0, "Sec. 4.1")]:
            rows.append({"item": f"{tag}: {item}", "paper": paper, "ours": ours, "atol": atol,
                         "source": src, "comparable": why})
    return rows


def banana_f_tests(ban_sel, n_rep):
    """5×2 cv F tests of LMKL against MKL :math:`(K_L`-:math:`K_P)` accuracy on Banana.

    Parameters
    ----------
    ban_sel : pandas.DataFrame
        :func:`select_C` rows of the Banana runs.
    n_rep : int
        Replications of 2-fold cv.

    Returns
    -------
    tests : dict
        Method suffix (``""``, ``" [diag]"``) -> F-test result.
    """
    return {sfx: f_test(ban_sel, "banana", "LMKL K_L-K_P" + sfx, "MKL K_L-K_P" + sfx,
                        "test_acc", n_rep)
            for sfx in ("", " [diag]")}


#: LMKL (K_L-K_L-K_L) test accuracy on Gauss4 in Sec. 4.1 of the paper (%)
PAPER_G4_LMKL = 92.00
#: training points per fold of the paper's Banana protocol (2/3 of 5300, halved by 5x2 cv)
BANANA_PAPER_TRAIN = 1767


def banana_rows(ban, sfx, n_train):
    """Paper-vs-ours rows of Sec. 4.2 (Banana, Figure 3).

    Parameters
    ----------
    ban : pandas.DataFrame
        :func:`per_method` table of the Banana runs.
    sfx : str
        Method suffix of the normalisation.
    n_train : int
        Training-fold size (the paper's folds hold about :data:`BANANA_PAPER_TRAIN` points).

    Returns
    -------
    rows : list of dict
        Not compared (``comparable`` gives the reason) when ``n_train`` differs from the
        paper's by more than 10 %: the share of support vectors depends on N.
    """
    note = f"{n_train} training points per fold (the paper: about {BANANA_PAPER_TRAIN})"
    comparable = (True if abs(n_train - BANANA_PAPER_TRAIN) <= 0.1 * BANANA_PAPER_TRAIN else
                  f"different training size: {n_train} points per fold, subsampled (the "
                  f"paper: about {BANANA_PAPER_TRAIN}); SV% depends on N")
    tag = f"Banana ({NORM_NAME[sfx]})"
    return [{"item": f"{tag}: {item}", "paper": paper, "ours": ours, "atol": atol,
             "source": src, "note": note, "comparable": comparable}
            for item, paper, ours, atol, src in [
                ("MKL K_L-K_P weight of K_P", 1.00,
                 ban[ban.method == "MKL K_L-K_P" + sfx].weights.iloc[0][1], 0.05,
                 "Sec. 4.2, Fig. 3a"),
                ("MKL K_L-K_P test accuracy (%)", 70.52, value(ban, "MKL K_L-K_P" + sfx, "acc"),
                 2.0, "Sec. 4.2, Fig. 3"),
                ("MKL K_L-K_P SV (%)", 82.36, value(ban, "MKL K_L-K_P" + sfx, "sv"), 5.0,
                 "Sec. 4.2, Fig. 3"),
                ("LMKL K_L-K_P test accuracy (%)", 84.46, value(ban, "LMKL K_L-K_P" + sfx, "acc"),
                 2.0, "Sec. 4.2, Fig. 3"),
                ("LMKL K_L-K_P SV (%)", 41.28, value(ban, "LMKL K_L-K_P" + sfx, "sv"), 5.0,
                 "Sec. 4.2, Fig. 3")]]


def gate_variants(protocol, ban):
    """Gate thresholding and normalisation on fold 0 of Banana (test-time cost, Sec. 3.1).

    Fits :class:`mklcore.localized.LMKLClassifier` with trace-N (``normalize="trace"``: the
    paper's unit trace with C x N) and unit-diagonal kernels, without and with gates
    thresholded at :math:`10^{-3}`, at the C selected for each normalisation, and counts the
    share of test-time kernel evaluations of the gated discriminant (8) that are needed.

    Parameters
    ----------
    protocol : Protocol
        The run's settings.
    ban : pandas.DataFrame
        :func:`per_method` table of the Banana runs.

    Returns
    -------
    variants : pandas.DataFrame
    """
    grid = [dict(variant=(base, normalize, thr, float(ban[ban.method == base + sfx].C.iloc[0])),
                 n_iter=protocol.n_iter, n_rep=protocol.n_rep, cap=protocol.caps.get("banana"),
                 master_seed=protocol.seed)
            for base in ["LMKL K_L-K_P", "LMKL K_L-K_L-K_L"]
            for sfx, normalize in (("", "trace"), (" [diag]", "cosine"))
            for thr in (0.0, 1e-3)]
    rows = _in_workers(protocol, _gate_cell, grid, "gate variants")
    return rows[["method", "normalize", "gate_threshold", "C", "test acc (%)", "SV (%)",
                 "kernel evals kept", "mean max gate"]].reset_index(drop=True)


def _gate_cell(*, variant, n_iter, n_rep, cap, master_seed, repeat, seed):
    """One row of :func:`gate_variants`: ``variant = (method, normalize, threshold, C)``."""
    base, normalize, thr, C = variant
    p_ban = prepare("banana", 0, n_rep=n_rep, cap=cap, seed=seed)
    Xtr, ytr = p_ban["Xtr"], p_ban["y"][p_ban["tr"]]
    Xte, yte = p_ban["Xte"], p_ban["y"][p_ban["te"]]
    kernels = [p_ban["bank"][k] for k in METHODS[base][1]]
    clf = LMKLClassifier(kernels=kernels, C=C, max_iter=n_iter, normalize=normalize,
                         gate_threshold=thr, random_state=master_seed).fit(Xtr, ytr)
    f, n_evals = clf.decision_function(Xte, return_n_evals=True)
    n_full = len(kernels) * len(yte) * len(clf.support_)
    return {"method": base, "normalize": normalize, "gate_threshold": thr, "C": C,
            "test acc (%)": 100 * np.mean(np.sign(f) == yte), "SV (%)": clf.sv_percentage_,
            "kernel evals kept": n_evals / n_full,
            "mean max gate": lmkl_path(clf.result_, "max_gate")[-1]}


def pairs(sfx):
    """The two comparisons of Table 1: LMKL vs MKL (K_P-K_G) and LMKL (K_L-K_L-K_L) vs SVM K_L.

    Parameters
    ----------
    sfx : str
        Method suffix (``""`` or ``" [diag]"``).

    Returns
    -------
    pairs : list of tuple of str
        ``(LMKL method, baseline)`` pairs.
    """
    return [("LMKL K_P-K_G" + sfx, "MKL K_P-K_G" + sfx),
            ("LMKL K_L-K_L-K_L" + sfx, "SVM K_L" + sfx)]


def pair_tests(sel, names, sfx, n_rep):
    """Differences of means and 5×2 cv F tests of the :func:`pairs` on every data set.

    Parameters
    ----------
    sel : pandas.DataFrame
        :func:`select_C` rows.
    names : list of str
        Data sets.
    sfx : str
        Method suffix.
    n_rep : int
        Replications of 2-fold cv.

    Returns
    -------
    tests : pandas.DataFrame
        Columns ``dataset, pair, acc diff, acc F, acc p, SV diff, SV F, SV p`` (diff = LMKL
        minus baseline).
    """
    rows = []
    for name in names:
        for a, b in pairs(sfx):
            fa = f_test(sel, name, a, b, "test_acc", n_rep)
            fs = f_test(sel, name, a, b, "sv_pct", n_rep)
            ma = sel[(sel.dataset == name) & (sel.method == a)]
            mb = sel[(sel.dataset == name) & (sel.method == b)]
            rows.append({"dataset": name, "pair": f"{a} vs {b}",
                         "acc diff": ma.test_acc.mean() - mb.test_acc.mean(),
                         "acc F": fa.statistic, "acc p": fa.pvalue,
                         "SV diff": ma.sv_pct.mean() - mb.sv_pct.mean(),
                         "SV F": fs.statistic, "SV p": fs.pvalue})
    return pd.DataFrame(rows)


def table_view(summary, tests, names, sfx):
    """Table 1 in the paper's layout, with significance marks.

    Entries are mean test accuracy and mean SV%; ``+`` (``-``) marks an LMKL entry
    significantly better (worse) than its baseline by the 5×2 cv F test at :data:`ALPHA`
    (better = higher accuracy or fewer SVs); ``†`` an assumed member of Table 1.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`per_method` table.
    tests : pandas.DataFrame
        :func:`pair_tests` table.
    names : list of str
        Data sets (rows).
    sfx : str
        Method suffix.

    Returns
    -------
    table : pandas.DataFrame
    """
    view = []
    for name in names:
        row = {"data set": name + (" †" if name in ASSUMED else "")}
        for base in T1_BASE:
            m = base + sfx
            r = summary[(summary.dataset == name) & (summary.method == m)].iloc[0]
            mark_acc = mark_sv = ""
            for a, b in pairs(sfx):
                if m == a:  # + significantly better than the paired baseline, - worse
                    t = tests[(tests.dataset == name) & (tests.pair == f"{a} vs {b}")].iloc[0]
                    if t["acc p"] < ALPHA:
                        mark_acc = "+" if t["acc diff"] > 0 else "-"
                    if t["SV p"] < ALPHA:
                        mark_sv = "+" if t["SV diff"] < 0 else "-"
            row[f"{base} acc"] = f"{r.acc:.2f}{mark_acc}"
            row[f"{base} SV%"] = f"{r.sv:.2f}{mark_sv}"
        view.append(row)
    return pd.DataFrame(view)


def counts(summary, tests, names, sfx):
    """Counts over the data sets that the text of Sec. 4.2 reports, per :func:`pairs`.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`per_method` table.
    tests : pandas.DataFrame
        :func:`pair_tests` table.
    names : list of str
        Data sets.
    sfx : str
        Method suffix.

    Returns
    -------
    counts : dict
        ``(a, b)`` -> dict with ``n``, ``acc higher``, ``SV lower`` (raw means), ``acc sig.
        higher``, ``acc sig. lower``, ``SV sig. lower`` (lists of sets, F test),
        ``acc not sig.`` and the Wilcoxon signed-rank p-values over the sets.
    """
    out = {}
    for a, b in pairs(sfx):
        sa = summary[summary.method == a].set_index("dataset").loc[names]
        sb = summary[summary.method == b].set_index("dataset").loc[names]
        t = tests[tests.pair == f"{a} vs {b}"].set_index("dataset").loc[names]
        out[(a, b)] = {
            "n": len(names),
            "acc higher": int((sa.acc > sb.acc).sum()),
            "SV lower": int((sa.sv < sb.sv).sum()),
            "acc sig. higher": sorted(t.index[(t["acc p"] < ALPHA) & (t["acc diff"] > 0)]),
            "acc sig. lower": sorted(t.index[(t["acc p"] < ALPHA) & (t["acc diff"] < 0)]),
            "acc not sig.": int((t["acc p"] >= ALPHA).sum()),
            "SV sig. lower": sorted(t.index[(t["SV p"] < ALPHA) & (t["SV diff"] < 0)]),
            "wilcoxon acc p": wilcoxon(sa.acc, sb.acc).pvalue,
            "wilcoxon SV p": wilcoxon(sa.sv, sb.sv).pvalue,
        }
    return out


def counts_lines(t1_counts):
    """One sentence per normalisation and pair summarising :func:`counts`.

    Parameters
    ----------
    t1_counts : dict
        Method suffix -> :func:`counts` output.

    Returns
    -------
    lines : list of str
    """
    return [f"{a} vs {b} over {c['n']} sets: accuracy higher on {c['acc higher']}, SV% lower "
            f"on {c['SV lower']}; accuracy not significantly different on {c['acc not sig.']}; "
            f"significantly higher accuracy on {c['acc sig. higher']}, lower on "
            f"{c['acc sig. lower']}; significantly fewer SVs on {c['SV sig. lower']}; "
            f"Wilcoxon p (accuracy) = {c['wilcoxon acc p']:.3f}, p (SV%) = "
            f"{c['wilcoxon SV p']:.3f}"
            for per_pair in t1_counts.values() for (a, b), c in per_pair.items()]


def wilcoxon_table(t1_counts):
    """Wilcoxon signed-rank tests over the Table 1 sets, one row per normalisation and pair.

    Parameters
    ----------
    t1_counts : dict
        Method suffix -> :func:`counts` output.

    Returns
    -------
    table : pandas.DataFrame
    """
    return pd.DataFrame([
        {"kernels": NORM_NAME[sfx], "pair": f"{a} vs {b}", "sets": c["n"],
         "acc higher": c["acc higher"], "SV% lower": c["SV lower"],
         "acc not sig. (F test)": c["acc not sig."],
         "Wilcoxon p (accuracy)": c["wilcoxon acc p"], "Wilcoxon p (SV%)": c["wilcoxon SV p"]}
        for sfx, per_pair in t1_counts.items() for (a, b), c in per_pair.items()])


def plot_sv_scatter(t1, names, suffixes):
    """SV% of LMKL against its baseline on every Table 1 set (one row per normalisation).

    Parameters
    ----------
    t1 : pandas.DataFrame
        :func:`per_method` table of Table 1.
    names : list of str
        Data sets.
    suffixes : sequence of str
        Method suffixes, one row of panels each.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(2, 2, figsize=(10, 8.8))
    for row_axes, sfx in zip(axes, suffixes):
        for ax, (a, b) in zip(row_axes, pairs(sfx)):
            sa = t1[t1.method == a].set_index("dataset").loc[names]
            sb = t1[t1.method == b].set_index("dataset").loc[names]
            ax.scatter(sb.sv, sa.sv, color=method_palette(["lmkl"])["lmkl"], zorder=3)
            for name in names:
                ax.annotate(name, (sb.sv[name], sa.sv[name]), fontsize=7, xytext=(3, 3),
                            textcoords="offset points")
            ax.plot([0, 105], [0, 105], color="#949494", lw=1)
            ax.set_xlim(0, 105)
            ax.set_ylim(0, 105)
            ax.set_xlabel(f"{b}: SV (%)")
            ax.set_ylabel(f"{a}: SV (%)")
            ax.set_title(f"{NORM_NAME[sfx]}: below the diagonal = fewer SVs for LMKL",
                         fontsize=9)
    return fig


def table1_rows(t1_counts, sfx, names):
    """Paper-vs-ours rows of the counts in the text of Sec. 4.2 (shares of the sets).

    The paper counts over its ten sets; ours are over the sets run, some of them assumed
    members (the names of five were lost), so the rows are shown but not compared (n/a);
    the statements about named sets are tested as claims (:func:`claims_for`).

    Parameters
    ----------
    t1_counts : dict
        Method suffix -> :func:`counts` output.
    sfx : str
        Method suffix of the normalisation.
    names : list of str
        Table 1 sets run.

    Returns
    -------
    rows : list of dict
    """
    n_sets = len(names)
    assumed = [n for n in names if n in ASSUMED]
    why = (f"different data: the paper counts over its 10 sets; ours over {n_sets} sets"
           + (f", {len(assumed)} of them assumed members ({', '.join(assumed)})"
              if assumed else " named in the paper"))
    cpg, cll = (t1_counts[sfx][pair] for pair in pairs(sfx))
    tag = f"({NORM_NAME[sfx]})"
    items = [
        ("K_P-K_G", "LMKL accuracy not significantly different from MKL", 10,
         cpg["acc not sig."]),
        ("K_P-K_G", "higher mean accuracy (LMKL vs MKL)", 7, cpg["acc higher"]),
        ("K_P-K_G", "lower mean SV% (LMKL vs MKL)", 8, cpg["SV lower"]),
        ("K_P-K_G", "significantly fewer SVs (paper: Heart, Pima, Wdbc)", 3,
         len(cpg["SV sig. lower"])),
        ("K_L-K_L-K_L vs SVM K_L", "higher mean accuracy", 7, cll["acc higher"]),
        ("K_L-K_L-K_L vs SVM K_L", "lower mean SV%", 8, cll["SV lower"]),
        ("K_L-K_L-K_L vs SVM K_L", "significantly fewer SVs", 6, len(cll["SV sig. lower"])),
        ("K_L-K_L-K_L vs SVM K_L", "significantly more accurate (paper: Banana, Pima, "
         "Spambase)", 3, len(cll["acc sig. higher"])),
    ]
    return [{"item": f"{pair} {tag}: share of sets, {what}", "paper": paper / 10,
             "ours": ours / n_sets, "atol": 0.2, "source": "Sec. 4.2", "comparable": why}
            for pair, what, paper, ours in items]


def splice_rows(sp, sfx):
    """Paper-vs-ours rows of Sec. 4.3 (relative SV reductions) on the splice stand-in.

    Splice is not the paper's TIS data, so the rows are shown but not compared (n/a).

    Parameters
    ----------
    sp : pandas.DataFrame
        :func:`per_method` table of the splice runs.
    sfx : str
        Method suffix of the normalisation.

    Returns
    -------
    rows : list of dict
    """
    why = "different data: UCI splice stands in for the TIS sets (Arabidopsis, Vertebrates)"
    return [
        {"item": f"splice ({NORM_NAME[sfx]}): LMKL K_P-K_G fewer SVs than MKL (relative %)",
         "paper": 24.55,
         "ours": 100 * (1 - value(sp, "LMKL K_P-K_G" + sfx, "sv")
                        / value(sp, "MKL K_P-K_G" + sfx, "sv")),
         "atol": 10.0, "source": "Sec. 4.3 (Arabidopsis; Vertebrates 22.32)",
         "comparable": why},
        {"item": f"splice ({NORM_NAME[sfx]}): LMKL K_L-K_L-K_L fewer SVs than SVM K_L "
                 "(relative %)", "paper": 33.3,
         "ours": 100 * (1 - value(sp, "LMKL K_L-K_L-K_L" + sfx, "sv")
                        / value(sp, "SVM K_L" + sfx, "sv")),
         "atol": 10.0, "source": "Sec. 4.3 ('almost one third')", "comparable": why},
    ]


def paper_rows(sfx, *, g4, bayes, ban, ban_n_train, t1_counts, names, sp):
    """Every paper-vs-ours row of one normalisation, for :func:`mklcore.repro.reporting.compare`.

    Parameters
    ----------
    sfx : str
        Method suffix of the normalisation.
    g4, ban, sp : pandas.DataFrame
        :func:`per_method` tables of Gauss4, Banana and splice.
    bayes : dict
        Gauss4 data set -> Bayes accuracy.
    ban_n_train : int
        Banana training-fold size.
    t1_counts : dict
        Method suffix -> :func:`counts` output.
    names : list of str
        Table 1 sets run.

    Returns
    -------
    rows : list of dict
    """
    return (gauss4_rows(g4, bayes, sfx) + banana_rows(ban, sfx, ban_n_train)
            + table1_rows(t1_counts, sfx, names) + splice_rows(sp, sfx))


def lmkl_fits(raws):
    """All LMKL rows of the protocol runs.

    Parameters
    ----------
    raws : list of pandas.DataFrame
        Outputs of :func:`run_protocol`.

    Returns
    -------
    fits : pandas.DataFrame
    """
    all_rows = pd.concat(raws, ignore_index=True)
    return all_rows[all_rows.method.str.startswith("LMKL")]


def gain_claim(cid, text, diffs, *, context="", hard=True):
    """A claimed gain tested with :func:`mklcore.repro.reporting.gain_verdict`.

    Parameters
    ----------
    cid : str
        Claim id.
    text : str
        The claim.
    diffs : array-like
        Paired differences, positive = gain (per fold, or per data set).
    context : str, default=""
        Numbers put before the test's evidence.
    hard : bool, default=True
        Central claim (True) or secondary observation.

    Returns
    -------
    claim : Claim
    """
    test = gain_verdict(diffs, alpha=ALPHA)
    return Claim(cid, text, test.holds, f"{context}{test.evidence}", hard=hard,
                 rule=test.rule, tolerance=f"one-sided p < {ALPHA:g}")


def _equivalence(diffs):
    """(holds, evidence) of the "as accurate as" test of :func:`equivalence_claim`."""
    test = equivalence_verdict(diffs, EQUIV_MARGIN, alpha=ALPHA)
    return test.holds, (f"mean difference {test.mean:+.2f} points, 90% interval "
                        f"[{test.lower:+.2f}, {test.upper:+.2f}]")


#: the rule of :func:`equivalence_claim`
EQUIV_RULE = (f"equivalence test over paired folds: holds if the 90% interval (t) of the "
              f"accuracy difference lies within +-{EQUIV_MARGIN:g} points; does not hold if it "
              f"lies entirely outside; else inconclusive")


def equivalence_claim(cid, text, diffs, *, context="", hard=True):
    """An "as accurate as" claim: the accuracy difference is within :data:`EQUIV_MARGIN`.

    Parameters
    ----------
    cid : str
        Claim id.
    text : str
        The claim.
    diffs : array-like
        Per-fold paired accuracy differences (percentage points).
    context : str, default=""
        Numbers put before the evidence.
    hard : bool, default=True
        Central claim (True) or secondary observation.

    Returns
    -------
    claim : Claim
        ``holds`` True if the 90 % interval of the mean difference lies in
        :math:`\\pm` :data:`EQUIV_MARGIN`, False if it lies entirely outside, else
        ``"inconclusive"``.
    """
    holds, evidence = _equivalence(diffs)
    return Claim(cid, text, holds, f"{context}{evidence}", hard=hard, rule=EQUIV_RULE,
                 tolerance=f"+-{EQUIV_MARGIN:g} accuracy points")


def all_sets_claim(cid, text, outcomes, *, rule, tolerance, hard=True):
    """A claim about several data sets: it holds if it holds on each of them.

    Parameters
    ----------
    cid : str
        Claim id.
    text : str
        The claim.
    outcomes : dict
        Data set -> (holds, evidence) on that set; ``holds`` is True, False or
        ``"inconclusive"``.
    rule, tolerance : str
        The per-set rule and its tolerance.
    hard : bool, default=True
        Central claim (True) or secondary observation.

    Returns
    -------
    claim : Claim
        Holds if every set holds, does not hold if some set does not, else inconclusive.
    """
    values = [h for h, _ in outcomes.values()]
    if values and all(h is True for h in values):
        holds = True
    elif any(h is False for h in values):
        holds = False
    else:
        holds = "inconclusive"
    evidence = "; ".join(f"{name}: {'inconclusive' if h == 'inconclusive' else bool(h)} ({e})"
                         for name, (h, e) in outcomes.items())
    return Claim(cid, text, holds, evidence, hard=hard,
                 rule=f"holds if it holds on every set named, not if it fails on one, else "
                      f"inconclusive; per set: {rule}", tolerance=tolerance)


def _set_gain(sel, name, a, b, metric):
    """(holds, evidence) of the per-fold gain of ``a`` over ``b`` on one set."""
    d = fold_diffs(sel, name, a, b, metric)
    test = gain_verdict(d if metric == "test_acc" else -d, alpha=ALPHA)
    return test.holds, test.evidence


def _set_equivalence(sel, name, a, b):
    """(holds, evidence) of the "as accurate as" test of ``a`` and ``b`` on one set."""
    return _equivalence(fold_diffs(sel, name, a, b, "test_acc"))


def crisp_claim(g4_sel, name, sfx, bayes_acc, roundoff=None):
    """Claim C3d on one Gauss4 setting: the gates become crisp (Sec. 4.1, Fig. 2).

    Parameters
    ----------
    g4_sel : pandas.DataFrame
        Gauss4 :func:`select_C` rows.
    name : str
        ``"gauss4_equal"`` (the claim) or ``"gauss4_recalled"`` (secondary, ``-recalled``).
    sfx : str
        Method suffix of the normalisation.
    bayes_acc : float
        Bayes accuracy of the setting (fraction), quoted in the claim.
    roundoff : pandas.DataFrame, optional
        :func:`roundoff_check` output; the claim is inconclusive when its rerun puts the mean
        maximal gate on the other side of :data:`CRISP_GATE`.

    Returns
    -------
    claim : Claim
    """
    v = name.split("_", 1)[1]
    lkp, lll = "LMKL K_L-K_P" + sfx, "LMKL K_L-K_L-K_L" + sfx
    crisp = g4_sel[(g4_sel.dataset == name) & g4_sel.method.isin([lkp, lll])]
    first, last = crisp.max_gate_first.mean(), crisp.max_gate_last.mean()
    holds, evidence = bool(last >= CRISP_GATE), (
        f"mean maximal gate {first:.2f} -> {last:.2f} over {len(crisp)} fits (LMKL K_L-K_P "
        f"and K_L-K_L-K_L, selected C)")
    rule = f"holds if the mean maximal gate after the last update is >= {CRISP_GATE:g}"
    pert = (None if roundoff is None else
            roundoff[(roundoff.dataset == name) & roundoff.method.isin([lkp, lll])])
    if pert is not None and len(pert) == len(crisp) > 0:
        last_pert = pert.max_gate_last_pert.mean()
        if bool(last_pert >= CRISP_GATE) != holds:
            holds = INCONCLUSIVE
        evidence += (f"; {last_pert:.2f} when the protocol (C selection included) is rerun on "
                     "kernels moved by one unit in the last place (round-off)")
        rule += (", both as run and with the training kernels moved by one unit in the last "
                 "place; inconclusive if the two disagree")
    pre = f"Gauss4 ({v}; Bayes {100 * bayes_acc:.2f} %): "
    return Claim(f"C3d{'' if v == 'equal' else '-recalled'}",
                 f"{pre}the gates of LMKL become crisp over the iterations.", holds, evidence,
                 hard=v == "equal", rule=rule, tolerance=f"mean maximal gate >= {CRISP_GATE:g}")


def claims_for(sfx, *, g4, g4_sel, bayes, ban_sel, t1, t1_sel, names, sp_sel,
               roundoff=None):
    """Claims C3–C7 (Sec. 4) judged with one kernel normalisation.

    Gains ("more accurate", "fewer SVs") are tested with per-fold paired differences at the
    selected C (one-sided paired t-test, :func:`gain_claim`) or, for statements over the
    Table 1 sets, with the per-set differences of the means; "as accurate as" with
    :func:`equivalence_claim`. Gauss4 claims are judged on the equal-variance variant (its
    Bayes accuracy is above the paper's 92.00 %); the recalled variant gives secondary
    claims. Splice claims are on stand-in data and secondary.

    Parameters
    ----------
    sfx : str
        Method suffix of the normalisation.
    g4, g4_sel : pandas.DataFrame
        Gauss4 :func:`per_method` table and :func:`select_C` rows.
    bayes : dict
        Gauss4 data set -> Bayes accuracy.
    ban_sel : pandas.DataFrame
        Banana :func:`select_C` rows.
    t1, t1_sel : pandas.DataFrame
        Table 1 :func:`per_method` table and :func:`select_C` rows.
    names : list of str
        Table 1 sets run.
    sp_sel : pandas.DataFrame
        Splice :func:`select_C` rows.
    roundoff : pandas.DataFrame, optional
        :func:`roundoff_check` output: claim C3d is inconclusive when the refits on
        perturbed kernels put its mean on the other side of the threshold.

    Returns
    -------
    claims : list of Claim
    """
    out = []
    for name in GAUSS4:
        v = name.split("_", 1)[1]
        tag = "" if v == "equal" else "-recalled"
        hard = v == "equal"
        acc = {m: value(g4, m + sfx, "acc", name) for m in ["SVM K_G"] + FIG_METHODS}
        sv = {m: value(g4, m + sfx, "sv", name) for m in ["SVM K_G"] + FIG_METHODS}
        pre = f"Gauss4 ({v}; Bayes {100 * bayes[name]:.2f} %): "
        lkp, mkp, lll, svg = ("LMKL K_L-K_P" + sfx, "MKL K_L-K_P" + sfx,
                              "LMKL K_L-K_L-K_L" + sfx, "SVM K_G" + sfx)
        out += [
            gain_claim(f"C3a{tag}", f"{pre}LMKL (K_L-K_P) is more accurate than MKL (K_L-K_P).",
                       fold_diffs(g4_sel, name, lkp, mkp, "test_acc"), hard=hard,
                       context=f"acc {acc['LMKL K_L-K_P']:.2f} vs {acc['MKL K_L-K_P']:.2f} %; "),
            gain_claim(f"C3b{tag}", f"{pre}LMKL (K_L-K_L-K_L) is more accurate than SVM K_G "
                                    "(paper: 92.00 vs 89.67 %).",
                       fold_diffs(g4_sel, name, lll, svg, "test_acc"), hard=hard,
                       context=f"acc {acc['LMKL K_L-K_L-K_L']:.2f} vs {acc['SVM K_G']:.2f} %; "),
            gain_claim(f"C3c{tag}", f"{pre}LMKL (K_L-K_L-K_L) stores fewer SVs than SVM K_G "
                                    "(paper: 23.18 vs 100 %).",
                       -fold_diffs(g4_sel, name, lll, svg, "sv_pct"), hard=hard,
                       context=f"SV {sv['LMKL K_L-K_L-K_L']:.1f} vs {sv['SVM K_G']:.1f} %; "),
        ]
        out.append(crisp_claim(g4_sel, name, sfx, bayes[name], roundoff=roundoff))
    lkp, mkp = "LMKL K_L-K_P" + sfx, "MKL K_L-K_P" + sfx
    ban = per_method(ban_sel)
    out += [
        gain_claim("C4a", "Banana: LMKL (K_L-K_P) is more accurate than MKL (K_L-K_P) (paper: "
                          "84.46 vs 70.52 %).",
                   fold_diffs(ban_sel, "banana", lkp, mkp, "test_acc"),
                   context=f"acc {value(ban, lkp, 'acc'):.2f} vs {value(ban, mkp, 'acc'):.2f} %; "),
        gain_claim("C4b", "Banana: LMKL (K_L-K_P) stores fewer SVs than MKL (K_L-K_P) (paper: "
                          "41.28 vs 82.36 %).",
                   -fold_diffs(ban_sel, "banana", lkp, mkp, "sv_pct"),
                   context=f"SV {value(ban, lkp, 'sv'):.1f} vs {value(ban, mkp, 'sv'):.1f} %; "),
    ]
    (lpg, mpg), (lll, svl) = pairs(sfx)

    def set_means(a, b, col):
        sa = t1[t1.method == a].set_index("dataset").loc[names, col]
        sb = t1[t1.method == b].set_index("dataset").loc[names, col]
        return (sa - sb).to_numpy()

    over = f"over the {len(names)} Table 1 sets run (per-set mean differences; "
    gain_rule = "gain test per set over the paired folds (one-sided t, p < 0.05)"
    out += [
        all_sets_claim("C5a", "Table 1: LMKL (K_P-K_G) is as accurate as MKL (K_P-K_G) on "
                              "every set (paper: no significant difference on all ten).",
                       {n: _set_equivalence(t1_sel, n, lpg, mpg) for n in names},
                       rule=EQUIV_RULE, tolerance=f"+-{EQUIV_MARGIN:g} accuracy points"),
        gain_claim("C5b", "Table 1: LMKL (K_P-K_G) stores fewer SVs than MKL (K_P-K_G) over "
                          "the sets (paper: Wilcoxon test significant).",
                   -set_means(lpg, mpg, "sv"), context=over + "SV% lower on "
                   f"{int((set_means(lpg, mpg, 'sv') < 0).sum())}); "),
        all_sets_claim("C5c", "Table 1: LMKL (K_P-K_G) stores significantly fewer SVs than "
                              "MKL on Heart, Pima and Wdbc.",
                       {n: _set_gain(t1_sel, n, lpg, mpg, "sv_pct")
                        for n in ("heart", "pima", "wdbc") if n in names},
                       rule=gain_rule, tolerance=f"one-sided p < {ALPHA:g}"),
        gain_claim("C6a", "Table 1: LMKL (K_L-K_L-K_L) is more accurate than SVM K_L over the "
                          "sets (paper: Wilcoxon test significant).",
                   set_means(lll, svl, "acc"), context=over + "accuracy higher on "
                   f"{int((set_means(lll, svl, 'acc') > 0).sum())}); "),
        all_sets_claim("C6b", "Table 1: LMKL (K_L-K_L-K_L) is significantly more accurate "
                              "than SVM K_L on Banana, Pima and Spambase.",
                       {n: _set_gain(t1_sel, n, lll, svl, "test_acc")
                        for n in ("banana", "pima", "spambase") if n in names},
                       rule=gain_rule, tolerance=f"one-sided p < {ALPHA:g}"),
        gain_claim("C6c", "Table 1: LMKL (K_L-K_L-K_L) stores fewer SVs than SVM K_L over "
                          "the sets (paper: significantly fewer on 6 of 10).",
                   -set_means(lll, svl, "sv"), context=over + "SV% lower on "
                   f"{int((set_means(lll, svl, 'sv') < 0).sum())}); "),
    ]
    sp = per_method(sp_sel)

    def ctx(a, b):
        return (f"splice (stand-in): {value(sp, a, 'acc'):.2f} vs {value(sp, b, 'acc'):.2f} %"
                f" accuracy, {value(sp, a, 'sv'):.1f} vs {value(sp, b, 'sv'):.1f} % SV; ")

    out += [
        gain_claim("C7a", "Splice (TIS stand-in): LMKL (K_L-K_L-K_L) is more accurate than "
                          "SVM K_L.", fold_diffs(sp_sel, "splice", lll, svl, "test_acc"),
                   context=ctx(lll, svl), hard=False),
        gain_claim("C7b", "Splice (TIS stand-in): LMKL (K_L-K_L-K_L) stores fewer SVs than "
                          "SVM K_L (paper: almost a third fewer).",
                   -fold_diffs(sp_sel, "splice", lll, svl, "sv_pct"), context=ctx(lll, svl),
                   hard=False),
        equivalence_claim("C7c", "Splice (TIS stand-in): LMKL (K_P-K_G) is as accurate as MKL "
                                 "(K_P-K_G).", fold_diffs(sp_sel, "splice", lpg, mpg, "test_acc"),
                          context=ctx(lpg, mpg), hard=False),
        gain_claim("C7d", "Splice (TIS stand-in): LMKL (K_P-K_G) stores fewer SVs than MKL "
                          "(K_P-K_G) (paper: 24.55 % fewer).",
                   -fold_diffs(sp_sel, "splice", lpg, mpg, "sv_pct"), context=ctx(lpg, mpg),
                   hard=False),
    ]
    return out


def claims(grad_rel_err, fits, sfx, **results):
    """All claims: C1–C2 (Sec. 2, Algorithm 1) and C3–C7 with one normalisation.

    Parameters
    ----------
    grad_rel_err : float
        Output of :func:`gradient_check`.
    fits : pandas.DataFrame
        :func:`lmkl_fits` output.
    sfx : str
        Method suffix of the normalisation C3–C7 are judged with.
    **results
        Keyword arguments of :func:`claims_for` other than ``sfx``.

    Returns
    -------
    claims : list of mklcore.repro.reporting.Claim
    """
    n_monotone = int(fits.monotone.sum())
    return [
        Claim("C1", "The analytic gradient of J (Sec. 2) equals finite differences.",
              grad_rel_err <= 1e-5, f"max relative error {grad_rel_err:.1e}",
              rule="holds if max |analytic - central difference| / max |central difference| "
                   "<= 1e-5 (SVM solved to a KKT tolerance of 1e-12)",
              tolerance="1e-5 relative"),
        Claim("C2", "J never increases over the iterations (Algorithm 1), on every fit.",
              n_monotone == len(fits), f"{n_monotone} of {len(fits)} LMKL fits monotone",
              rule="holds if J(t+1) <= J(t) at every update of every LMKL fit of the run",
              tolerance="0 (no increase)"),
    ] + claims_for(sfx, **results)


def differences(data, bayes, literal, conv, *, n_iter, quick, ban_n_train=None,
                roundoff=None):
    """The report's one section "What differs from the paper and why", from the run's numbers.

    Parameters
    ----------
    data : pandas.DataFrame
        :func:`data_table` output.
    bayes : dict
        Gauss4 data set -> Bayes accuracy (fraction).
    literal : pandas.DataFrame
        :func:`literal_grid` output.
    conv : pandas.DataFrame
        :func:`convergence` output.
    n_iter : int
        LMKL iterations of the run.
    quick : bool
        Quick mode.
    ban_n_train : int, optional
        Banana training-fold size (why the Banana rows are or are not compared).
    roundoff : pandas.DataFrame, optional
        :func:`roundoff_check` output (the paragraph on round-off).

    Returns
    -------
    text : str
        Markdown.
    """
    rows = data.assign(name=data["data set"].str.replace(" (assumed)", "", regex=False))
    rows = rows.set_index("name")

    def size(name):
        r = rows.loc[name]
        sub = f", subsampled from {r['n (all)']}" if r["n (all)"] != r["n"] else ""
        return f"{name} ({r['n']} x {r['d']}{sub}; {r['train fold']} training points per fold)"

    assumed = [n for n in rows.index if n in ASSUMED]
    near = np.abs(literal["literal acc (fold 0)"] - literal["majority (%)"]) <= 1.0
    near_ours = np.abs(literal["acc"] - literal["majority (%)"]) <= 1.0

    def which(mask):
        return ", ".join(f"{d} {m}" for d, m in literal.loc[mask, ["dataset", "method"]]
                         .itertuples(index=False)) or "none"

    g4_lll = literal[(literal.dataset == "gauss4_equal")
                     & (literal.method == "LMKL K_L-K_L-K_L")]
    lit = (f"{int(near.sum())} of {len(literal)} fits checked end within 1 point of the "
           f"majority-class share of the test set ({which(near)}); with C x N, "
           f"{int(near_ours.sum())} ({which(near_ours)})")
    if len(g4_lll):
        r = g4_lll.iloc[0]
        lit += (f". LMKL (K_L-K_L-K_L) on Gauss4 (equal) stores {r['literal SV% (fold 0)']:.1f} % "
                f"SVs with the literal grid and {r['SV%']:.1f} % with C x N (the paper: 23.18 %)")
    n_tr = sorted(set(rows["train fold"]))
    label = {"svm": "SVM (LIBSVM)", "mkl": "MKL (SimpleMKL, duality gap <= 0.01)",
             "lmkl": "LMKL"}

    def conv_line(r):
        if r["status counts"] == f"-1: {r.fits}":
            return (f"{label[r.family]}: {r.fits} fits, no status reported (LIBSVM runs "
                    "without an iteration cap)")
        if r.family == "lmkl" and str(r.get("full schedule", "")) != "":
            other = r.fits - r["full schedule"] - r["stopped early"] \
                - r["stopped after <= 1 update"]
            return (f"LMKL ({r.fits} fits; the paper's rule is a fixed schedule of {n_iter} "
                    f"gating updates, and ours also ends a fit early when no descent step is "
                    f"left): {r['full schedule']} ran the full schedule, {r['stopped early']} "
                    f"stopped early at a local optimum after 2 or more updates, "
                    f"{r['stopped after <= 1 update']} stopped after at most one update (no "
                    f"descent step was found after the first update)"
                    + (f", {other} ended otherwise (status counts {r['status counts']})"
                       if other else "")
                    + f"; updates per fit, median [min, max]: "
                      f"{r['updates (median [min, max])']}")
        return (f"{label[r.family]}: {r['met stopping rule']} of {r.fits} fits met their "
                f"stopping rule (status counts {r['status counts']})")

    conv_text = "; ".join(conv_line(r) for _, r in conv.iterrows())
    recalled_low = [n for n in GAUSS4 if n in bayes and 100 * bayes[n] < PAPER_G4_LMKL]
    if recalled_low:
        g4_reason = (f"The paper's LMKL reaches {PAPER_G4_LMKL:.2f} %, above the Bayes accuracy "
                     f"of {', '.join(recalled_low)}, so we think its recalled parameters are "
                     "wrong there")
    else:
        g4_reason = (f"Both settings' Bayes accuracies are at or above the paper's LMKL "
                     f"accuracy {PAPER_G4_LMKL:.2f} %")
    if ban_n_train is None:
        ban_text = ""
    elif abs(ban_n_train - BANANA_PAPER_TRAIN) <= 0.1 * BANANA_PAPER_TRAIN:
        ban_text = (f" Banana's training folds ({ban_n_train} points) are within 10 % of the "
                    f"paper's (about {BANANA_PAPER_TRAIN}), so its Figure 3 numbers are "
                    "compared.")
    else:
        ban_text = (f" Banana is subsampled to {ban_n_train} training points per fold (the "
                    f"paper: about {BANANA_PAPER_TRAIN}); since the share of support vectors "
                    "depends on N, its Figure 3 numbers are shown but not compared (n/a).")
    n_run = sum(n in TABLE1 for n in rows.index)
    parts = [
        "**C grid (hand-set scaling).** The paper normalises every kernel to unit trace and "
        f"selects C from {list(C_GRID)} (Sec. 4). A unit-trace kernel has entries of order 1/N, "
        "so we apply the grid as C x N, with N the training-fold size (N = "
        f"{n_tr[0]} to {n_tr[-1]} here): the same SVMs as kernels scaled to trace N. The grid "
        f"taken literally, on fold 0 (`literal_grid.csv` beside this report, with the "
        f"protocol result beside it): {lit}.",
        "**Gauss4 (stand-in: recalled parameters).** The means and covariances of Sec. 4.1 are "
        "lost from our copy of the paper (it draws 1200 points); we run two recalled settings: "
        + ", ".join(f"{size(n)}, Bayes accuracy {100 * bayes[n]:.2f} %" for n in GAUSS4)
        + f". {g4_reason}; claims are judged on the equal-variance setting, the recalled one "
        "gives secondary claims, and no Gauss4 number is compared (n/a).",
        "**Table 1 sets.** Named in Sec. 4.2 and run: "
        + ", ".join(size(n) for n in rows.index if n in TABLE1 and n not in ASSUMED) + ". "
        + ("Assumed members (their names are lost; stand-ins): "
           + ", ".join(size(n) for n in assumed) + ". " if assumed else "")
        + (f"Quick mode runs {n_run} of the {len(TABLE1)} sets. " if quick else "")
        + f"The paper's counts over its ten sets are therefore shown, not compared (n/a); the "
        f"statements about named sets are tested as claims.{ban_text}",
        f"**Table 2 (stand-in).** The TIS sets (Arabidopsis, Vertebrates; 200 nucleotides, "
        f"1000 binary inputs) are not available; UCI splice stands in: {size('splice')}.",
        f"**Protocol.** {'Quick mode: one replication of 2-fold cv, ' if quick else '5x2 cv, '}"
        f"{n_iter} LMKL iterations (the paper: 50). Gains are tested with one-sided paired "
        "t-tests over the folds; the folds share one test set and half of their training "
        "data, so we think these tests are optimistic; the 5x2 cv F test (the paper's) is in "
        "the Table 1 marks.",
        f"**Solver convergence.** {conv_text}.",
        "**Unit-diagonal kernels.** Gönen's later code normalises to unit diagonal; that "
        "variant of every table and claim is written beside this report "
        "(`*_unit_diagonal.csv`), not judged here.",
        roundoff_text(roundoff),
        "**Likely causes of the remaining differences (hypotheses).** The paper's line search "
        "and SVM solver (MOSEK) are not given; we use the expand-then-backtrack search of "
        "Gönen's later code and LIBSVM. Large sets are subsampled, so our training folds are "
        "smaller than the paper's.",
    ]
    return "\n\n".join(part for part in parts if part)


def roundoff_text(roundoff):
    """The report's paragraph on round-off, from :func:`roundoff_check` (``""`` if None).

    Parameters
    ----------
    roundoff : pandas.DataFrame or None
        :func:`roundoff_check` output.

    Returns
    -------
    text : str
        Markdown.
    """
    if roundoff is None or not len(roundoff):
        return ""
    summ = roundoff_summary(roundoff)
    d_acc = np.abs(roundoff.test_acc_pert - roundoff.test_acc)
    d_sv = np.abs(roundoff.sv_pct_pert - roundoff.sv_pct)
    d_gate = np.abs(roundoff.max_gate_last_pert - roundoff.max_gate_last)
    means = "; ".join(f"{r.dataset} {r['mean max gate']:.3f} -> "
                      f"{r['mean max gate (perturbed)']:.3f}" for _, r in summ.iterrows())
    n_C = int(np.sum(roundoff.C_pert != roundoff.C))
    return ("**Round-off (why another machine gives other LMKL numbers).** The protocol behind "
            f"the {len(roundoff)} LMKL fits of Gauss4 at their selected C (every C of the grid, "
            "C selected again on the validation fold) was rerun on training kernels moved by at "
            "most one unit in the last place, the size of the differences between BLAS builds "
            f"and `exp` implementations of different processors: {n_C} folds selected another "
            f"C, {int(np.sum(d_acc > 0))} fits changed their test accuracy (by up to "
            f"{d_acc.max():.2f} points), {int(np.sum(d_sv > 0))} their SV% (by up to "
            f"{d_sv.max():.2f}) and "
            f"{int(np.sum(d_gate > 1e-6))} their final mean maximal gate (by up to "
            f"{d_gate.max():.3f}); mean maximal gate over the fits: {means}. LMKL's gradient "
            "steps on the gating follow the support vectors of each SVM, so a last-bit "
            "difference can change which points become support vectors and the path after it, "
            "and a near tie of validation accuracies can then select another C. "
            "The LMKL numbers of this report are therefore reproducible bit for bit on one "
            "machine, but another processor or BLAS can give numbers that differ at this "
            "level; claim C3d, a threshold on the mean maximal gate, is inconclusive when the "
            "rerun puts it on the other side of the threshold.")


def sanity_check(runs, fits, grad_rel_err, n_rep, n_C):
    """Checks that would catch a silent failure of a batch run.

    Parameters
    ----------
    runs : list of tuple
        ``(raw rows, data set names, methods)`` per :func:`run_protocol` call (Banana's Table 1
        rows come with the Banana run).
    fits : pandas.DataFrame
        :func:`lmkl_fits` output.
    grad_rel_err : float
        Output of :func:`gradient_check`.
    n_rep : int
        Replications of 2-fold cv.
    n_C : int
        Number of C values.

    Returns
    -------
    message : str

    Raises
    ------
    AssertionError
        If a fold or method is missing, a percentage is out of range, MKL weights leave the
        simplex, an LMKL objective increased, the gradient check failed or an LMKL fit made
        fewer SVM solves than iterations + 1.
    """
    for df, names, methods in runs:
        if len(df) != len(names) * 2 * n_rep * len(methods) * n_C:
            raise AssertionError("missing rows")
        if not (df.test_acc.between(0, 100).all() and df.sv_pct.between(0, 100).all()):
            raise AssertionError("a percentage is out of [0, 100]")
        mkl = df[df.method.str.startswith("MKL")]
        if not all(abs(sum(w) - 1) < 1e-6 and min(w) >= 0 for w in mkl.weights):
            raise AssertionError("MKL weights off the simplex")
    if int(fits.monotone.sum()) != len(fits):
        raise AssertionError("an LMKL objective increased")
    if not grad_rel_err <= 1e-5:
        raise AssertionError("gradient check failed")
    if not ((fits.n_iter >= 0).all() and (fits.n_svm_calls >= fits.n_iter + 1).all()):
        raise AssertionError("LMKL iteration or SVM-solve counts inconsistent")
    return f"all sanity checks passed ({len(fits)} LMKL fits, all monotone)"


def summary_table(paper_vs_ours, claims_df):
    """Rows of ``summary.csv``: every compared number, then every claim.

    Parameters
    ----------
    paper_vs_ours : pandas.DataFrame
        Concatenated :func:`mklcore.repro.reporting.compare` tables.
    claims_df : pandas.DataFrame
        :func:`mklcore.repro.reporting.claims_table` of the claims.

    Returns
    -------
    summary : pandas.DataFrame
        Columns of :data:`mklcore.repro.reporting.SUMMARY_COLUMNS` (``item, paper, ours,
        verdict, tolerance, rule, source, note``); floats rounded to 3 decimals; a claim's
        source is where the paper makes it.
    """
    claim_rows = summary_schema(claims_df)
    claim_rows["source"] = [CLAIM_SOURCE[c[:2]] for c in claims_df.id]
    summary = pd.concat([summary_schema(paper_vs_ours), claim_rows], ignore_index=True)
    summary["ours"] = [round(v, 3) if isinstance(v, float) else v for v in summary.ours]
    return summary
