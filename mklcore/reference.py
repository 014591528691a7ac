r"""Small cvxpy formulations of lp-norm MKL, used as oracles in the tests.

Each kernel is factored as :math:`K_m=\Phi_m\Phi_m^\top` by an eigendecomposition (eigenvalues
above ``1e-10 * max`` kept), so the problems can be written with explicit block weights
:math:`w_m` (``quad_over_lin``) or with ``sum_squares`` instead of ``quad_form``. Only for
small n (a few hundred at most). All functions raise :class:`ReferenceSolverError` unless
cvxpy reports ``optimal``.

Also holds the Q-MKL primal oracle (:func:`qmkl_primal_cvx`) and a small reference toy
problem with its optima (:func:`toy_problem`, :data:`TOY_OPTIMA`), shared by the tests.
"""

import warnings
from functools import partial

import numpy as np

from ._base import fill_doc

__all__ = ["ReferenceSolverError", "toy_problem", "TOY_OPTIMA", "factor_kernels",
           "solve_primal_cvx", "solve_dual_cvx", "solve_tikhonov_cvx", "theta_from_dual",
           "qmkl_primal_cvx", "solve_svr_primal_cvx", "solve_ovr_primal_cvx"]

#: Optimal values of problem (6) of Kloft et al. (2009) and optimal theta on
#: :func:`toy_problem` (C = 1), computed with cvxpy + Clarabel (primal and dual agree to
#: 2e-8 relative).
TOY_OPTIMA = {
    1.0: (24.2363916, (0.590759, 0.264369, 0.000000, 0.144873)),
    4.0 / 3.0: (20.1271774, (0.635739, 0.422504, 0.082130, 0.178653)),
    2.0: (16.0983153, (0.736195, 0.558946, 0.262992, 0.276463)),
    4.0: (12.5861724, (0.853807, 0.748620, 0.546398, 0.505630)),
    16.0: (10.3386805, (0.959522, 0.930708, 0.868293, 0.840785)),
    np.inf: (9.6619386, (1.0, 1.0, 1.0, 1.0)),
}


class ReferenceSolverError(RuntimeError):
    """cvxpy did not report an optimal solution."""


def toy_problem():
    """A small lp-norm MKL problem with known optima (:data:`TOY_OPTIMA`), for verification.

    60 points in 5 dimensions, labels from a noisy quadratic rule, three Gaussian kernels
    (widths 0.5, 1, 2) and a linear kernel, each trace-normalised to trace n.

    Returns
    -------
    K : ndarray of shape (4, 60, 60)
        Kernel stack.
    y : ndarray of shape (60,)
        Labels in {-1, +1}.
    C : float
        The box constraint of the table, 1.0.
    """
    rng = np.random.default_rng(0)
    n, d = 60, 5
    X = rng.normal(size=(n, d))
    y = np.sign(X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 + 0.3 * rng.normal(size=n))
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    Ks = [np.exp(-D / (2 * s * s)) for s in (0.5, 1.0, 2.0)] + [X @ X.T]
    Ks = [K * n / np.trace(K) for K in Ks]  # trace normalisation
    C = 1.0
    return np.stack(Ks), y, C


def factor_kernels(K, rel_tol=1e-10):
    r"""Factor each kernel as :math:`K_m=\Phi_m\Phi_m^\top` by eigendecomposition.

    Parameters
    ----------
    K : array-like of shape (n_kernels, n, n)
        PSD kernels.
    rel_tol : float, default=1e-10
        Eigenvalues below ``rel_tol * max eigenvalue`` are dropped.

    Returns
    -------
    factors : list of ndarray of shape (n, r_m)
        One factor per kernel.
    """
    factors = []
    for Km in np.asarray(K, dtype=float):
        vals, vecs = np.linalg.eigh(0.5 * (Km + Km.T))
        keep = vals > rel_tol * max(vals.max(), 0.0)
        if not np.any(keep):
            factors.append(np.zeros((Km.shape[0], 1)))
        else:
            factors.append(vecs[:, keep] * np.sqrt(vals[keep]))
    return factors


#: docstring texts shared by the oracles (see :func:`mklcore._base.fill_doc`)
_DOC = {
    "K_psd": """K : array-like of shape (n_kernels, n, n)
        PSD kernels.""",
    "y_pm": """y : array-like of shape (n,)
        Labels in {-1, +1}.""",
    "raises": """Raises
    ------
    ReferenceSolverError
        If cvxpy does not report ``optimal``.""",
}

_doc = partial(fill_doc, parts=_DOC)


def _solve(prob, what):
    import cvxpy as cp

    try:
        # quad_over_lin(w, 0) evaluates to inf/nan when cvxpy re-evaluates the objective at
        # a zero weight; the solver's optimal value below is what counts
        with np.errstate(divide="ignore", invalid="ignore"):
            prob.solve(solver="CLARABEL")
    except cp.error.SolverError as exc:
        raise ReferenceSolverError(f"{what}: solver error {exc}") from exc
    if prob.status != "optimal":
        raise ReferenceSolverError(f"{what}: cvxpy status {prob.status!r}")
    value = prob.value
    if value is None or not np.isfinite(value):
        value = prob.solution.opt_val
    return float(value)


def _inputs(K, y):
    K = np.asarray(K, dtype=float)
    if K.ndim == 2:
        K = K[None]
    y = np.asarray(y, dtype=float)
    if K.shape[1:] != (y.size, y.size) or not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError(f"Need K of shape (M, n, n) and y in {{-1, +1}} of length n; got "
                         f"K {K.shape}, y {y.shape}.")
    return K, y


def _block_model(K, y):
    """Blocks :math:`w_m`, weights, bias, decision values and regulariser of the primals."""
    import cvxpy as cp

    K, y = _inputs(K, y)
    factors = factor_kernels(K)
    ws = [cp.Variable(F.shape[1]) for F in factors]
    theta, b = cp.Variable(len(factors), nonneg=True), cp.Variable()
    f = sum(F @ w for F, w in zip(factors, ws)) + b
    reg = 0.5 * sum(cp.quad_over_lin(w, theta[m]) for m, w in enumerate(ws))
    return y, ws, theta, b, f, reg


def _primal_result(value, prob, ws, theta, b, **extra):
    return {"objective": value, "theta": np.maximum(theta.value, 0.0),
            "w_norms": np.array([np.linalg.norm(w.value) for w in ws]), "b": float(b.value),
            **extra, "status": prob.status}


def _weight_constraint(theta, p):
    import cvxpy as cp

    if p == 1:
        return cp.sum(theta) <= 1
    if np.isinf(p):
        return theta <= 1
    return cp.pnorm(theta, p) <= 1


@_doc
def solve_primal_cvx(K, y, C, p):
    r"""Solve the primal lp-norm MKL problem (6) of Kloft et al. (2009) with cvxpy.

    .. math::
        \min_{\theta\ge0,w,b,\xi\ge0}\ \tfrac12\sum_m\frac{\|w_m\|^2}{\theta_m}+C\sum_i\xi_i
        \quad\text{s.t.}\quad y_i\Big(\sum_m(\Phi_mw_m)_i+b\Big)\ge1-\xi_i,\
        \|\theta\|_p\le1

    with ``quad_over_lin`` for :math:`\|w_m\|^2/\theta_m`; ``sum(theta) <= 1`` for p = 1 and
    ``theta <= 1`` for p = inf.

    Parameters
    ----------
    {K_psd}
    {y_pm}
    C : float
        Box constraint of (6).
    p : float
        Norm, ``1 <= p <= inf``.

    Returns
    -------
    result : dict
        ``objective`` (optimal value of (6)), ``theta`` (shape (n_kernels,)), ``w_norms``
        (:math:`\|w_m\|`), ``b``, ``status``.

    {raises}
    """
    import cvxpy as cp

    y, ws, theta, b, f, reg = _block_model(K, y)
    xi = cp.Variable(y.size, nonneg=True)
    prob = cp.Problem(cp.Minimize(reg + C * cp.sum(xi)),
                      [cp.multiply(y, f) >= 1 - xi, _weight_constraint(theta, p)])
    return _primal_result(_solve(prob, f"primal (6), p={p:g}"), prob, ws, theta, b)


@_doc
def solve_dual_cvx(K, y, C, p):
    r"""Solve the lp-norm MKL dual of problem (6) of Kloft et al. (2009) with cvxpy.

    .. math::
        \max_{0\le\alpha\le C,\ y^\top\alpha=0}\ \mathbf1^\top\alpha-\tfrac12\|u\|_{p^*}
        \quad\text{s.t.}\quad u_m\ge\|\Phi_m^\top(\alpha\circ y)\|^2=\alpha^\top Q_m\alpha,

    with ``max(u)`` for p = 1 and ``sum(u)`` for p = inf.

    Parameters
    ----------
    {K_psd}
    {y_pm}
    C : float
        Box constraint.
    p : float
        Norm, ``1 <= p <= inf``.

    Returns
    -------
    result : dict
        ``objective`` (optimal value of the dual), ``alpha`` (shape (n,)), ``S``
        (:math:`\frac12\alpha^\top Q_m\alpha`), ``theta`` (from :func:`theta_from_dual`),
        ``status``.

    {raises}
    """
    import cvxpy as cp

    K, y = _inputs(K, y)
    factors = factor_kernels(K)
    M, n = len(factors), y.size
    alpha, u = cp.Variable(n), cp.Variable(M)
    cons = [alpha >= 0, alpha <= C, y @ alpha == 0]
    cons += [u[m] >= cp.sum_squares(F.T @ cp.multiply(y, alpha)) for m, F in enumerate(factors)]
    if p == 1:
        t = cp.max(u)
    elif np.isinf(p):
        t = cp.sum(u)
    else:
        t = cp.pnorm(u, p / (p - 1.0))
    prob = cp.Problem(cp.Maximize(cp.sum(alpha) - 0.5 * t), cons)
    value = _solve(prob, f"dual, p={p:g}")
    a = np.clip(alpha.value, 0.0, C)
    c = a * y
    S = np.maximum(0.5 * np.array([c @ Km @ c for Km in K]), 0.0)
    return {"objective": value, "alpha": a, "S": S, "theta": theta_from_dual(S, p),
            "status": prob.status}


def theta_from_dual(S, p):
    r"""Weights from a dual solution: :math:`\theta_m=(S_m/\|S\|_{p^*})^{1/(p-1)}`.

    The stationarity condition of the Lagrangian (7) of Kloft et al. (2009) in
    :math:`\theta`, with :math:`\delta=\|S\|_{p^*}` of their eq. (8).

    Parameters
    ----------
    S : array-like of shape (n_kernels,)
        :math:`\frac12\alpha^\top Q_m\alpha` at the dual optimum.
    p : float
        Norm, ``1 < p <= inf`` (p = 1 is not unique; returns the indicator of the largest
        :math:`S_m`, normalised).

    Returns
    -------
    theta : ndarray of shape (n_kernels,)
        Computed in the log domain; unit p-norm.
    """
    from .wrapper import normalize_pnorm

    S = np.maximum(np.asarray(S, dtype=float), 0.0)
    if np.isinf(p):
        return np.ones_like(S)
    if p == 1:
        top = (S >= S.max() * (1 - 1e-9)).astype(float)
        return top / top.sum()
    with np.errstate(divide="ignore"):
        log_theta = np.log(S) / (p - 1.0)  # theta ∝ S^(p*-1) = S^(1/(p-1))
    return normalize_pnorm(np.exp(log_theta - np.max(log_theta)), p)


@_doc
def solve_tikhonov_cvx(K, y, C_tilde, mu, p):
    r"""Solve the Tikhonov-regularised lp-norm MKL problem (4) of Kloft et al. (2009).

    .. math::
        \min_{\theta\ge0,w,b}\ \tilde C\sum_i\max\Big(0,1-y_i\Big(\sum_m(\Phi_mw_m)_i+b\Big)\Big)
        +\tfrac12\sum_m\frac{\|w_m\|^2}{\theta_m}+\mu\|\theta\|_p^p .

    Theorem 1 of Kloft et al. (2009) maps its solutions to those of the Ivanov problem
    (5)/(6), with a constant :math:`C` that depends on the solution.

    Parameters
    ----------
    {K_psd}
    {y_pm}
    C_tilde : float
        Loss weight :math:`\tilde C` of (4).
    mu : float
        Weight :math:`\mu` of the penalty :math:`\|\theta\|_p^p`.
    p : float
        Norm, ``1 <= p < inf``.

    Returns
    -------
    result : dict
        ``objective`` (optimal value of (4)), ``theta``, ``w_norms`` (:math:`\|w_m\|`), ``b``,
        ``loss`` (hinge-loss sum), ``status``.

    {raises}
    """
    import cvxpy as cp

    if not 1 <= p < np.inf:
        raise ValueError(f"p must be in [1, inf) for the Tikhonov problem (4); got {p!r}.")
    y, ws, theta, b, f, reg = _block_model(K, y)
    loss = cp.sum(cp.pos(1 - cp.multiply(y, f)))
    pen = cp.sum(theta) if p == 1 else cp.sum(cp.power(theta, p))
    prob = cp.Problem(cp.Minimize(C_tilde * loss + reg + mu * pen))
    value = _solve(prob, f"Tikhonov (4), p={p:g}")
    return _primal_result(value, prob, ws, theta, b, loss=float(loss.value))


@_doc
def qmkl_primal_cvx(K, y, Q, *, C=1.0, solver_options=None):
    r"""Reference solution of the Q-MKL primal with cvxpy (small problems only).

    The constrained form of problem (3) of Hinrichs et al. (2012):

    .. math::
        \min_{\beta\ge0,\ \|R\beta\|_2\le1,\ w,b,\xi\ge0}\
        \frac12\sum_m\frac{\|w_m\|^2}{\beta_m}+C\sum_i\xi_i
        \quad\text{s.t.}\quad y_i\Big(\sum_m(\Phi_mw_m)_i+b\Big)\ge1-\xi_i,

    with explicit features :math:`K_m=\Phi_m\Phi_m^\top`
    (:func:`factor_kernels`), :math:`Q=R^\top R` and ``quad_over_lin``
    in epigraph form. The oracle for :func:`mklcore.qmkl.qmkl_solve`.

    Parameters
    ----------
    K : array-like of shape (n_kernels, n, n)
        PSD kernels (n up to a few hundred).
    {y_pm}
    Q : array-like of shape (n_kernels, n_kernels)
        Symmetric positive semidefinite regulariser with bounded feasible set.
    C : float, default=1.0
        Misclassification penalty.
    solver_options : dict, default=None
        Clarabel options; tight tolerances (1e-10) by default.

    Returns
    -------
    result : dict
        ``objective`` (optimal value), ``weights`` (:math:`\beta`), ``intercept``,
        ``status``.

    Raises
    ------
    RuntimeError
        If cvxpy does not report an optimal solution.
    """
    import cvxpy as cp

    from .qmkl import check_q, q_sqrt_factor

    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    Q = check_q(Q, K.shape[0], owner="qmkl_primal_cvx")
    options = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}
    options.update(solver_options or {})
    phis = factor_kernels(K)
    M, n = K.shape[0], y.shape[0]
    ws = [cp.Variable(P.shape[1]) for P in phis]
    b, xi = cp.Variable(), cp.Variable(n, nonneg=True)
    beta, t = cp.Variable(M, nonneg=True), cp.Variable(M)
    f = sum(P @ w for P, w in zip(phis, ws)) + b
    cons = [cp.quad_over_lin(w, beta[m]) <= t[m] for m, w in enumerate(ws)]
    cons += [cp.multiply(y, f) >= 1 - xi, cp.norm(q_sqrt_factor(Q) @ beta, 2) <= 1]
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum(t) + C * cp.sum(xi)), cons)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        problem.solve(solver=cp.CLARABEL, **options)
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"qmkl_primal_cvx: cvxpy status {problem.status!r}.")
    return {"objective": float(problem.value), "weights": np.maximum(beta.value, 0.0),
            "intercept": float(b.value), "status": problem.status}


def _task_blocks(K, n_problems):
    """Blocks :math:`w_{km}` of ``n_problems`` problems sharing ``theta``, and their models."""
    import cvxpy as cp

    factors = factor_kernels(K)
    theta = cp.Variable(len(factors), nonneg=True)
    ws = [[cp.Variable(F.shape[1]) for F in factors] for _ in range(n_problems)]
    bs = cp.Variable(n_problems)
    fs = [sum(F @ w for F, w in zip(factors, wk)) + bs[k] for k, wk in enumerate(ws)]
    # sum_k ||w_km||^2 / theta_m: one quad_over_lin over the stacked blocks of kernel m
    reg = 0.5 * sum(cp.quad_over_lin(cp.hstack([wk[m] for wk in ws]), theta[m])
                    for m in range(len(factors)))
    return theta, ws, bs, fs, reg


@_doc
def solve_svr_primal_cvx(K, y, C, epsilon, p):
    r"""Solve lp-norm MKL for regression (the epsilon-SVR primal) with cvxpy.

    .. math::
        \min_{\theta\ge0,w,b}\ \tfrac12\sum_m\frac{\|w_m\|^2}{\theta_m}
        +C\sum_i\max\Big(0,\Big|y_i-\sum_m(\Phi_mw_m)_i-b\Big|-\epsilon\Big)
        \quad\text{s.t.}\quad\|\theta\|_p\le1

    (problem (6) of Kloft et al. 2009 with the loss of Smola & Schölkopf 2004, eq. (3)).

    Parameters
    ----------
    {K_psd}
    y : array-like of shape (n,)
        Real targets.
    C : float
        Penalty of the loss.
    epsilon : float
        Width of the insensitive tube.
    p : float
        Norm, ``1 <= p <= inf``.

    Returns
    -------
    result : dict
        ``objective``, ``theta``, ``b``, ``status``.

    {raises}
    """
    import cvxpy as cp

    K = np.asarray(K, dtype=float)
    K = K[None] if K.ndim == 2 else K
    y = np.asarray(y, dtype=float)
    theta, _, bs, fs, reg = _task_blocks(K, 1)
    loss = cp.sum(cp.pos(cp.abs(y - fs[0]) - epsilon))
    prob = cp.Problem(cp.Minimize(reg + C * loss), [_weight_constraint(theta, p)])
    value = _solve(prob, f"SVR primal, p={p:g}")
    return {"objective": value, "theta": np.maximum(theta.value, 0.0),
            "b": float(bs.value[0]), "status": prob.status}


@_doc
def solve_ovr_primal_cvx(K, Y, C, p):
    r"""Solve one-vs-rest lp-norm MKL with weights shared across the problems, with cvxpy.

    .. math::
        \min_{\theta\ge0,w,b}\ \sum_k\Big[\tfrac12\sum_m\frac{\|w_{km}\|^2}{\theta_m}
        +C\sum_i\max\big(0,1-Y_{ki}f_k(x_i)\big)\Big]
        \quad\text{s.t.}\quad\|\theta\|_p\le1,

    :math:`f_k=\sum_m\Phi_mw_{km}+b_k` (the multiclass MKL of Rakotomamonjy et al. 2008,
    Sec. 5.1, and Zien & Ong 2007 with one-vs-rest losses).

    Parameters
    ----------
    {K_psd}
    Y : array-like of shape (n_problems, n)
        Labellings in {-1, +1}.
    C : float
        Box constraint.
    p : float
        Norm, ``1 <= p <= inf``.

    Returns
    -------
    result : dict
        ``objective``, ``theta``, ``b`` (shape (n_problems,)), ``status``.

    {raises}
    """
    import cvxpy as cp

    K = np.asarray(K, dtype=float)
    K = K[None] if K.ndim == 2 else K
    Y = np.atleast_2d(np.asarray(Y, dtype=float))
    theta, _, bs, fs, reg = _task_blocks(K, Y.shape[0])
    loss = sum(cp.sum(cp.pos(1 - cp.multiply(Y[k], f))) for k, f in enumerate(fs))
    prob = cp.Problem(cp.Minimize(reg + C * loss), [_weight_constraint(theta, p)])
    value = _solve(prob, f"one-vs-rest primal, p={p:g}")
    return {"objective": value, "theta": np.maximum(theta.value, 0.0),
            "b": np.asarray(bs.value, dtype=float), "status": prob.status}
