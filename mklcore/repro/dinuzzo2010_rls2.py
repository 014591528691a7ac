r"""Data, lower bounds, cached cells and plots of ``notebooks/dinuzzo2010_rls2.ipynb``.

F. Dinuzzo. Kernel machines with two layers and multiple kernel learning. arXiv:1001.2709,
2010 ([1]_ below).

RLS2 (regularised least squares with two layers, Problem 5 of [1]_) learns kernel weights
:math:`d` on the simplex :math:`\Delta_m` and expansion coefficients :math:`c` by

.. math:: \min_{c\in\mathbb R^\ell,\ d\in\Delta_m}\ \tfrac12\|y-\mathbf K(d)c\|^2
          + \tfrac\lambda2\,c^\top\mathbf K(d)c,\qquad \mathbf K(d)=\sum_i d_is_i\mathbf K_i;

the solvers are in :mod:`mklcore.rls2`. The notebook shows the experiment itself (the protocol
of each table and figure, the paper's numbers, the claims, what differs); this module holds
what it reuses or a reader need not see:

* :data:`TABLE2`, :func:`rls2_benchmark_data`: the UCI data of Table 2 (Sec. 5.2), encoded as
  the paper did (the loader needs Table 2's "standardised" column and sizes);
* :func:`binary_strings_split`, :func:`prostate_split`, :func:`microarray_data`,
  :func:`standardise_rows`: the data of Experiments 1 and 2 (Sec. 5.1) and of Sec. 5.3;
* the lower bounds of Experiment 1 (Figure 3): :func:`rmse_columns`,
  :func:`squared_distances`, :func:`kernel_ridge_lower_bound`, :func:`lasso_lower_bound`;
* the cells of the cached runner for Sec. 5.2: :class:`UCIPaths` (kernel bank computed once
  per process, a warm-started path per split), :class:`Ablation` and :func:`ablation` (the
  warm-start ablation), :func:`path_lambdas`, :func:`block`;
* one-vs-all helpers of Sec. 5.3: :func:`ova_path`, :func:`ova_predict`, :func:`cv_choice`,
  :class:`OVALasso`;
* plots: :func:`plot_learning_curves`, :func:`plot_prostate`, :func:`plot_uci_performance`,
  :func:`plot_uci_kernels`, :func:`plot_iterations`, :func:`plot_microarray`.

References
----------
.. [1] F. Dinuzzo. Kernel machines with two layers and multiple kernel learning.
   arXiv:1001.2709, 2010.
"""

import hashlib
import time
import warnings

import numpy as np

__all__ = [
    "TABLE2", "rls2_benchmark_data",
    "binary_strings_split", "prostate_split", "microarray_data", "standardise_rows",
    "rmse_columns", "grid_step_rise", "squared_distances", "kernel_ridge_lower_bound",
    "lasso_lower_bound",
    "plot_learning_curves", "METHODS_EXP1", "plot_prostate",
    "UCIPaths", "block", "path_lambdas", "plot_uci_performance", "plot_uci_kernels",
    "ablation", "Ablation", "plot_iterations", "ABLATION_SOLVERS",
    "ova_path", "ova_predict", "cv_choice", "OVALasso", "plot_microarray",
]


# --------------------------------------------------------------------------------------
# Data of the UCI benchmark (Table 2)
# --------------------------------------------------------------------------------------
#: Table 2 of [1]: task, standardised, examples, features N, kernels m (Sec. 5.2 of [1])
TABLE2 = {
    "autompg": ("regression", True, 392, 7, 104),
    "cpu": ("regression", True, 209, 8, 494),
    "servo": ("regression", False, 167, 4, 156),
    "housing": ("regression", True, 506, 13, 182),
    "heart": ("classification", True, 270, 13, 182),
    "liver": ("classification", False, 345, 6, 91),
    "pima": ("classification", True, 768, 8, 117),
    "ionosphere": ("classification", True, 351, 33, 442),
    "wpbc": ("classification", True, 194, 34, 455),
    "sonar": ("classification", False, 208, 60, 793),
}


def rls2_benchmark_data(name, *, download=False, erp=True, standin_size=True):
    r"""Inputs and outputs of one UCI set of Table 2 of [1]_, encoded as the paper did.

    Categorical inputs become indicators, rows with missing values are dropped, inputs are
    z-scored over all examples where Table 2 says "standardised" (Sec. 5.2 of [1]_); classification
    labels are mapped to :math:`\pm1`. Servo and Wpbc have no offline copy: with
    ``download=False`` (or without network) their documented stand-ins are returned
    (sklearn's ``load_diabetes`` for Servo, Wisconsin diagnostic ``wdbc`` for Wpbc), flagged by
    ``stand_in``.

    Parameters
    ----------
    name : str
        Data set of Table 2: "autompg", "cpu", "servo", "housing", "heart", "liver", "pima",
        "ionosphere", "wpbc" or "sonar".
    download : bool, default=False
        Allow :func:`mklcore.datasets.fetch_servo` / ``fetch_wpbc`` to download the UCI file
        (else only their cache is used).
    erp : bool, default=True
        Cpu only: keep ERP, the published performance estimate, as an input (what the
        paper's kernel count :math:`m = 494 = 13(37+1)` of Table 2 implies). False drops it
        (N = 36).
    standin_size : bool, default=True
        Subsample a stand-in (seeded, stratified for wdbc) to the number of examples of the
        set it replaces (167 for Servo, 194 for Wpbc), so that costs and split sizes match.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (n, N) float inputs, ``target`` (n,) outputs (:math:`\pm1` for
        classification), ``task``, ``standardised``, ``n_kernels`` (:math:`13(N+1)`),
        ``paper`` (Table 2's row: examples, features, kernels), ``stand_in`` (None or a
        description) and ``note``.

    References
    ----------
    .. [1] F. Dinuzzo. Kernel machines with two layers and multiple kernel learning.
       arXiv:1001.2709, 2010.
    """
    from sklearn.utils import Bunch

    from .. import datasets as ds

    if name not in TABLE2:
        raise ValueError(f"Unknown data set {name!r}; Table 2 has {', '.join(TABLE2)}.")
    task, standardised, n_paper, N_paper, m_paper = TABLE2[name]
    stand_in, note = None, ""
    if name == "autompg":
        X, y = ds.load_auto_mpg(return_X_y=True)
        note = "car name dropped, origin numeric"
    elif name == "cpu":
        b = ds.load_cpu()
        vendors = np.unique(b.vendor)
        onehot = (b.vendor[:, None] == vendors[None, :]).astype(float)
        parts = [onehot, b.data] + ([b.estperf[:, None]] if erp else [])
        X, y = np.column_stack(parts), b.target
        note = "vendor indicators (30) + 6 numeric"
        note += " + ERP as input" if erp else ", ERP dropped"
    elif name == "servo":
        try:
            X, y = ds.fetch_servo(download=download, return_X_y=True)
            note = "motor/screw one-hot (5 + 5) + pgain + vgain: N = 12, the paper has 11"
        except OSError:
            from sklearn.datasets import load_diabetes

            X, y = load_diabetes(return_X_y=True)
            stand_in = "sklearn load_diabetes (442 x 10): servo.data not available offline"
    elif name == "housing":
        X, y = ds.load_housing(return_X_y=True)
    elif name == "wpbc":
        try:
            b = ds.fetch_wpbc(download=download, dropna=True)
            X, y = np.column_stack([b.time, b.data]), b.target
            note = "ID dropped, time kept (outcome-related): N = 33, the paper has 34"
        except OSError:
            X, y = ds.load_wdbc(return_X_y=True)
            stand_in = "wdbc (569 x 30, diagnostic): wpbc.data not available offline"
    else:
        loader = {"heart": ds.load_heart, "liver": ds.load_bupa, "pima": ds.load_pima,
                  "ionosphere": ds.load_ionosphere, "sonar": ds.load_sonar}[name]
        X, y = loader(return_X_y=True)
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if stand_in is not None and standin_size and len(y) > n_paper:
        from sklearn.model_selection import train_test_split

        keep, _ = train_test_split(np.arange(len(y)), train_size=n_paper, random_state=0,
                                   stratify=y if task == "classification" else None)
        keep = np.sort(keep)
        X, y = X[keep], y[keep]
        stand_in += f", stratified subsample of {n_paper} rows" if task == "classification" \
            else f", random subsample of {n_paper} rows"
    if standardised:
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    if task == "classification":
        classes = np.unique(y)
        y = np.where(y == classes[-1], 1.0, -1.0)
    else:
        y = y.astype(float)
    return Bunch(data=X, target=y, task=task, standardised=standardised,
                 n_kernels=13 * (X.shape[1] + 1), paper={"examples": n_paper,
                                                         "features": N_paper,
                                                         "kernels": m_paper},
                 stand_in=stand_in, note=note, name=name)


# --------------------------------------------------------------------------------------
# Data of Experiments 1 and 2 (Sec. 5.1) and of the microarray study (Sec. 5.3)
# --------------------------------------------------------------------------------------
def binary_strings_split(seed):
    r"""The binary strings of Experiment 1 (Sec. 5.1 of [1]_), split as in the paper.

    250 strings of 100 i.i.d. Bernoulli(0.5) bits with :math:`y=x_1+x_2+x_3+\varepsilon`,
    :math:`\varepsilon\sim\mathcal N(0, 0.01^2)`; rows 1–150 train, rows 151–250 test.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        Seed of :func:`mklcore.datasets.make_binary_strings`.

    Returns
    -------
    X_train, y_train, X_test, y_test : ndarray
        Shapes (150, 100), (150,), (100, 100), (100,).
    """
    from ..datasets import make_binary_strings

    X, y = make_binary_strings(250, random_state=seed)
    return X[:150], y[:150], X[150:], y[150:]


def prostate_split():
    """The prostate data of Experiment 2 (Sec. 5.1 of [1]_) with ESL's 67/30 split.

    Inputs are standardised with all 97 rows and the :math:`n-1` standard deviation, as ESL
    does (the paper: "normalizing all the inputs to zero mean and unit standard deviation").

    Returns
    -------
    data : sklearn.utils.Bunch
        ``X_train`` (67, 8), ``y_train`` (lpsa), ``X_test`` (30, 8), ``y_test`` and
        ``features`` (the 8 input names).
    """
    from sklearn.utils import Bunch

    from ..datasets import load_prostate

    prostate = load_prostate()
    X = (prostate.data - prostate.data.mean(0)) / prostate.data.std(0, ddof=1)
    tr = prostate.train_mask
    return Bunch(X_train=X[tr], y_train=prostate.target[tr], X_test=X[~tr],
                 y_test=prostate.target[~tr], features=list(prostate.feature_names))


def standardise_rows(A):
    """Standardise each row (one patient's expression profile) to mean 0 and variance 1.

    The preprocessing of the microarray data in Sec. 5.3 of [1]_.

    Parameters
    ----------
    A : ndarray of shape (n_samples, n_genes)
        Expression matrix.

    Returns
    -------
    Z : ndarray of shape (n_samples, n_genes)
    """
    return (A - A.mean(1, keepdims=True)) / A.std(1, keepdims=True)


def microarray_data(download=False):
    """The multi-class microarray set of Sec. 5.3 of [1]_, or its stand-in.

    14 Cancers (ESL; 144/54 patients x 16063 genes) when it can be loaded, otherwise Khan
    SRBCT (63/20 x 2308, 4 classes). Each patient's profile is standardised
    (:func:`standardise_rows`).

    Parameters
    ----------
    download : bool, default=False
        Allow :func:`mklcore.datasets.fetch_14cancer` to download the files.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``name``, ``X_train``, ``X_test``, ``y_train``, ``y_test``.
    """
    from sklearn.utils import Bunch

    from ..datasets import fetch_14cancer, load_khan

    try:
        src = fetch_14cancer(download=download)
        name = "14 Cancers"
    except OSError:
        src = load_khan()
        name = "Khan SRBCT (stand-in for 14 Cancers)"
    X_tr, X_te = np.asarray(src.X_train, float), np.asarray(src.X_test, float)
    return Bunch(name=name, X_train=standardise_rows(X_tr), X_test=standardise_rows(X_te),
                 y_train=np.asarray(src.y_train), y_test=np.asarray(src.y_test))


# --------------------------------------------------------------------------------------
# Experiment 1 (Sec. 5.1, Figure 3): learning curves on the binary strings
# --------------------------------------------------------------------------------------
#: Methods of Figure 3 of [1]_, plus the weighted Lasso that linear RLS2 equals.
METHODS_EXP1 = ["ideal RLS", "ridge", "Gaussian RLS", "Lasso", "weighted Lasso (D1)",
                "linear RLS2"]


def rmse_columns(P, y):
    """Root mean squared error of every column of a prediction matrix.

    Parameters
    ----------
    P : ndarray of shape (n_samples, n_models)
        Predictions, one model per column.
    y : ndarray of shape (n_samples,)
        Targets.

    Returns
    -------
    rmse : ndarray of shape (n_models,)
    """
    return np.sqrt(np.mean((P - y[:, None]) ** 2, axis=0))


def grid_step_rise(errs):
    r"""How finely a grid resolves the minimum of a curve: one grid step, in the curve's units.

    For the errors :math:`f_k` of a curve on a grid (e.g. the test RMSE along a
    :math:`\lambda` grid, equally spaced in :math:`\log\lambda`) with its smallest value at
    :math:`k`, the larger rise :math:`\max(f_{k-1}-f_k,\ f_{k+1}-f_k)` to its grid
    neighbours (the one neighbour at an end of the grid). When the curve is convex in
    :math:`\log\lambda` its minimum between grid points is at most this far below
    :math:`f_k`, so two lower bounds closer than it are not told apart by the grid
    (used by claim C2b of Experiment 1, Sec. 5.1 of [1]_).

    Parameters
    ----------
    errs : array-like of shape (n_grid,)
        The curve on the grid, in grid order; at least 2 finite values.

    Returns
    -------
    rise : float
        >= 0.
    """
    errs = np.asarray(errs, dtype=float)
    if errs.ndim != 1 or errs.size < 2 or not np.isfinite(errs).all():
        raise ValueError(f"The 'errs' parameter must be 1-D with at least 2 finite values; got "
                         f"shape {errs.shape}.")
    k = int(np.argmin(errs))
    neighbours = errs[max(k - 1, 0):k + 2]
    return float(neighbours.max() - errs[k])


def squared_distances(A, B):
    r"""Squared Euclidean distances :math:`\|a_i-b_j\|^2`, clipped at 0.

    Parameters
    ----------
    A : ndarray of shape (n_a, n_features)
    B : ndarray of shape (n_b, n_features)

    Returns
    -------
    D : ndarray of shape (n_a, n_b)
    """
    return np.maximum((A ** 2).sum(1)[:, None] + (B ** 2).sum(1)[None, :] - 2 * A @ B.T, 0)


def kernel_ridge_lower_bound(K, K_te, y, y_te, lams):
    r"""Smallest test RMSE of kernel ridge regression (RLS) over a grid of :math:`\lambda`.

    RLS predicts :math:`f = \mathbf K_{\rm test}(\mathbf K+\lambda I)^{-1}y`; all values of
    the grid are solved at once from one eigendecomposition of :math:`\mathbf K`. This is
    the "lower bound of the learning curve" of Experiment 1 (Sec. 5.1 of [1]_).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Training Gram matrix.
    K_te : ndarray of shape (n_test, n)
        Test-by-training Gram matrix.
    y : ndarray of shape (n,)
        Training outputs.
    y_te : ndarray of shape (n_test,)
        Test outputs.
    lams : array-like of shape (n_lams,)
        Regularisation parameters.

    Returns
    -------
    rmse : float
        The smallest test RMSE over ``lams``.
    """
    lams = np.asarray(lams, dtype=float)
    w, U = np.linalg.eigh(K)
    C = U @ ((U.T @ y)[:, None] / (np.maximum(w, 0)[:, None] + lams[None, :]))
    return rmse_columns(K_te @ C, y_te).min()


def lasso_lower_bound(X, y, X_te, y_te, alphas, weights=None):
    r"""Smallest test RMSE along a Lasso path without intercept (Experiment 1).

    With ``weights`` :math:`u` the penalty is :math:`\sum_i u_i|w_i|` (weighted Lasso), solved
    as a plain Lasso on the columns :math:`x^{(i)}/u_i`; columns with :math:`u_i = 0` are
    dropped.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Training inputs.
    y : ndarray of shape (n,)
        Training outputs.
    X_te : ndarray of shape (n_test, p)
        Test inputs.
    y_te : ndarray of shape (n_test,)
        Test outputs.
    alphas : array-like
        sklearn's Lasso parameters (objective :math:`\|y-Xw\|^2/(2n)+\alpha\|w\|_1`).
    weights : ndarray of shape (p,), default=None
        Per-column penalty factors; None for the plain Lasso.

    Returns
    -------
    rmse : float
        The smallest test RMSE over ``alphas``.
    """
    from sklearn.linear_model import lasso_path

    scale = np.ones(X.shape[1]) if weights is None else weights
    keep = scale > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at the tiniest alphas
        _, coef, _ = lasso_path(X[:, keep] / scale[keep], y, alphas=alphas, tol=1e-8,
                                max_iter=100_000)
    return rmse_columns(X_te[:, keep] @ (coef / scale[keep][:, None]), y_te).min()


def plot_learning_curves(curves, methods=METHODS_EXP1):
    """Figure 3 of [1]_: learning-curve lower bounds, all sizes and zoomed on n <= 30.

    Parameters
    ----------
    curves : pandas.DataFrame
        The learning curves of the notebook (one row per training size).
    methods : list of str, default=METHODS_EXP1
        Columns to plot.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    from .plotting import method_palette

    palette = method_palette(methods)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, top in zip(axes, [150, 30]):
        part = curves[curves.n <= top]
        for m in methods:
            style = (dict(ls="--", lw=1.2) if m.startswith("weighted")
                     else dict(lw=2.4, marker=".", zorder=3) if m == "linear RLS2"
                     else dict(lw=1.6))
            ax.plot(part.n, part[m], label=m, color=palette[m], **style)
        ax.set_yscale("log")
        ax.set_xlabel("number of training examples n")
        ax.set_ylabel("lower bound of the test RMSE")
        ax.set_title("Figure 3: learning curves" + (" (zoom, n ≤ 30)" if top == 30 else ""))
    axes[0].legend(fontsize="small")
    return fig


def plot_prostate(study, path, features):
    """Figure 2 of [1]_ (CV curve) and the coefficient profiles against the df (15).

    Parameters
    ----------
    study : sklearn.utils.Bunch
        The notebook's prostate study (CV curve, the chosen lambdas and models).
    path : list of MKLResult
        A fine regularisation path of linear RLS2 on the training cases.
    features : list of str
        Input names.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    coef_path = np.stack([r.coef for r in path])
    df_path = np.array([r.df for r in path])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    ax = axes[0]
    ax.errorbar(study.cv_lams, study.cv_mean, yerr=study.cv_se, fmt="o-", ms=3, capsize=2, lw=1)
    ax.axvline(study.lam_cv, color="C3", ls="--", label=f"one-SE rule: λ = {study.lam_cv:.3g}")
    ax.axvline(study.lam_table, color="C2", ls=":", label=f"λ = {study.lam_table} (Table 1)")
    ax.axhline(study.cv_mean.min() + study.cv_se[np.argmin(study.cv_mean)], color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("λ")
    ax.set_ylabel("10-fold CV mean squared error")
    ax.set_title("Figure 2: cross-validation (prostate)")
    ax.legend(fontsize="small")
    ax = axes[1]
    for j, name in enumerate(features):
        ax.plot(df_path, coef_path[:, j], label=name)
    ax.axvline(study.res_table.df, color="C2", ls=":")
    ax.set_xlabel("degrees of freedom (15)")
    ax.set_ylabel("coefficient w (12)")
    ax.set_title("Coefficient profiles (the paper's 'Figure 3' of Sec. 5.1)")
    ax.legend(fontsize="x-small", ncol=2)
    return fig


# --------------------------------------------------------------------------------------
# Sec. 5.2 (Tables 2-4, Figures 4-8): nonlinear RLS2 on the UCI sets
# --------------------------------------------------------------------------------------
def path_lambdas(Ktr, y, s, intercept, grid):
    r"""The :math:`\lambda` grid of a path, extended up to the Lemma-5 threshold if needed.

    Above the threshold :math:`\lambda_1` the solution is the vertex :math:`e_{i^\star}` of the
    kernel with the largest alignment :math:`s_iy^\top\mathbf K_iy` (Lemma 5 of [1]_); a path
    starts there. If :math:`\lambda_1` lies above the grid's top, :math:`1.01\lambda_1` is
    appended.

    Parameters
    ----------
    Ktr : ndarray of shape (m, n, n)
        Training Gram stack.
    y : ndarray of shape (n,)
        Training outputs.
    s : ndarray of shape (m,)
        Scaling.
    intercept : float or "mean"
        Intercept rule.
    grid : ndarray
        The common grid.

    Returns
    -------
    lams : ndarray
        The grid, possibly with :math:`1.01\lambda_1` appended.
    lam1 : float
        The threshold :math:`\lambda_1`.
    """
    from ..rls2 import rls2_lambda_max

    lam1 = rls2_lambda_max(Ktr, y, scaling=s, intercept=intercept, check_input=False)
    return (grid if lam1 <= grid.max() else np.r_[grid, 1.01 * lam1]), lam1


def block(K, rows, cols):
    """The sub-stack ``K[:, rows][:, :, cols]``, C-contiguous, one kernel at a time.

    Parameters
    ----------
    K : ndarray of shape (m, n, n)
        Gram stack.
    rows : ndarray of int
        Row indices.
    cols : ndarray of int
        Column indices.

    Returns
    -------
    K_sub : ndarray of shape (m, len(rows), len(cols))
    """
    out = np.empty((K.shape[0], len(rows), len(cols)))
    for i in range(K.shape[0]):  # the column gather writes straight into the output
        K[i].take(rows, axis=0).take(cols, axis=1, out=out[i])
    return out


#: The kernel stack of the last UCI data set used in this process (see UCIPaths.stack).
_STACKS = {}


class UCIPaths:
    r"""Warm-started RLS2 paths on random splits of the UCI sets (Sec. 5.2 of [1]_).

    The basis kernels are the bank of the paper (``kernel_bank("rls2_default")``: polynomial
    degrees 1–3 and 10 Gaussian widths, on all features and on each single feature,
    :math:`m=13(N+1)`), computed once on all examples of a data set with the transductive
    trace scaling (18). Calling the object runs one split; it is the ``func`` of
    :func:`mklcore.repro.experiments.run`.

    Parameters
    ----------
    uci : dict
        Data set name -> output of :func:`rls2_benchmark_data`.
    lams : ndarray
        Common :math:`\lambda` grid of the paths.
    """

    def __init__(self, uci, lams):
        self.uci = uci
        self.lams = lams

    def stack(self, name):
        """Kernel stack on all examples of a data set and its transductive trace scaling.

        Only the last data set's stack is kept in memory, per process and keyed by the data
        (not by this object, which parallel runs send to their workers afresh with every
        cell): consecutive cells of one data set in a worker compute it once.

        Parameters
        ----------
        name : str
            Data set name.

        Returns
        -------
        K : ndarray of shape (m, n, n)
            Gram stack.
        s : ndarray of shape (m,)
            Scaling (18).
        """
        from ..kernels import kernel_bank, kernel_stack
        from ..rls2 import rls2_scaling

        X = np.ascontiguousarray(self.uci[name].data)
        key = (name, X.dtype.str, X.shape, hashlib.sha256(X.tobytes()).hexdigest())
        if key not in _STACKS:
            _STACKS.clear()
            K = kernel_stack(kernel_bank("rls2_default", n_features=X.shape[1]), X)
            _STACKS[key] = (K, rls2_scaling(K, "trace"))
        return _STACKS[key]

    def __call__(self, data, ratio, version, repeat, seed):
        r"""One random split: the warm-started path and the test performance per :math:`\lambda`.

        Regression: intercept = mean training output, RMSE; classification: :math:`b = 0`,
        accuracy of the sign.

        Parameters
        ----------
        data : str
            Data set name.
        ratio : float
            Training fraction (0.6 or 0.7).
        version : int
            Cache version (not used in the computation).
        repeat : int
            Split index (not used in the computation; the split comes from ``seed``).
        seed : int or numpy.random.SeedSequence
            Seed of the split.

        Returns
        -------
        rows : list of dict
            One per :math:`\lambda`: ``lam``, ``start`` (above the common grid), ``lam1``,
            ``perf``, ``n_selected``, ``n_iter``, ``gap``, ``success``, ``path_time``,
            ``path_iters``, ``vertex_first`` (the first solution is the max-alignment
            vertex), ``selected``.
        """
        from ..rls2 import rls2_path
        from .experiments import repeated_splits

        b = self.uci[data]
        K, s = self.stack(data)
        split = repeated_splits(b.target, n_repeats=1, test_size=round(1 - ratio, 2), seed=seed,
                                stratify=b.task == "classification")[0]
        tr, te = split["train"], split["test"]
        regression = b.task == "regression"
        intercept = "mean" if regression else 0.0
        Ktr = block(K, tr, tr)
        t0 = time.perf_counter()
        lams, lam1 = path_lambdas(Ktr, b.target[tr], s, intercept, self.lams)
        path = rls2_path(Ktr, b.target[tr], lams=lams, scaling=s, intercept=intercept,
                         check_input=False)
        seconds = time.perf_counter() - t0  # includes finding lambda_1
        a = path[0].alignment
        blocks = {}

        def test_block(i):  # test-by-training block of kernel i, extracted once per split
            if i not in blocks:
                blocks[i] = K[i].take(te, axis=0).take(tr, axis=1)
            return blocks[i]

        rows = []
        for r in path:
            sel = np.flatnonzero(r.weights)
            f = sum(r.weights[i] * s[i] * (test_block(i) @ r.dual_coef) for i in sel)
            f = f + r.intercept
            y_te = b.target[te]
            perf = (np.sqrt(np.mean((f - y_te) ** 2)) if regression
                    else np.mean(np.where(f > 0, 1.0, -1.0) == y_te))
            rows.append({"lam": r.lam, "start": r.lam > self.lams.max(), "lam1": lam1,
                         "perf": perf, "n_selected": r.n_selected, "n_iter": r.n_iter,
                         "gap": r.gap, "success": r.success, "path_time": seconds,
                         "path_iters": sum(p.n_iter for p in path),
                         "vertex_first": bool(np.argmax(path[0].weights) == np.argmax(a)
                                              and path[0].n_selected == 1),
                         "selected": sel.tolist()})
        return rows


def _panel_grid(n_panels, title):
    import matplotlib.pyplot as plt

    ncol = 5 if n_panels > 5 else n_panels
    nrow = int(np.ceil(n_panels / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 2.6 * nrow), squeeze=False)
    fig.suptitle(title)
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    return fig, axes.flat


def plot_uci_performance(summ, tables34, uci, ratios):
    """Figures 4–8 (a) of [1]_: test performance along the path, one panel per data set.

    Parameters
    ----------
    summ : pandas.DataFrame
        Mean and sd over the splits per (data, ratio, lam): ``perf``, ``perf_sd``, ``k``, ``k_sd``.
    tables34 : pandas.DataFrame
        Tables 3-4 of the notebook, indexed by (data, ratio) (``lam*``: the vertical line).
    uci : dict
        Data set name -> output of :func:`rls2_benchmark_data`.
    ratios : list of float
        Training fractions, one curve each.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    sets = list(dict.fromkeys(tables34.index.get_level_values(0)))
    fig, axes = _panel_grid(len(sets), "Figures 4–8 (a): test performance along the path "
                                       "(mean ± sd over splits)")
    for ax, name in zip(axes, sets):
        for ratio in ratios:
            g = summ[(summ.data == name) & (summ.ratio == ratio)]
            ax.plot(g.lam, g.perf, label=f"{int(ratio * 100)}/{int(100 - ratio * 100)}")
            ax.fill_between(g.lam, g.perf - g.perf_sd.fillna(0), g.perf + g.perf_sd.fillna(0),
                            alpha=0.2)
            ax.axvline(tables34.loc[(name, ratio), "lam*"], ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_title(name + (" (stand-in)" if uci[name].stand_in else ""), fontsize="small")
        ax.set_ylabel("RMSE" if uci[name].task == "regression" else "accuracy", fontsize="small")
        ax.set_xlabel("λ", fontsize="small")
    axes[0].legend(fontsize="x-small")
    return fig


def plot_uci_kernels(summ, tables34, uci, ratio):
    """Figures 4–8 (b) of [1]_: number of selected kernels along the path.

    Parameters
    ----------
    summ : pandas.DataFrame
        Mean and sd over the splits per (data, ratio, lam): ``perf``, ``perf_sd``, ``k``, ``k_sd``.
    tables34 : pandas.DataFrame
        Tables 3-4 of the notebook, indexed by (data, ratio) (``lam*``).
    uci : dict
        Data set name -> output of :func:`rls2_benchmark_data`.
    ratio : float
        Training fraction plotted.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    sets = list(dict.fromkeys(tables34.index.get_level_values(0)))
    fig, axes = _panel_grid(len(sets), "Figures 4–8 (b): selected kernels along the path "
                                       "(mean ± sd)")
    for ax, name in zip(axes, sets):
        g = summ[(summ.data == name) & (summ.ratio == ratio)]
        ax.plot(g.lam, g.k)
        ax.fill_between(g.lam, g.k - g.k_sd.fillna(0), g.k + g.k_sd.fillna(0), alpha=0.25)
        ax.axvline(tables34.loc[(name, ratio), "lam*"], ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_title(f"{name} (m = {uci[name].n_kernels})", fontsize="small")
        ax.set_xlabel("λ", fontsize="small")
        ax.set_ylabel("selected kernels", fontsize="small")
    return fig


#: The three solvers of the warm-start ablation: our certified solver, and the paper's plain
#: Algorithm 1 with the toolbox's residual stopping rule, with and without warm starts.
ABLATION_SOLVERS = [("certified, warm", {}),
                    ("toolbox rule, warm", {"accelerate": False, "residual_tol": 1e-4}),
                    ("toolbox rule, cold", {"accelerate": False, "residual_tol": 1e-4,
                                            "warm_start": False})]


def ablation(paths, name, seed, lams):
    r"""Iterations per :math:`\lambda` with and without warm starts on one 70/30 split.

    Runs the three solvers of :data:`ABLATION_SOLVERS` along the same path (started at the
    Lemma-5 threshold if it lies above ``lams``; the start point is set apart).

    Parameters
    ----------
    paths : UCIPaths
        Holds the data and the kernel stacks.
    name : str
        Data set name.
    seed : int or numpy.random.SeedSequence
        Seed of the split.
    lams : ndarray
        :math:`\lambda` grid.

    Returns
    -------
    rows : list of dict
        One per solver: ``data``, ``solver``, ``iters/lambda``, ``iters/path``, ``time/path``,
        ``max relative gap``, ``fits`` (the λ values of the common grid), ``fits converged``
        (how many met the solver's stopping rule), ``iters by lambda``.
    """
    from ..rls2 import rls2_path
    from .experiments import repeated_splits

    b = paths.uci[name]
    K, s = paths.stack(name)
    split = repeated_splits(b.target, n_repeats=1, test_size=0.3, seed=seed,
                            stratify=b.task == "classification")[0]
    Ktr = block(K, split["train"], split["train"])
    intercept = "mean" if b.task == "regression" else 0.0
    lams_path, _ = path_lambdas(Ktr, b.target[split["train"]], s, intercept, lams)
    out = []
    for label, kw in ABLATION_SOLVERS:
        t0 = time.perf_counter()
        path = rls2_path(Ktr, b.target[split["train"]], lams=lams_path, scaling=s,
                         intercept=intercept, check_input=False, **kw)
        path = path[len(path) - lams.size:]  # the common grid (start point set apart)
        out.append({"data": name, "solver": label,
                    "iters/lambda": np.mean([r.n_iter for r in path]),
                    "iters/path": sum(r.n_iter for r in path),
                    "time/path": time.perf_counter() - t0,
                    "max relative gap": max(r.gap for r in path),
                    "fits": len(path), "fits converged": sum(r.success for r in path),
                    "iters by lambda": [r.n_iter for r in path]})
    return out


class Ablation:
    r"""The warm-start ablation of one data set as a cell of :func:`mklcore.repro.experiments.run`.

    ``run(Ablation(paths, lams), [{"data": name} ...], seed=seed)`` gives the rows of
    :func:`ablation` for every data set (the same split seed ``spawn_seeds(seed, 1)[0]``),
    computed in parallel and cached.

    Parameters
    ----------
    paths : UCIPaths
        Holds the data and the kernel stacks.
    lams : ndarray
        :math:`\lambda` grid.
    """

    def __init__(self, paths, lams):
        self.paths = paths
        self.lams = lams

    def __call__(self, data, version, repeat, seed):
        """Rows of :func:`ablation` for data set ``data`` (without the ``data`` key).

        Parameters
        ----------
        data : str
            Data set name.
        version : int
            Cache version (not used in the computation).
        repeat : int
            Repeat index (not used; the split comes from ``seed``).
        seed : int or numpy.random.SeedSequence
            Seed of the split.

        Returns
        -------
        rows : list of dict
            One per solver, the keys of :func:`ablation` but ``data``.
        """
        rows = ablation(self.paths, data, seed, self.lams)
        return [{k: v for k, v in row.items() if k != "data"} for row in rows]


def plot_iterations(abl, lams):
    """Figures 4–8 (c) of [1]_: iterations per lambda, mean over the data sets, per solver.

    Parameters
    ----------
    abl : pandas.DataFrame
        Rows of :func:`ablation`.
    lams : ndarray
        The common grid.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    for (label, _), style in zip(ABLATION_SOLVERS, ["-", "--", ":"]):
        its = np.mean([r for r in abl[abl.solver == label]["iters by lambda"]], axis=0)
        ax.plot(np.sort(lams)[::-1], its, style, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("λ (the path runs from right to left)")
    ax.set_ylabel("iterations (mean over data sets)")
    ax.set_title("Figures 4–8 (c): iterations per λ")
    ax.legend(fontsize="small")
    return fig


# --------------------------------------------------------------------------------------
# Sec. 5.3 (Table 5, Figure 9): one-vs-all linear RLS2 on a microarray set
# --------------------------------------------------------------------------------------
def ova_path(X, targets, scalings, rows, lams):
    r"""One warm-started linear RLS2 path per class (one-vs-all, :math:`b = 0`).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Inputs.
    targets : list of ndarray
        :math:`\pm1` targets, one per class.
    scalings : list of ndarray
        Scaling of each binary problem (Fisher rule (17) of [1]_).
    rows : ndarray of int
        Training rows.
    lams : ndarray
        :math:`\lambda` grid.

    Returns
    -------
    W : ndarray of shape (n_lams, n_classes, p)
        Coefficients (12) by decreasing :math:`\lambda`.
    paths : list of list of MKLResult
        The paths.
    """
    from ..rls2 import rls2_linear_path

    paths = [rls2_linear_path(X[rows], t[rows], lams=lams, scaling=s)
             for t, s in zip(targets, scalings)]
    return np.stack([[r.coef for r in p] for p in paths], axis=1), paths


def ova_predict(W, X, classes):
    """One-vs-all prediction, the class with the largest output, for every lambda.

    Parameters
    ----------
    W : ndarray of shape (n_lams, n_classes, p)
        Output of :func:`ova_path`.
    X : ndarray of shape (n, p)
        Inputs.
    classes : ndarray of shape (n_classes,)
        Class labels.

    Returns
    -------
    y_pred : ndarray of shape (n_lams, n)
    """
    return classes[np.argmax(np.einsum("lkg,ng->lnk", W, X), axis=2)]


def cv_choice(make, grid, X, y, folds):
    """The parameter with the best mean CV accuracy (ties: the first, i.e. the simplest).

    Parameters
    ----------
    make : callable
        ``make(p)`` returns an unfitted classifier.
    grid : list
        Parameter values.
    X : ndarray of shape (n, p)
        Training inputs.
    y : ndarray of shape (n,)
        Training labels.
    folds : list of dict
        ``{"train": idx, "test": idx}`` folds.

    Returns
    -------
    best : object
        The chosen element of ``grid``.
    """
    scores = [np.mean([(make(p).fit(X[f["train"]], y[f["train"]]).predict(X[f["test"]])
                        == y[f["test"]]).mean() for f in folds]) for p in grid]
    return grid[int(np.argmax(scores))]


class OVALasso:
    r"""One-vs-all Lasso regression on :math:`\pm1` targets; prediction by the largest output.

    The "Lasso regression (OVA)" baseline of Table 5 of [1]_.

    Parameters
    ----------
    alpha : float
        sklearn's Lasso parameter.
    """

    def __init__(self, alpha):
        self.alpha = alpha

    def fit(self, X, y):
        """Fit one Lasso per class.

        Parameters
        ----------
        X : ndarray of shape (n, p)
            Inputs.
        y : ndarray of shape (n,)
            Class labels.

        Returns
        -------
        self : OVALasso
        """
        from sklearn.linear_model import Lasso

        self.classes_ = np.unique(y)
        self.models_ = [Lasso(alpha=self.alpha, max_iter=20_000).fit(X, np.where(y == k, 1.0, -1.0))
                        for k in self.classes_]
        return self

    def predict(self, X):
        """Class with the largest Lasso output.

        Parameters
        ----------
        X : ndarray of shape (n, p)
            Inputs.

        Returns
        -------
        y_pred : ndarray of shape (n,)
        """
        return self.classes_[np.argmax(np.column_stack([m.predict(X) for m in self.models_]), 1)]


def plot_microarray(micro, name, n_folds, n_test):
    """Figure 9 of [1]_: training, CV and test accuracy of one-vs-all linear RLS2 against lambda.

    Parameters
    ----------
    micro : sklearn.utils.Bunch
        The notebook's one-vs-all RLS2 run (``lam_desc``, ``train_acc``, ``cv_mean``,
        ``cv_se``, ``test_err``, ``pick``).
    name : str
        Data set name (title).
    n_folds : int
        Number of CV folds (legend).
    n_test : int
        Number of test patients.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    lam_desc = micro.lam_desc
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(lam_desc, micro.train_acc, label="training accuracy")
    ax.errorbar(lam_desc, micro.cv_mean, yerr=micro.cv_se, fmt="o-", ms=3, capsize=2, lw=1,
                label=f"{n_folds}-fold CV accuracy ± SE")
    ax.plot(lam_desc, 1 - micro.test_err / n_test, label="test accuracy")
    ax.axvline(lam_desc[micro.pick], color="grey", ls=":", label="chosen λ")
    ax.set_xscale("log")
    ax.set_xlabel("λ")
    ax.set_ylabel("accuracy")
    ax.set_title(f"Figure 9: one-vs-all linear RLS2 on {name}")
    ax.legend(fontsize="small")
    return fig
