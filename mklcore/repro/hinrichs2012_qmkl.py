r"""Data, kernels, Q matrices and plots of ``notebooks/hinrichs2012_qmkl.ipynb`` (Hinrichs et al., 2012).

C. Hinrichs, V. Singh, J. Peng, S. C. Johnson. Q-MKL: Matrix-induced Regularization in
Multi-Kernel Learning with Applications to Neuroimaging. NIPS 25, 2012 ([1]_ below).

The notebook shows the experiment itself: the protocol of each table and figure (the
realisations, the folds, the choice of C and mu, the fits, the scores), the paper's numbers,
the claims and what differs from the paper. This module holds what a reader of the notebook
need not see, and what the tests of :mod:`mklcore.qmkl` reuse:

* data: :func:`mfeat_data` (UCI Multiple Features, six views: the stand-in for ADNI's image
  sets), :func:`pixel_data` (8x8 digits 3 vs 8: the stand-in for the VBM maps of Sec. 5.1),
  :func:`uci_data` (the supplement's UCI comparison), :func:`tiny_problem` (a 30-point
  Q-MKL problem for the check of Algorithm 1);
* kernels and Q: :func:`multiview_kernels` (the Sec. 5 recipe: t-statistic feature stages x
  linear / quadratic / Gaussian kernels per modality), :func:`correlation_laplacian`,
  :func:`regulariser` (the Q of each Q-MKL row of Table 1);
* measures: :func:`dirichlet_ratio`, :func:`isolated_pockets` (roughness of a weight map,
  Fig. 1), :func:`theorem2_proxy`, :func:`ones_eigen_residual` and
  :func:`theorem2_equality_text` (Theorem 2);
* plots: :func:`plot_algorithm1`, :func:`plot_table1`, :func:`plot_figure2`,
  :func:`plot_view_weights`, :func:`plot_weight_maps`.

References
----------
.. [1] C. Hinrichs, V. Singh, J. Peng, S. C. Johnson. Q-MKL: Matrix-induced Regularization in
   Multi-Kernel Learning with Applications to Neuroimaging. NIPS 25, 2012.
"""

import functools

import numpy as np

from ..datasets import load_dataset, load_digits, load_mfeat
from ..qmkl import block_diagonal_q, check_q, graph_laplacian, grid_laplacian, q_from_correlation
from .plotting import method_palette

__all__ = [
    "PAPER_ID", "DENSE_ALTERNATIVE", "TABLE1_PALETTE", "mfeat_data", "pixel_data", "uci_data",
    "tiny_problem", "multiview_kernels", "correlation_laplacian", "regulariser",
    "dirichlet_ratio", "isolated_pockets", "theorem2_proxy", "ROUNDOFF_TOL",
    "ones_eigen_residual", "theorem2_equality_text", "plot_algorithm1", "plot_table1",
    "view_bounds", "plot_figure2", "plot_view_weights", "plot_weight_maps",
]

PAPER_ID = "hinrichs2012_qmkl"

#: the literal reading of Sec. 5 of [1]_ ("the Laplacian of covariance ... plus a
#: block-diagonal"): Q = L + B with the unnormalised Laplacian of the dense |Corr| graph,
#: reported beside the reproduction's normalised Laplacian
DENSE_ALTERNATIVE = "Lap(Cov)+B dense"
#: one colour per row of Table 1 (the lp family warm, the Q-MKL variants cool)
TABLE1_PALETTE = {"l1": "#de8f05", "l1.5": "#d55e00", "l2": "#ca9161", "Cov": "#0173b2",
                  "Lap(Cov)": "#56b4e9", "Lap(Cov)+B": "#029e73", "B": "#cc78bc",
                  DENSE_ALTERNATIVE: "#949494"}
#: the Q-MKL rows of Table 1 that :func:`regulariser` builds
Q_ROWS = ("Cov", "Lap(Cov)", "Lap(Cov)+B", "B", DENSE_ALTERNATIVE)


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def mfeat_data():
    """UCI Multiple Features: the multi-view stand-in for ADNI's image sets (Sec. 5.2 of [1]_).

    Returns
    -------
    digit : ndarray of shape (2000,)
        Digit 0-9 of each sample.
    views : dict of {str: ndarray of shape (2000, d_v)}
        The six views ``fou, fac, kar, pix, zer, mor``.
    """
    mfeat = load_mfeat()
    return mfeat.target, mfeat.views


@functools.lru_cache(maxsize=None)
def pixel_data():
    """8x8 digits 3 vs 8: the pixel-grid stand-in for the VBM maps of Sec. 5.1 of [1]_.

    Returns
    -------
    X : ndarray of shape (n, 64)
        Pixels scaled to [0, 1], row-major.
    y : ndarray of shape (n,)
        +1 for digit 3, -1 for digit 8.
    """
    digits = load_digits()
    keep38 = np.flatnonzero((digits.target == 3) | (digits.target == 8))
    X = digits.data[keep38] / 16.0
    y = np.where(digits.target[keep38] == 3, 1.0, -1.0)  # positive class: digit 3
    return X, y


@functools.lru_cache(maxsize=None)
def uci_data(name):
    """A UCI data set with labels in {-1, +1} (the supplement's comparison of [1]_).

    Parameters
    ----------
    name : str
        Name for :func:`mklcore.datasets.load_dataset`, e.g. ``"heart"``.

    Returns
    -------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        +1 for the second of the sorted labels, -1 otherwise.
    """
    data = load_dataset(name)
    labels = np.unique(data.target)
    return (np.asarray(data.data, dtype=float), np.where(data.target == labels[1], 1.0, -1.0))


def _gauss(Z, s):
    return np.exp(-((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1) / (2 * s * s))


def tiny_problem(seed=0):
    r"""A tiny Q-MKL problem with a known optimum: 30 points, 5 kernels, :math:`Q=L+I`.

    4-D Gaussian inputs with a nonlinear label rule; a linear, a quadratic and three
    Gaussian kernels (on feature subsets), each scaled to trace 30; :math:`Q` the graph
    Laplacian of :math:`|\mathrm{Corr}|` of random data plus :math:`I`, trace 5.

    Parameters
    ----------
    seed : int, default=0
        Seed of the data and of Q.

    Returns
    -------
    K : ndarray of shape (5, 30, 30)
    y : ndarray of shape (30,)
    Q : ndarray of shape (5, 5)
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 + 0.3 * rng.normal(size=30) > 0, 1.0, -1.0)
    K = np.stack([k * 30 / np.trace(k) for k in (
        X @ X.T, (1 + X @ X.T) ** 2, _gauss(X[:, :2], 1.0), _gauss(X[:, 2:], 1.0),
        _gauss(X, 2.0))])
    Q = graph_laplacian(np.abs(np.corrcoef(rng.normal(size=(10, 5)).T)))
    return K, y, Q


# ---------------------------------------------------------------------------
# kernels and Q
# ---------------------------------------------------------------------------


def _welch_t(X, y):
    """|Welch t-statistic| of each column of X between the classes y > 0 and y <= 0."""
    pos, neg = X[y > 0], X[y <= 0]
    var = pos.var(axis=0, ddof=1) / max(len(pos), 1) + neg.var(axis=0, ddof=1) / max(len(neg), 1)
    diff = np.abs(pos.mean(axis=0) - neg.mean(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(var > 0, diff / np.sqrt(np.where(var > 0, var, 1.0)), 0.0)
    return t


def multiview_kernels(views_train, y_train, views_test=None, *,
                      fractions=(0.25, 0.5, 0.75, 1.0), kinds=("linear", "quadratic", "gaussian"),
                      min_features=2):
    r"""The paper's multi-modality kernel bank (Sec. 5 of [1]_), built on the training fold.

    For ADNI, [1]_ ranks the voxels of each image set by a t-statistic inside each training
    fold, keeps the top voxels in several stages and builds a linear, a quadratic and a
    Gaussian kernel per stage (96 kernels). This builds the same bank for any set of views:
    per view, features are z-scored with the training mean and standard deviation and
    ranked by the absolute Welch t-statistic between the classes; for each fraction in
    ``fractions`` the top ``max(min_features, ceil(fraction * d))`` features
    (``d'`` of them) give the kernels

    - ``"linear"``: :math:`x^\top z/d'`;
    - ``"quadratic"``: :math:`(1+x^\top z/d')^2`;
    - ``"gaussian"``: :math:`\exp(-\|x-z\|^2/(2s^2))`, :math:`s` the median training pairwise
      distance.

    Each training kernel is scaled to mean diagonal 1 and the test kernels by the same
    factor. Kernels are ordered by view, then kind, then fraction.

    Parameters
    ----------
    views_train : dict of {str: ndarray of shape (n_train, d_v)}
        Training features of each view (modality).
    y_train : array-like of shape (n_train,)
        Labels in {-1, +1} (for the t-statistics).
    views_test : dict of {str: ndarray of shape (n_test, d_v)}, default=None
        Test features with the same keys; if given, test kernels are returned too.
    fractions : sequence of float, default=(0.25, 0.5, 0.75, 1.0)
        Fractions of each view's features kept (the paper's "stages").
    kinds : sequence of {"linear", "quadratic", "gaussian"}, default=all three
        Kernel types per stage.
    min_features : int, default=2
        Fewest features per stage.

    Returns
    -------
    K_train : ndarray of shape (n_kernels, n_train, n_train)
        Training stack.
    K_test : ndarray of shape (n_kernels, n_test, n_train) or None
        Test stack (rows: test points), ``None`` without ``views_test``.
    groups : ndarray of shape (n_kernels,)
        View name of each kernel (the groups of :func:`block_diagonal_q`).
    descriptions : list of str
        ``"<view>:<kind>:<n features>"`` for each kernel.
    """
    y_train = np.asarray(y_train, dtype=float)
    for kind in kinds:
        if kind not in ("linear", "quadratic", "gaussian"):
            raise ValueError(f"Unknown kernel kind {kind!r}; use 'linear', 'quadratic' or "
                             f"'gaussian'.")
    K_train, K_test, groups, names = [], [], [], []
    for view, Xtr in views_train.items():
        Xtr = np.asarray(Xtr, dtype=float)
        mean, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        Ztr = (Xtr - mean) / sd
        Zte = None if views_test is None else (np.asarray(views_test[view], float) - mean) / sd
        order = np.argsort(-_welch_t(Ztr, y_train), kind="stable")
        d = Ztr.shape[1]
        for kind in kinds:
            for fraction in fractions:
                k = int(min(d, max(min_features, np.ceil(fraction * d))))
                A = Ztr[:, order[:k]]
                B = None if Zte is None else Zte[:, order[:k]]
                if kind == "gaussian":
                    sq = np.sum(A ** 2, axis=1)
                    D = np.maximum(sq[:, None] + sq[None, :] - 2 * A @ A.T, 0.0)
                    off = D[np.triu_indices_from(D, k=1)]
                    s2 = float(np.median(off)) if off.size and np.median(off) > 0 else 1.0
                    Ktr = np.exp(-D / (2 * s2))  # s^2 = median squared = (median distance)^2
                    if B is not None:
                        Dte = np.maximum(np.sum(B ** 2, axis=1)[:, None] + sq[None, :]
                                         - 2 * B @ A.T, 0.0)
                        Kte = np.exp(-Dte / (2 * s2))
                else:
                    Ktr = A @ A.T / k
                    Kte = None if B is None else B @ A.T / k
                    if kind == "quadratic":
                        Ktr = (1.0 + Ktr) ** 2
                        Kte = None if Kte is None else (1.0 + Kte) ** 2
                factor = Ktr.shape[0] / np.trace(Ktr)  # mean diagonal 1
                K_train.append(0.5 * (Ktr + Ktr.T) * factor)
                if B is not None:
                    K_test.append(Kte * factor)
                groups.append(view)
                names.append(f"{view}:{kind}:{k}")
    K_test = np.stack(K_test) if views_test is not None else None
    return np.stack(K_train), K_test, np.array(groups), names


def correlation_laplacian(corr, *, normalized=True):
    r"""Graph Laplacian of the kernel affinity :math:`S=|\mathrm{Corr}|` (zero diagonal).

    Sec. 5 of [1]_ builds Q from "the Laplacian of covariance between single-kernel
    :math:`\alpha` parameters" without saying which Laplacian. The literal, unnormalised
    one, :math:`L=D-S` with :math:`D=\mathrm{diag}(S\mathbf 1)`, has a diagonal of the
    degrees; on a dense :math:`|\mathrm{Corr}|` graph the degrees are large and nearly
    equal, so :math:`L+B` is dominated by a multiple of :math:`I` and Q-MKL behaves like
    l2-MKL. The normalised Laplacian (our choice for the reproduction)

    .. math:: L_{\mathrm{sym}}=I-D^{-1/2}SD^{-1/2}

    has unit diagonal and eigenvalues in :math:`[0, 2]`, so the block term :math:`B` keeps
    its weight. A kernel with zero degree gets the row of the identity.

    Parameters
    ----------
    corr : array-like of shape (M, M)
        Correlation of the kernels (e.g. ``alpha_correlation``).
    normalized : bool, default=True
        ``True``: :math:`L_{\mathrm{sym}}`; ``False``: the unnormalised :math:`D-S`.

    Returns
    -------
    L : ndarray of shape (M, M)
        Symmetric positive semidefinite.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.repro.hinrichs2012_qmkl import correlation_laplacian
    >>> corr = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> np.round(correlation_laplacian(corr), 6).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    >>> correlation_laplacian(corr, normalized=False).tolist()
    [[0.5, -0.5], [-0.5, 0.5]]
    """
    S = np.abs(np.asarray(corr, dtype=float))
    S = 0.5 * (S + S.T)
    np.fill_diagonal(S, 0.0)
    if not normalized:
        return graph_laplacian(S, add_identity=False, normalize_trace=False)
    degree = S.sum(axis=1)
    inv_sqrt = np.where(degree > 0, 1.0 / np.sqrt(np.where(degree > 0, degree, 1.0)), 0.0)
    return np.eye(len(S)) - inv_sqrt[:, None] * S * inv_sqrt[None, :]


def regulariser(method, corr, groups):
    r"""The Q of one Q-MKL row of Table 1 of [1]_, scaled to trace M.

    With :math:`L` the normalised Laplacian of :math:`|\mathrm{Corr}|`
    (:func:`correlation_laplacian`, our choice) and :math:`B` the block-of-ones matrix of
    the groups:

    Parameters
    ----------
    method : {"Cov", "Lap(Cov)", "Lap(Cov)+B", "B", "Lap(Cov)+B dense"}
        ``"Cov"``: :math:`\mathrm{Corr}+10^{-3}I`; ``"Lap(Cov)"``: :math:`L+I`;
        ``"Lap(Cov)+B"``: :math:`L+B+10^{-3}I`; ``"B"``: :math:`B`;
        ``"Lap(Cov)+B dense"`` (:data:`DENSE_ALTERNATIVE`): :math:`D-S+B+10^{-3}I` with the
        unnormalised Laplacian (``q_from_correlation(kind="lap+block")``).
    corr : ndarray of shape (M, M)
        Correlation of the single-kernel SVM dual vectors (``alpha_correlation``).
    groups : ndarray of shape (M,)
        Group (view) of each kernel.

    Returns
    -------
    Q : ndarray of shape (M, M)
    """
    if method == "Cov":
        return q_from_correlation(corr, kind="cov")
    if method == DENSE_ALTERNATIVE:
        return q_from_correlation(corr, kind="lap+block", groups=groups)
    if method == "B":
        return block_diagonal_q(groups, add_identity=False)
    M = len(groups)
    if method == "Lap(Cov)":
        Q = correlation_laplacian(corr) + np.eye(M)
    elif method == "Lap(Cov)+B":
        Q = (correlation_laplacian(corr) + block_diagonal_q(groups, add_identity=False,
                                                            normalize_trace=False)
             + 1e-3 * np.eye(M))
    else:
        raise ValueError(f"Unknown Q-MKL row {method!r}; use one of {Q_ROWS}.")
    return Q * (M / np.trace(Q))


# ---------------------------------------------------------------------------
# roughness of weight maps (Fig. 1), Theorem 2
# ---------------------------------------------------------------------------


def dirichlet_ratio(w, L):
    r"""Roughness of a weight map, :math:`E(w)=w^\top Lw/w^\top w` (Fig. 1, Sec. 5.1 of [1]_).

    With :math:`L` a grid Laplacian (``grid_laplacian(h, w, add_identity=False)``) this is
    the mean squared difference between neighbouring weights per unit weight energy: small
    for smooth maps (Fig. 1 of [1]_).

    Parameters
    ----------
    w : array-like of shape (d,)
        Weight vector (e.g. ``QSVMClassifier.coef_``).
    L : array-like or sparse matrix of shape (d, d)
        Graph Laplacian.

    Returns
    -------
    ratio : float
        ``nan`` for ``w = 0``.
    """
    w = np.asarray(w, dtype=float)
    energy = float(w @ w)
    return float(w @ (L @ w)) / energy if energy > 0 else float("nan")


def isolated_pockets(w, shape, *, rtol=1e-8):
    """Number of isolated "pockets" in a 2-D weight map (Fig. 1 and Sec. 5.1 of [1]_).

    A pocket is a pixel with a non-zero weight whose sign is opposite to that of every one of
    its non-zero 8-neighbours (it needs at least one). Weights below ``rtol * max|w|`` count
    as zero (e.g. the constant border pixels of the digits, where the SVM weight is 0).

    Parameters
    ----------
    w : array-like of shape (h * w,)
        Weights in row-major pixel order.
    shape : tuple of int
        ``(h, w)``.
    rtol : float, default=1e-8
        Relative threshold below which a weight is zero.

    Returns
    -------
    n_pockets : int

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.repro.hinrichs2012_qmkl import isolated_pockets
    >>> isolated_pockets(np.array([1, 1, 1, 1, -1, 1, 1, 1, 1.0]), (3, 3))
    1
    """
    h, wd = shape
    W = np.asarray(w, dtype=float).reshape(h, wd)
    top = float(np.max(np.abs(W))) if W.size else 0.0
    sign = np.where(np.abs(W) > rtol * top, np.sign(W), 0.0)
    padded = np.pad(sign, 1)
    count = 0
    for i in range(h):
        for j in range(wd):
            if sign[i, j] == 0:
                continue
            around = padded[i:i + 3, j:j + 3].ravel()
            around = np.delete(around, 4)
            around = around[around != 0]
            if around.size and np.all(around == -sign[i, j]):
                count += 1
    return count


def theorem2_proxy(Q):
    r"""Theorem-2 proxy :math:`\mathbf 1^\top Q^{-1}\mathbf 1/M` of [1]_ (l2-MKL gives 1).

    With unit-trace kernels, the Rademacher bound of Theorem 2 scales with
    :math:`\sqrt{\mathbf 1^\top Q^{-1}\mathbf 1}`; values below 1 mean a smaller bound than
    l2-MKL's. It is exactly 1 for :math:`Q=I+L` with a graph Laplacian :math:`L`: since
    :math:`L\mathbf 1=0`, :math:`\mathbf 1` is an eigenvector of :math:`Q` with eigenvalue 1, so
    Theorem 2's strict inequality fails there.

    Parameters
    ----------
    Q : array-like of shape (n_kernels, n_kernels)
        Symmetric positive definite.

    Returns
    -------
    value : float
    """
    Q = check_q(Q, owner="theorem2_proxy", require_pd=True)
    ones = np.ones(Q.shape[0])
    return float(ones @ np.linalg.solve(Q, ones) / Q.shape[0])


#: the round-off tolerance of :func:`theorem2_equality_text` (on ``|factor - 1|`` and on
#: ``max|Q1 - 1| / max|Q|``)
ROUNDOFF_TOL = 1e-9


def ones_eigen_residual(Q):
    r"""How far :math:`\mathbf 1` is from an eigenvector of Q with eigenvalue 1 (Theorem 2 of [1]_).

    For :math:`Q=L+I` with a graph Laplacian :math:`L` (rows summing to 0),
    :math:`L\mathbf 1=0` gives :math:`Q\mathbf 1=\mathbf 1`, hence
    :math:`Q^{-1}\mathbf 1=\mathbf 1` and :math:`\mathbf 1^\top Q^{-1}\mathbf 1/M=1` exactly:
    the equality case of :func:`theorem2_proxy`.

    Parameters
    ----------
    Q : array-like of shape (M, M)

    Returns
    -------
    residual : float
        :math:`\max_m|(Q\mathbf 1)_m-1|/\max_{mk}|Q_{mk}|`: round-off (about 1e-16) when
        :math:`\mathbf 1` is such an eigenvector.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.repro.hinrichs2012_qmkl import ones_eigen_residual
    >>> L = np.array([[1.0, -1.0], [-1.0, 1.0]])
    >>> ones_eigen_residual(L + np.eye(2))
    0.0
    """
    Q = np.asarray(Q, dtype=float)
    return float(np.max(np.abs(Q.sum(axis=1) - 1.0)) / np.max(np.abs(Q)))


def theorem2_equality_text(name, factor, residual, *, tol=ROUNDOFF_TOL):
    r"""The report's sentence on Theorem 2 of [1]_ at one Q, decided by the measured numbers.

    Parameters
    ----------
    name : str
        The Q, as named in the report.
    factor : float
        Its measured :math:`\mathbf 1^\top Q^{-1}\mathbf 1/M` (:func:`theorem2_proxy`).
    residual : float
        Its :func:`ones_eigen_residual`.
    tol : float, default=ROUNDOFF_TOL
        Round-off tolerance on both numbers.

    Returns
    -------
    text : str
        The equality case explained (1 is an eigenvector with eigenvalue 1 and the factor is 1
        up to round-off), or what the numbers show instead.
    """
    dev = abs(factor - 1.0)
    numbers = (f"measured factor 1'Q^-1 1 / M = {factor:.12f} (|factor - 1| = {dev:.1e}), "
               f"max|Q1 - 1| / max|Q| = {residual:.1e}")
    if residual <= tol and dev <= tol:
        # round-off digits vary across machines: the sentence prints the bound, not them
        return (f"{name} is L + I with L a graph Laplacian: L1 = 0, so Q1 = 1, i.e. 1 is an "
                f"eigenvector of Q with eigenvalue 1, Q^-1 1 = 1 and 1'Q^-1 1 / M = 1 exactly; "
                f"measured factor {factor:.12f}, with |factor - 1| and max|Q1 - 1| / max|Q| "
                f"both <= {tol:g} (round-off). The bound's factor therefore equals "
                f"l2-MKL's value although Q != I and the eigenvalues of Q^-1 lie in (0, 1]: an "
                f"exact counterexample to the strict inequality of Theorem 2, not a numerical "
                f"accident (Theorem 2 also assumes positive semidefinite virtual kernels; with "
                f"unit-trace kernels those orthogonal to 1 have trace 0, so at such a Q this "
                f"holds only when they vanish, e.g. for equal base kernels, while the factor "
                f"depends on Q alone). The proof's step that the sum of psi_i (1'v_i)^2 is maximal only "
                f"for Q^-1 = I misses the equality case: the sum is M whenever 1 lies in the "
                f"eigenspace of Q^-1 with eigenvalue 1, which adding I to a Laplacian (the "
                f"paper's recipe for the eigenvalue hypothesis) always gives.")
    if residual <= tol:
        return (f"For {name}, 1 is an eigenvector of Q with eigenvalue 1 up to round-off, so "
                f"the factor should be 1, yet the {numbers}: the solve lost more than round-off "
                f"(ill-conditioned Q), and the equality case is not confirmed numerically.")
    if dev <= tol:
        return (f"For {name}, the factor is 1 up to round-off although 1 is not an eigenvector "
                f"of Q with eigenvalue 1 ({numbers}): the equality has another cause than L1 = "
                f"0.")
    return (f"For {name}, 1 is not an eigenvector of Q with eigenvalue 1 and the factor is not "
            f"1 ({numbers}): the equality case of Theorem 2 does not occur.")


# ---------------------------------------------------------------------------
# plots
# ---------------------------------------------------------------------------


def plot_algorithm1(result, optimum):
    """Objective and relative duality gap of Algorithm 1 per iteration.

    Parameters
    ----------
    result : MKLResult
        A ``qmkl_solve`` result (its ``history``).
    optimum : float
        Reference optimum, drawn as a dashed line.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    J = result.history["objective"]
    colour = method_palette(["qmkl"])["qmkl"]
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.2))
    it = np.arange(1, len(J) + 1)
    ax[0].plot(it, J, marker="o", color=colour)
    ax[0].axhline(optimum, color="#3d3d3d", ls="--", label="cvxpy optimum")
    ax[0].set(xlabel="iteration t", ylabel=r"$J(\beta^{(t)})$", title="Algorithm 1: objective")
    ax[0].legend()
    ax[1].semilogy(it, np.maximum(result.history["gap"], 1e-16), marker="o", color=colour)
    ax[1].set(xlabel="iteration t", ylabel="relative duality gap", title="Algorithm 1: gap")
    return fig


def plot_table1(t1, paper):
    """Bar chart of the Table 1 stand-in beside the paper's ADNI values.

    Parameters
    ----------
    t1 : pandas.DataFrame
        Indexed by method; ``<metric>_mean`` and ``<metric>_se`` for each metric of ``paper``
        (the notebook's Table 1 means).
    paper : pandas.DataFrame
        The paper's Table 1: indexed by method, one column per metric (methods missing
        from it get no hatched bar).

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    methods = list(t1.index)
    paper = paper.reindex(methods)
    fig, axes = plt.subplots(1, len(paper.columns), figsize=(11, 3.4), sharey=False)
    for ax, metric in zip(axes, paper.columns):
        x = np.arange(len(methods))
        ax.bar(x - 0.2, t1[f"{metric}_mean"], 0.4, yerr=t1[f"{metric}_se"].fillna(0),
               color=[TABLE1_PALETTE[m] for m in methods], label="ours (mfeat 0-4 vs 5-9)")
        ax.bar(x + 0.2, paper[metric], 0.4, color="none", edgecolor="#3d3d3d", hatch="//",
               label="paper (ADNI)")
        ax.set_xticks(x, methods, rotation=45, ha="right")
        ax.set_ylim(0.6, 1.0)
        ax.set_title(metric)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, bbox_to_anchor=(0.5, -0.1))
    fig.suptitle("Table 1 stand-in: mean over folds (± s.e.); hatched: paper's ADNI values")
    return fig


def _views_axes(ax, bounds, view_names, ticks):
    ax.grid(False)
    for b in bounds[1:-1]:
        ax.axhline(b - 0.5, color="white", lw=0.8)
        ax.axvline(b - 0.5, color="white", lw=0.8)
    ax.set_xticks(ticks, view_names)
    ax.set_yticks(ticks, view_names)


def view_bounds(groups, view_names):
    """First kernel of each view, then the number of kernels (the view boundaries of a plot).

    Parameters
    ----------
    groups : ndarray of shape (M,)
        View of each kernel (kernels of one view are contiguous).
    view_names : list of str
        The views, in kernel order.

    Returns
    -------
    bounds : list of int
    """
    return [int(np.flatnonzero(groups == v)[0]) for v in view_names] + [len(groups)]


def plot_figure2(Q, corr, L, beta, groups, view_names):
    r"""Figure 2 analogue: Q, Corr, the smallest Laplacian eigenvectors and :math:`\beta\beta^\top`.

    Parameters
    ----------
    Q, corr, L : ndarray of shape (M, M)
        The regulariser, the correlation of the single-kernel SVM duals and its Laplacian.
    beta : ndarray of shape (M,)
        Kernel weights (e.g. the mean of the ``Lap(Cov)+B`` weights over folds).
    groups : ndarray of shape (M,)
        View of each kernel.
    view_names : list of str
        The views, in kernel order.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    bounds = view_bounds(groups, view_names)
    eigval, eigvec = np.linalg.eigh(L)
    fig, axes = plt.subplots(2, 2, figsize=(10, 9))
    ticks = [(a + b) / 2 for a, b in zip(bounds[:-1], bounds[1:])]
    lim = np.abs(Q - np.diag(np.diag(Q))).max()  # the diagonal (degrees) saturates
    im = axes[0, 0].imshow(Q, cmap="RdBu_r", vmin=-lim, vmax=lim)
    _views_axes(axes[0, 0], bounds, view_names, ticks)
    axes[0, 0].set_title(r"$Q=\mathrm{Lap}(|\mathrm{Corr}_\alpha|)+B$ "
                         f"(trace {len(Q)}; diagonal clipped)")
    fig.colorbar(im, ax=axes[0, 0], shrink=0.8)
    im = axes[0, 1].imshow(corr, cmap="RdBu_r", vmin=-1, vmax=1)
    _views_axes(axes[0, 1], bounds, view_names, ticks)
    axes[0, 1].set_title(r"$\mathrm{Corr}_\alpha$ of the single-kernel SVM duals")
    fig.colorbar(im, ax=axes[0, 1], shrink=0.8)
    for k in range(1, 4):
        axes[1, 0].plot(eigvec[:, k], marker=".", lw=1, label=f"eigenvector {k + 1} "
                        f"($\\lambda$={eigval[k]:.2f})")
    for b in bounds[1:-1]:
        axes[1, 0].axvline(b - 0.5, color="#949494", lw=0.8)
    axes[1, 0].set_xticks(ticks, view_names)
    axes[1, 0].set_title("smallest non-trivial eigenvectors of L")
    axes[1, 0].legend(fontsize=8)
    im = axes[1, 1].imshow(np.outer(beta, beta), cmap="viridis")
    _views_axes(axes[1, 1], bounds, view_names, ticks)
    axes[1, 1].set_title(r"$\beta\beta^\top$, Q-MKL Lap(Cov)+B (mean over folds)")
    fig.colorbar(im, ax=axes[1, 1], shrink=0.8)
    return fig


def plot_view_weights(beta_mean, groups, view_names, methods=("l1", "l2", "Lap(Cov)+B")):
    r"""Normalised kernel weights :math:`\beta_m/\sum\beta` per view, side by side per method.

    Parameters
    ----------
    beta_mean : dict of {str: ndarray of shape (M,)}
        Mean weights over folds per method.
    groups : ndarray of shape (M,)
        View of each kernel.
    view_names : list of str
        The views, in kernel order.
    methods : sequence of str, default=("l1", "l2", "Lap(Cov)+B")
        Methods to draw (three bars per kernel).

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    bounds = view_bounds(groups, view_names)
    M = bounds[-1]
    ticks = [(a + b) / 2 for a, b in zip(bounds[:-1], bounds[1:])]
    fig, ax = plt.subplots(figsize=(11, 3.2))
    width = 0.27
    for k, m in enumerate(methods):
        b = beta_mean[m] / beta_mean[m].sum()
        ax.bar(np.arange(M) + (k - 1) * width, b, width, color=TABLE1_PALETTE[m], label=m)
    for b in bounds[1:-1]:
        ax.axvline(b - 0.5, color="#949494", lw=0.8)
    ax.set_xticks(ticks, view_names)
    ax.set_ylabel(r"$\beta_m / \sum\beta$ (mean over folds)")
    ax.set_title("Kernel weights per view: l1 (sparse), l2 (diffuse), Q-MKL")
    ax.legend()
    return fig


def plot_weight_maps(X, y, maps):
    """Figure 1 analogue: weight maps of the SVM and Q-SVM on 8x8 digits 3 vs 8.

    The first panel is the difference of the class means, then one panel per model with its
    roughness (:func:`dirichlet_ratio` with the 8-neighbour grid Laplacian and
    :func:`isolated_pockets`).

    Parameters
    ----------
    X : ndarray of shape (n, 64)
        Pixels of the training samples.
    y : ndarray of shape (n,)
        Labels, +1 for digit 3.
    maps : dict of {str: (str, ndarray of shape (64,))}
        Per model, a panel title (e.g. its mu and C) and its weight vector.

    Returns
    -------
    fig : matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    L_grid = grid_laplacian(8, 8, mu=1.0, add_identity=False)
    fig, axes = plt.subplots(1, len(maps) + 1, figsize=(12, 3.2))
    mean_diff = X[y > 0].mean(0) - X[y < 0].mean(0)
    lim = np.abs(mean_diff).max()
    axes[0].imshow(mean_diff.reshape(8, 8), cmap="RdBu_r", vmin=-lim, vmax=lim)
    axes[0].set_title("mean(3) - mean(8)")
    for ax, (title, w) in zip(axes[1:], maps.values()):
        lim = np.abs(w).max()
        ax.imshow(w.reshape(8, 8), cmap="RdBu_r", vmin=-lim, vmax=lim)
        ax.set_title(f"{title}\nE(w)={dirichlet_ratio(w, L_grid):.2f}, "
                     f"pockets={isolated_pockets(w, (8, 8))}", fontsize=9)
    for ax in axes:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    fig.suptitle("Weight maps: linear SVM vs Q-SVM with the pixel-grid Laplacian "
                 "(Fig. 1 analogue)")
    return fig
