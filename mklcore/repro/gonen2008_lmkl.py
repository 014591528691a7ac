r"""Helpers of ``notebooks/gonen2008_lmkl.ipynb`` (Gönen & Alpaydın, ICML 2008).

Reproduces M. Gönen and E. Alpaydın, "Localized multiple kernel learning", Proceedings of the
25th International Conference on Machine Learning (ICML 2008), pp. 352–359,
https://doi.org/10.1145/1390156.1390201. The protocol of every table and figure (data
preparation, kernels, the selection of C, the fits, the scores, the claims) is code in the
notebook; this module holds what the notebook's reader need not see:

* the names of the data sets and methods and the run's settings: :data:`METHODS`,
  :class:`Protocol`, :func:`make_protocol`;
* the data: :func:`load` (Gauss4, splice one-hot coded, the UCI and IDA sets);
* LMKL's history: :func:`lmkl_path`;
* refits in worker processes, each model once per run: :func:`fit_models`, :class:`Kept`;
* round-off: :func:`perturb_kernels`, :func:`roundoff_summary`;
* the convergence counts of the protocol's fits: :func:`convergence`;
* the plots: :func:`panel_grid`, :func:`draw_panel`, :func:`boundary_figure` (Figures 1, 3),
  :func:`figure2`, :func:`plot_sv_scatter`.

Localized MKL (LMKL) learns the discriminant (eq. 4)
:math:`f(x) = \sum_m \eta_m(x) \langle w_m, \Phi_m(x)\rangle + b` with a softmax gating model
:math:`\eta_m(x)` (Sec. 2); the solver is :func:`mklcore.localized.lmkl_solve`.
"""

from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap

from .. import datasets
from ..localized import locally_combined_kernel, softmax_gating
from .experiments import run, spawn_seeds, subsample
from .plotting import method_palette

__all__ = [
    "PAPER_ID", "C_GRID", "QUICK_C_GRID", "GAUSS4", "TABLE1", "QUICK_TABLE1", "ASSUMED", "QUICK_CAPS",
    "BASE_METHODS", "METHODS", "DOUBLING", "LINE_SEARCH", "LMKL_PRIMARY", "NORM_SUFFIX", "NORM_NAME", "NORM_FILE", "FIG_METHODS",
    "T1_BASE", "T1_DOUBLING", "G4_METHODS", "T1_METHODS", "BANANA_METHODS", "READABLE_COLUMNS",
    "Protocol", "make_protocol", "load", "lmkl_path", "Kept", "fit_models", "ROUNDOFF_ULPS",
    "perturb_kernels", "roundoff_summary", "convergence", "panel_grid", "draw_panel",
    "boundary_figure", "figure2", "plot_sv_scatter",
]

PAPER_ID = "gonen2008_lmkl"

#: the values of C tried on the validation folds (Sec. 4); the notebook applies them as C x N
#: (N the training-fold size) on unit-trace kernels
C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)
#: quick mode: the middle of the grid (the fits at C = 100 are the slowest of the grid)
QUICK_C_GRID = (0.1, 1.0, 10.0)
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

#: the label of the LMKL variant with the uncapped doubling line search of Gönen's code
DOUBLING = " (doubling)"
#: methods: name -> (family, indices of the kernels combined: 0 = K_L, 1 = K_P, 2 = K_G);
#: every LMKL method also as the variant "<name> (doubling)"
BASE_METHODS = {
    "SVM K_L": ("svm", [0]), "SVM K_P": ("svm", [1]), "SVM K_G": ("svm", [2]),
    "MKL K_L-K_P": ("mkl", [0, 1]), "LMKL K_L-K_P": ("lmkl", [0, 1]),
    "MKL K_P-K_G": ("mkl", [1, 2]), "LMKL K_P-K_G": ("lmkl", [1, 2]),
    "LMKL K_L-K_L-K_L": ("lmkl", [0, 0, 0]),
}
BASE_METHODS.update({name + DOUBLING: spec for name, spec in list(BASE_METHODS.items())
                     if spec[0] == "lmkl"})
#: the line search of the primary LMKL methods (``line_search`` of
#: :func:`mklcore.localized.lmkl_solve`: steps of at most 1 along the normalised gradient)
LMKL_PRIMARY = "armijo"
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
#: LMKL method -> ``line_search`` of :func:`mklcore.localized.lmkl_solve`
LINE_SEARCH = {name: "doubling" if DOUBLING in name else LMKL_PRIMARY
               for name, (fam, _, _) in METHODS.items() if fam == "lmkl"}
FIG_METHODS = ["MKL K_L-K_P", "LMKL K_L-K_P", "LMKL K_L-K_L-K_L"]
T1_BASE = ["SVM K_L", "SVM K_P", "SVM K_G", "MKL K_P-K_G", "LMKL K_P-K_G", "LMKL K_L-K_L-K_L"]
#: the doubling variants of the LMKL methods of Table 1 (own rows, not in the paper's layout)
T1_DOUBLING = ["LMKL K_P-K_G" + DOUBLING, "LMKL K_L-K_L-K_L" + DOUBLING]
G4_METHODS = [m + sfx for sfx in ("", " [diag]")
              for m in ["SVM K_L", "SVM K_G"] + FIG_METHODS + [FIG_METHODS[1] + DOUBLING,
                                                             FIG_METHODS[2] + DOUBLING]]
T1_METHODS = [m + sfx for sfx in ("", " [diag]") for m in T1_BASE + T1_DOUBLING]
BANANA_METHODS = T1_METHODS + [m + sfx for sfx in ("", " [diag]")
                               for m in FIG_METHODS[:2] + [FIG_METHODS[1] + DOUBLING]]
#: readable names of the columns of the notebook's per-method tables, for the report
READABLE_COLUMNS = {"dataset": "data set", "C": "C (grid value)", "acc": "test accuracy (%)",
                    "acc_sd": "accuracy s.d.", "sv": "SV (%)", "sv_sd": "SV s.d.",
                    "weights": "kernel weights (MKL: beta; LMKL: mean gate)"}

#: font sizes of the figures: panel titles, legends and annotations, figure titles (readable
#: in the book without zooming)
TITLE_SIZE, SMALL_SIZE, SUPTITLE_SIZE = 11, 9, 12


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
        the notebook's ``run_protocol``.
    models : dict
        Models refitted by :func:`fit_models` (for the figures), keyed by ``(dataset, fold,
        method, C)``: each is fitted once per protocol and shared by the figures that draw it.
    doubling : tuple of str, default=("", " [diag]")
        Normalisation suffixes (:data:`NORM_SUFFIX` values) whose LMKL methods are also run
        as the doubling variant (:data:`DOUBLING`); :meth:`methods` leaves out the others.
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
    doubling: tuple = ("", " [diag]")

    @property
    def data_seed(self):
        """int : the seed :func:`mklcore.repro.experiments.run` passes to repeat 0."""
        return spawn_seeds(self.seed, 1)[0]

    def methods(self, names):
        """The methods of ``names`` (e.g. :data:`T1_METHODS`) this protocol runs: every one
        but the doubling variants of the normalisations not in :attr:`doubling`."""
        diag = NORM_SUFFIX["unit_diagonal"]
        return [m for m in names if DOUBLING not in m
                or (diag if m.endswith(diag) else "") in self.doubling]


def make_protocol(quick, *, seed=0, n_jobs=1, n_iter=50, max_samples=1500, cache_dir=None,
                  full_size=(), normalize="unit_trace"):
    """Protocol of the quick (CI) or the full run.

    Parameters
    ----------
    quick : bool
        Quick mode: four Table 1 sets, one 2-fold cv replication, 20 LMKL iterations, the
        sizes of :data:`QUICK_CAPS`, the C values of :data:`QUICK_C_GRID` and the doubling
        variant with the kernels of ``normalize`` only (the variant's claims use those).
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
    full_size : sequence of str, default=()
        Full run: data sets run at their full size, not subsampled to ``max_samples`` (e.g.
        ``("banana",)``: the paper's training folds of about 1767 points).
    normalize : {"unit_trace", "unit_diagonal"}, default="unit_trace"
        The normalisation the claims are judged with (a key of :data:`NORM_SUFFIX`).

    Returns
    -------
    protocol : Protocol
    """
    table1 = list(QUICK_TABLE1 if quick else TABLE1)
    caps = (dict(QUICK_CAPS) if quick
            else {name: max_samples for name in table1 + ["splice"] + list(GAUSS4)
                  if name not in full_size})
    return Protocol(table1=table1, n_rep=1 if quick else 5, n_iter=20 if quick else n_iter,
                    caps=caps, seed=seed, n_jobs=n_jobs, cache_dir=cache_dir,
                    C_grid=list(QUICK_C_GRID if quick else C_GRID),
                    doubling=(NORM_SUFFIX[normalize],) if quick else tuple(NORM_SUFFIX.values()))


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



class Kept:
    """A fitted result passed through :func:`mklcore.repro.experiments.run` as it is (uncached
    runs convert only JSON-like values, and an ``MKLResult`` is a mapping): a cell function
    returns ``{"result": Kept(result)}``."""

    __slots__ = ("result",)

    def __init__(self, result):
        self.result = result


def fit_models(protocol, requests, cell, desc="refits"):
    """Refit models of the protocol's folds, in its worker processes, each once per protocol.

    The results are kept in ``protocol.models``, so a model drawn by two figures is fitted
    once.

    Parameters
    ----------
    protocol : Protocol
        The run's settings (``n_jobs`` worker processes).
    requests : list of tuple
        ``(dataset, fold, method, C)`` of each model.
    cell : callable
        Cell function of :func:`mklcore.repro.experiments.run` with the keywords
        ``dataset, fold, method, C, n_iter, n_rep, cap, repeat, seed``, returning
        ``{"result": Kept(result)}`` (the notebook's refit of one protocol model).
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
        fits = run(cell, grid, n_repeats=1, seed=protocol.seed, n_jobs=protocol.n_jobs,
                   desc=desc)
        protocol.models.update(zip(todo, (kept.result for kept in fits.result)))
    return [protocol.models[k] for k in keys]


#: size of the round-off perturbation of :func:`perturb_kernels`, in units in the last place:
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


def roundoff_summary(table):
    """Per data set: the largest change of a fit and the change of the means over the folds.

    Parameters
    ----------
    table : pandas.DataFrame
        the notebook's ``roundoff_check`` output.

    Returns
    -------
    summary : pandas.DataFrame
        One row per data set: fits, largest absolute change of one fit's test accuracy
        (points), SV% and final maximal gate, fits whose test accuracy changed, folds where
        another C was selected, and the mean final maximal gate over the fits, protocol and
        rerun.
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

    The LMKL methods with the doubling line search (:data:`DOUBLING`) are the family
    ``"lmkl (doubling)"``, the primary ones (:data:`LMKL_PRIMARY`) the family ``"lmkl"``.

    Parameters
    ----------
    raws : list of pandas.DataFrame
        Outputs of the notebook's ``run_protocol``.

    Returns
    -------
    table : pandas.DataFrame
        Columns ``family, fits, met stopping rule, status counts`` (status -1: not reported)
        and, for LMKL, how many gating updates the fits made (``n_iter``, where the rows
        have it): ``full schedule`` (status 1: every update of the paper's fixed schedule
        was made), ``stopped early`` (status 0 after at least two updates: no descent step
        left, a local optimum), ``stopped after <= 1 update`` (status 0 with ``n_iter <= 1``:
        no descent step after the first update), its share of the fits in percent
        (``stopped after <= 1 update (%)``) and ``updates (median [min, max])``; these
        columns are empty for the other families.
    """
    rows = pd.concat(raws, ignore_index=True)
    family = rows.method.map(lambda m: METHODS[m][0] + (DOUBLING if DOUBLING in m else ""))
    out = []
    for fam, g in rows.groupby(family, sort=False):
        counts_ = g.status.value_counts().sort_index()
        row = {"family": fam, "fits": len(g), "met stopping rule": int((g.status == 0).sum()),
               "status counts": ", ".join(f"{k}: {v}" for k, v in counts_.items()),
               "full schedule": "", "stopped early": "", "stopped after <= 1 update": "",
               "stopped after <= 1 update (%)": "", "updates (median [min, max])": ""}
        if fam.startswith("lmkl") and "n_iter" in g:
            it = g.n_iter.astype(int)
            stopped = g.status == 0
            row.update({"full schedule": int((g.status == 1).sum()),
                        "stopped early": int((stopped & (it > 1)).sum()),
                        "stopped after <= 1 update": int((stopped & (it <= 1)).sum()),
                        "stopped after <= 1 update (%)":
                            round(100 * float((stopped & (it <= 1)).mean()), 1),
                        "updates (median [min, max])":
                            f"{float(it.median()):g} [{it.min()}, {it.max()}]"})
        out.append(row)
    return pd.DataFrame(out)


def panel_grid(p, n_grid=150):
    """The grid of raw input coordinates a panel of :func:`draw_panel` is drawn on.

    Parameters
    ----------
    p : dict
        The fold (the notebook's ``prepare``); its data must be two-dimensional.
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




def draw_panel(ax, p, title, values, grid, bayes_variant=None):
    """Draw a decision boundary, the dominant-kernel regions and the training points.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Target axes.
    p : dict
        The fold (the notebook's ``prepare``: ``X``, ``y``, ``tr``); two-dimensional data.
    title : str
        Panel title.
    values : tuple
        ``(f, eta)``: decision values on the grid and the gates (LMKL; ``None`` otherwise).
    grid : tuple of ndarray
        ``(xx, yy)`` of :func:`panel_grid`.
    bayes_variant : str or None, default=None
        Gauss4 variant whose Bayes boundary is drawn (red, dashed).

    Returns
    -------
    ax : matplotlib.axes.Axes
    """
    xx, yy = grid
    f, eta = values
    if eta is not None:  # gating regions: the kernel with the largest gate
        region = eta.argmax(axis=1).reshape(xx.shape)
        ax.contourf(xx, yy, region, levels=np.arange(eta.shape[1] + 1) - 0.5,
                    cmap=ListedColormap(["#fde0c5", "#c6dbef", "#d9f0d3"][:eta.shape[1]]),
                    alpha=0.8)
        ax.contour(xx, yy, region, levels=np.arange(eta.shape[1]) + 0.5, colors="#7f7f7f",
                   linewidths=1.0, linestyles=":")
    Xtr, ytr = p["X"][p["tr"]], p["y"][p["tr"]]
    ax.scatter(*Xtr[ytr > 0].T, s=6, c="#0173b2", marker="o", lw=0, label="class +1")
    ax.scatter(*Xtr[ytr < 0].T, s=9, c="#d55e00", marker="x", lw=0.8, label="class -1")
    ax.contour(xx, yy, f, levels=[0.0], colors="k", linewidths=1.8)
    if bayes_variant is not None:
        b = datasets.gauss4_bayes_predict(np.c_[xx.ravel(), yy.ravel()], bayes_variant)
        ax.contour(xx, yy, b.reshape(xx.shape), levels=[0.0], colors="#cc0000",
                   linewidths=1.4, linestyles="--")
    ax.set_title(title, fontsize=TITLE_SIZE)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def boundary_figure(p, panels, models, values, grid, title, bayes_variant=None):
    """Figures 1 and 3: boundaries of :data:`FIG_METHODS`, one row per normalisation.

    Parameters
    ----------
    p : dict
        The fold the models were fitted on (two-dimensional data).
    panels : list of pandas.Series
        Per panel, the per-method row (``method, C, acc, sv``) of the notebook's table.
    models : list of MKLResult
        The fitted models, in the order of ``panels``.
    values : list of tuple
        ``(f, eta)`` of each model on ``grid``.
    grid : tuple of ndarray
        ``(xx, yy)`` of :func:`panel_grid`.
    title : str
        Figure title.
    bayes_variant : str or None, default=None
        Gauss4 variant whose Bayes boundary is drawn.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    n = len(FIG_METHODS)
    fig, axes = plt.subplots(2, n, figsize=(4.8 * n, 9.6))
    for ax, row, res, vals in zip(axes.ravel(), panels, models, values):
        what = "w" if METHODS[row.method][0] == "mkl" else "mean gate"
        draw_panel(ax, p, f"{row.method}, C = {row.C:g}\nacc {row.acc:.1f} %, SV {row.sv:.1f} %"
                   f"\n{what} {np.round(res.weights, 2).tolist()}", vals, grid, bayes_variant)
    axes[0, 0].legend(loc="lower left", fontsize=SMALL_SIZE, markerscale=2)
    fig.suptitle(title, fontsize=SUPTITLE_SIZE)
    return fig


def figure2(folds):
    """Figure 2 (Sec. 4.1): the locally combined kernel becoming sparse over the iterations.

    Redraws :math:`K_\\eta` of one LMKL fit per row at iterations 0, 1, 5 and the last, from
    the stored gating parameters, with the points sorted by their final dominant kernel,
    then class; the last panel shows the mean maximal gate and :math:`J` over the iterations.

    Parameters
    ----------
    folds : list of tuple
        ``(method, C, K, p, res)`` per row: an LMKL method, its C, the training stack it was
        fitted on, the fold (``Xtr``, ``y``, ``tr``) and the fitted result.

    Returns
    -------
    fig : matplotlib.figure.Figure
    sparsity : pandas.DataFrame
        Per (method, iteration): share of entries of :math:`|K_\\eta|` below
        :math:`10^{-3}` of its maximum, mean maximal gate and :math:`J`.
    """
    fig, axes = plt.subplots(len(folds), 5, figsize=(18, 4.1 * len(folds) + 0.6))
    sparsity = []
    for r, (method, C, K, p, res) in enumerate(folds):
        V_hist = lmkl_path(res, "gating_coef")
        gate_hist, J_hist = lmkl_path(res, "max_gate"), lmkl_path(res, "objective")
        last = len(V_hist) - 1
        steps = sorted({0, min(1, last), min(5, last), last})
        steps = (steps + [last] * 4)[:4]
        order = np.lexsort((p["y"][p["tr"]], res.eta_train.argmax(axis=1)))
        show = order[::max(1, len(order) // 200)]  # draw at most about 200 points
        for ax, t in zip(axes[r, :4], steps):
            K_eta = locally_combined_kernel(K, softmax_gating(p["Xtr"], V_hist[t]))
            v = np.abs(K_eta).max()
            if not any(s["method"] == method and s["iteration"] == t for s in sparsity):
                sparsity.append({"method": method, "C": C, "iteration": t,
                                 "share of |K_eta| < 1e-3 max":
                                     float(np.mean(np.abs(K_eta) < 1e-3 * v)),
                                 "mean max gate": gate_hist[t], "J": J_hist[t]})
            im = ax.imshow(K_eta[np.ix_(show, show)] / v, cmap="RdBu_r", vmin=-1, vmax=1,
                           interpolation="nearest")
            ax.set_title(f"{method}, C = {C:g}\niteration {t}: mean max gate "
                         f"{gate_hist[t]:.2f}", fontsize=TITLE_SIZE - 1)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.colorbar(im, ax=axes[r, :4], shrink=0.8, pad=0.01,
                     label=r"$K_\eta(x_i, x_j)$ / max $|K_\eta|$")
        _gate_and_J(axes[r, 4], gate_hist, J_hist)
    fig.suptitle("Gauss4 (equal): locally combined kernel of LMKL K_L-K_L-K_L over the "
                 "iterations (points sorted by final dominant kernel, then class)",
                 fontsize=SUPTITLE_SIZE)
    return fig, pd.DataFrame(sparsity)


def _gate_and_J(ax, gate_hist, J_hist):
    """The last panel of a :func:`figure2` row: mean maximal gate and J over the iterations."""
    ax.plot(gate_hist, marker=".", label="mean max gate")
    ax.set_xlabel("iteration")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean max gate")
    ax2 = ax.twinx()
    ax2.plot(J_hist, color="#d55e00", marker=".")
    ax2.set_ylabel("J (SVM dual objective)", color="#d55e00", rotation=270, labelpad=14)
    ax2.grid(False)
    ax.set_title("gating crispness (blue)\nand J (orange)", fontsize=TITLE_SIZE - 1)


def plot_sv_scatter(t1, names, pairs):
    """SV% of LMKL against its baseline on every Table 1 set (one row per normalisation).

    Parameters
    ----------
    t1 : pandas.DataFrame
        Per-method table of Table 1 (``dataset, method, sv``).
    names : list of str
        Data sets.
    pairs : dict
        Method suffix -> the two ``(LMKL method, baseline)`` pairs, one row of panels each.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    fig, axes = plt.subplots(2, 2, figsize=(11, 10))
    for row_axes, (sfx, row_pairs) in zip(axes, pairs.items()):
        for ax, (a, b) in zip(row_axes, row_pairs):
            sa = t1[t1.method == a].set_index("dataset").loc[names]
            sb = t1[t1.method == b].set_index("dataset").loc[names]
            ax.scatter(sb.sv, sa.sv, color=method_palette(["lmkl"])["lmkl"], zorder=3)
            for name in names:
                ax.annotate(name, (sb.sv[name], sa.sv[name]), fontsize=SMALL_SIZE,
                            xytext=(3, 3), textcoords="offset points")
            ax.plot([0, 105], [0, 105], color="#949494", lw=1)
            ax.set_xlim(0, 105)
            ax.set_ylim(0, 105)
            ax.set_xlabel(f"{b}: SV (%)")
            ax.set_ylabel(f"{a}: SV (%)")
            ax.set_title(f"{NORM_NAME[sfx]}:\nbelow the diagonal = fewer SVs for LMKL",
                         fontsize=TITLE_SIZE)
    return fig
