r"""lp-norm multiple kernel learning (Kloft et al., NIPS 2009) and the uniform-sum baseline.

Solves the Ivanov-regularised lp-norm MKL problem, eq. (5)/(6) of Kloft et al. (2009),

.. math::
    \min_{\theta\ge0,\ \|\theta\|_p\le1}\ \min_{w,b,\xi}\ \tfrac12\sum_m\frac{\|w_m\|^2}{\theta_m}
    + C\sum_i\xi_i \quad\text{s.t.}\quad y_i\Big(\sum_m w_m^\top\psi_m(x_i)+b\Big)\ge1-\xi_i,
    \ \xi\ge0,

through its saddle-point form
:math:`\min_\theta\max_\alpha\mathbf1^\top\alpha-\frac12\sum_m\theta_m\alpha^\top Q_m\alpha`
with three weight updates, all run by the shared wrapper loop of :mod:`mklcore.wrapper`:
Newton descent on :math:`\log\theta` (paper Sec. 2.4.1), cutting planes for the
semi-infinite program (Sec. 2.4.2; master problems solved as LPs over tangent planes of the
p-ball, or as the paper's sequence of Taylor-approximated QCLPs with ``master="sqclp"``), and
the closed-form update of Kloft et al. (JMLR 2011, Algorithm 1).

The uniform sum-kernel SVM is the :math:`p=\infty` end of the lp-norm family: the SVM with
kernel :math:`\sum_m K_m` (all weights 1, not 1/M; Kloft et al. 2009, Sec. 2), solved by
:func:`lpmkl_solve` with ``p=inf``.
"""

import functools
import warnings

import numpy as np

from ._base import (COMMON_CONSTRAINTS, BaseMKLClassifier, BaseMKLRegressor, common_constraints,
                    fill_doc)
from ._validation import (Interval, Options, check_classification_inputs,
                          check_regression_inputs, validate_params)
from .rowsource import MEMORY_DOC, LazyStack, MemoryMixin, check_lazy_labels
from .svm import default_backend
from .tasks import OneVsRestTask, RegressionTask
from .masters import highs_lp, lp_master
from .wrapper import (THETA_FLOOR, FixedWeights, NumericalFailure, SIPWeightStep,
                       WeightStep, dual_norm, log_sum_exp, normalize_pnorm, run_wrapper)

__all__ = ["sum_kernel_svm_solve", "SumKernelSVC", "lpmkl_solve", "LpMKLClassifier",
           "sum_kernel_svr_solve", "SumKernelSVR", "lpmkl_svr_solve", "LpMKLRegressor",
           "EPSILON_CONSTRAINT"]

#: the constraint of the epsilon-SVR's tube width (shared by the regression solvers)
EPSILON_CONSTRAINT = [Interval("real", 0, None, closed="left")]


@fill_doc
def sum_kernel_svm_solve(K, y, *, C=1.0, svm_tol=1e-3, check_input=True, svm_max_iter=None):
    r"""Train the SVM on the unweighted sum of the kernels (the l-infinity MKL baseline).

    Solves the SVM dual with :math:`K = \sum_m K_m`, which is the :math:`p\to\infty` limit of
    the lp-norm MKL dual of problem (6) of Kloft et al. (2009): there :math:`\|S(\alpha)\|_1 =
    \frac12\alpha^\top Y(\sum_m K_m)Y\alpha`. It is :func:`lpmkl_solve` with ``p=inf``, so
    both report the same objective for the same model.

    Parameters
    ----------
    {K}
    {y}
    {C}
    {svm_tol}
    {check_input}
    {svm_max_iter}

    Returns
    -------
    result : MKLResult
        The :func:`lpmkl_solve` result at ``p=inf`` (``method="lpmkl"``): ``weights`` are all
        ones; ``objective`` is :math:`J=\mathbf1^\top\alpha-\frac12\alpha^\top
        Y(\sum_mK_m)Y\alpha`, the SVM dual value at the returned alpha; ``gap`` is 0 (nothing
        to optimise over the weights); ``primal_objective`` (hinge primal) and
        ``rigorous_gap`` (primal minus dual) certify the SVM; ``n_iter`` is 1.

    Notes
    -----
    One SVM on :math:`\sum_mK_m`, formed once by the engine (:class:`mklcore.smo.StackSMO`).

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore import sum_kernel_svm_solve
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]]); y = np.array([-1, -1, 1, 1])
    >>> res = sum_kernel_svm_solve(np.stack([X @ X.T, np.exp(-(X - X.T) ** 2)]), y, C=10.0)
    >>> res.weights.tolist(), res.success
    ([1.0, 1.0], True)
    """
    validate_params("sum_kernel_svm_solve", {**COMMON_CONSTRAINTS, "check_input": [bool]},
                    {"C": C, "svm_tol": svm_tol, "svm_max_iter": svm_max_iter,
                     "check_input": check_input})
    return lpmkl_solve(K, y, p=np.inf, C=C, svm_tol=svm_tol, check_input=check_input,
                       svm_max_iter=svm_max_iter)


@functools.partial(fill_doc, parts={"memory": MEMORY_DOC})
class SumKernelSVC(MemoryMixin, BaseMKLClassifier):
    """SVM on the unweighted sum of a bank of kernels (the uniform-sum MKL baseline).

    Parameters
    ----------
    {kernels}
    {C}
    {normalize}
    {svm_tol}
    {svm_max_iter}
    {check_input_fit}
    {memory}
    {multiclass}
    {probability}

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
        All ones (the sum kernel).
    {fitted_model}
    n_iter_ : int
        Always 1.
    converged_ : bool
        Whether the solver converged.
    objective_ : float
        SVM dual objective at the solution (see :func:`sum_kernel_svm_solve`).
    gap_ : float
        Relative MKL duality gap (0: the weights are fixed).
    {fitted_run}

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from mklcore import SumKernelSVC
    >>> X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    >>> clf = SumKernelSVC(C=1.0).fit(X, y)
    >>> clf.weights_.tolist()
    [1.0, 1.0]
    """

    _parameter_constraints = {**common_constraints("kernels", "C", "normalize", "svm_tol",
                                                   "svm_max_iter", "check_input", "multiclass"),
                              **MemoryMixin.memory_constraints}
    _solver = staticmethod(sum_kernel_svm_solve)
    _shared_multiclass = True
    _sum_kernel = True

    def __init__(self, *, kernels=None, C=1.0, normalize=None, svm_tol=1e-3, svm_max_iter=None,
                 check_input=True, memory="auto", cache_size=1024, multiclass="ovr",
                 probability=False, random_state=None):
        self._store_params(locals())


# ======================================================================================
# lp-norm MKL: weight updates (Kloft et al. 2009, Sec. 2.4; Kloft et al. 2011, Algorithm 1)
# ======================================================================================

def _analytic_update(theta, S, p, *, theta_floor=THETA_FLOOR):
    r"""Closed-form minimiser of :math:`\frac12\sum_m\|w_m\|^2/\theta_m` over the unit p-ball.

    :math:`\theta_m=\|w_m\|^{2/(p+1)}/(\sum_{m'}\|w_{m'}\|^{2p/(p+1)})^{1/p}` with
    :math:`\|w_m\|^2=\theta_m^2q_m=2\theta_m^2S_m` (Kloft et al. JMLR 2011, Algorithm 1), in
    the log domain.
    """
    theta = np.asarray(theta, dtype=float)
    if np.isinf(p):
        return np.ones_like(theta)
    S = np.maximum(np.asarray(S, dtype=float), 0.0)
    with np.errstate(divide="ignore"):
        log_w = np.log(theta) + 0.5 * np.log(2.0 * S)  # log ||w_m||
    if not np.any(np.isfinite(log_w)):
        return theta.copy()  # alpha = 0: no information, keep the weights
    z = (2.0 / (p + 1.0)) * log_w  # theta_m ~ ||w_m||^(2/(p+1)), normalised
    new = np.exp(z - log_sum_exp(p * z) / p)
    return normalize_pnorm(np.maximum(new, theta_floor), p)


def _newton_update(theta, S, p, *, newton_steps=1, ls_shrink=0.5, ls_min=1e-9, armijo_c=0.0,
                   theta_floor=THETA_FLOOR, return_info=False):
    r"""Newton steps on :math:`\log\vartheta` for :math:`\Phi(\vartheta)=\sum_m a_m/\vartheta_m`.

    The theta step of Kloft et al. (2009, Sec. 2.4.1): :math:`a_m=\theta_m^2S_m`
    (:math:`=\frac12\|w_m\|^2` at fixed alpha), :math:`\delta=\|S\|_{p^*}` (eq. (8)),
    log-space Newton direction
    :math:`s_m=(a_m/\vartheta_m-\delta\vartheta_m^p)/(a_m/\vartheta_m+p\delta\vartheta_m^p)`,
    multiplicative step :math:`\vartheta\,e^{\tau s}` renormalised to the unit p-sphere, and a
    backtracking line search that accepts when
    :math:`\Phi(\vartheta')<(1-c\tau)\Phi(\vartheta)` (``armijo_c`` = c; 0 = strict decrease).
    """
    theta = np.asarray(theta, dtype=float)
    S = np.maximum(np.asarray(S, dtype=float), 0.0)
    a = theta ** 2 * S  # 1/2 ||w_m||^2 at fixed alpha
    delta = dual_norm(S, p)
    v = normalize_pnorm(np.maximum(theta, theta_floor), p)
    n_failed = 0
    if delta <= 0 or not np.any(a > 0):
        return (v, n_failed) if return_info else v

    def phi(u):
        return float(np.sum(a / u))

    for _ in range(newton_steps):
        av = a / v
        dv = delta * v ** p
        s = (av - dv) / (av + p * dv)  # log-space Newton direction; denominator > 0
        phi0 = phi(v)
        tau = 1.0
        while True:  # backtracking line search
            cand = normalize_pnorm(np.maximum(v * np.exp(tau * s), theta_floor), p)
            if phi(cand) < (1.0 - armijo_c * tau) * phi0:
                v = cand
                break
            tau *= ls_shrink
            if tau < ls_min:  # no improving step: keep v
                n_failed += 1
                break
    return (v, n_failed) if return_info else v


def _taylor_coefficients(theta_tilde, p, floor=1e-10):
    r"""Second-order Taylor surrogate of :math:`\sum_m\theta_m^p` around :math:`\tilde\theta`.

    Returns ``A, B, c0`` with surrogate :math:`\sum_m(A_m\theta_m^2+B_m\theta_m)+c_0`
    (Kloft et al. 2009, Sec. 2.4.2): :math:`A_m=\frac{p(p-1)}2\tilde\theta_m^{p-2}`,
    :math:`B_m=-p(p-2)\tilde\theta_m^{p-1}`, :math:`c_0=(1+\frac{p(p-3)}2)\sum_m\tilde\theta_m^p`,
    with :math:`\tilde\theta` floored at ``floor`` first.
    """
    tt = np.maximum(np.asarray(theta_tilde, dtype=float), floor)
    A = 0.5 * p * (p - 1.0) * tt ** (p - 2.0)
    B = -p * (p - 2.0) * tt ** (p - 1.0)
    c0 = (1.0 + 0.5 * p * (p - 3.0)) * float(np.sum(tt ** p))
    return A, B, c0


def _cvx_master(cuts, p, *, theta_tilde=None, kind="sqclp"):
    r"""Restricted master of the semi-infinite program over the current cuts (cvxpy + Clarabel).

    :math:`\min_{\theta,\eta}\eta` s.t. :math:`\eta\ge L^r-\theta^\top S^r` for every cut r,
    :math:`0\le\theta\le1` and the norm constraint. ``kind="sqclp"``: the QCLP of Kloft et
    al. (2009, Sec. 2.4.2) with the Taylor surrogate around ``theta_tilde``
    and the box :math:`0\le\theta\le1`; ``kind="exact"``: ``pnorm(theta, p) <= 1``.
    Returns ``(theta, eta)``.
    """
    import cvxpy as cp

    M = cuts.S.shape[1]
    th, eta = cp.Variable(M), cp.Variable()
    cons = [th >= 0, th <= 1, eta >= cuts.L - cuts.S @ th]
    if kind == "exact":
        if not np.isinf(p):  # p = inf: the box 0 <= theta <= 1 is the ball
            cons.append(cp.pnorm(th, p) <= 1)
    else:
        A, B, c0 = _taylor_coefficients(theta_tilde, p)
        cons.append(cp.sum(cp.multiply(A, cp.square(th))) + B @ th + c0 <= 1)
    try:
        prob = cp.Problem(cp.Minimize(eta), cons)
        with warnings.catch_warnings():  # "optimal_inaccurate" is accepted below on purpose:
            warnings.filterwarnings("ignore", "Solution may be inaccurate")  # the SIP gap
            prob.solve(solver="CLARABEL")  # still decides convergence
    except (cp.error.SolverError, ArithmeticError) as exc:  # pragma: no cover - solver crash
        raise NumericalFailure(f"master problem ({kind}) failed: {exc!r}") from exc
    if prob.status not in ("optimal", "optimal_inaccurate") or th.value is None:
        raise NumericalFailure(f"master problem ({kind}) ended with status {prob.status!r}")
    return np.maximum(np.asarray(th.value, dtype=float), 0.0), float(eta.value)


class _NewtonStep(WeightStep):
    """Newton descent on log(theta) (Kloft et al. 2009, Sec. 2.4.1); requires p > 1."""

    method = "lpmkl"

    def __init__(self, p, *, newton_steps=1, ls_shrink=0.5, ls_min=1e-9, armijo_c=0.0,
                 theta_floor=THETA_FLOOR):
        self.p = p
        self.label = f"LpMKL (newton, p={p:g})"
        self.kw = dict(newton_steps=newton_steps, ls_shrink=ls_shrink, ls_min=ls_min,
                       armijo_c=armijo_c, theta_floor=theta_floor)
        self.n_ls_failures = 0

    def step(self, state, oracle):
        theta, failed = _newton_update(state.theta, state.S, self.p, return_info=True, **self.kw)
        self.n_ls_failures += failed
        return theta

    def result_extras(self):
        return {"n_line_search_failures": self.n_ls_failures}


class _AnalyticStep(WeightStep):
    """Closed-form update of Kloft et al. (JMLR 2011, Algorithm 1)."""

    method = "lpmkl"

    def __init__(self, p, *, theta_floor=THETA_FLOOR):
        self.p, self.theta_floor = p, theta_floor
        self.label = f"LpMKL (analytic, p={p:g})"

    def step(self, state, oracle):
        return _analytic_update(state.theta, state.S, self.p, theta_floor=self.theta_floor)


def _best_response(v, p):
    r""":math:`\arg\max_{\theta\ge0,\|\theta\|_p\le1}\theta^\top v` for :math:`v\ge0`:
    :math:`\theta\propto v^{p^*-1}=v^{1/(p-1)}` on the unit sphere (Hölder's equality case;
    the maximum is :math:`\|v\|_{p^*}`), computed in the log domain."""
    v = np.maximum(np.asarray(v, dtype=float), 0.0)
    with np.errstate(divide="ignore"):
        z = np.log(v) / (p - 1.0)
    theta = np.exp(z - np.max(z))
    return normalize_pnorm(theta, p)


def _dual_master_newton(cuts, lam, p, *, max_iter=50, tol=1e-12):
    r"""Newton's method on the dual master over the support of ``lam``.

    The dual of the master (see :func:`_tangent_lp_master`) is
    :math:`\max_{\lambda\in\Delta}D(\lambda)=\lambda^\top L-\|S^\top\lambda\|_{p^*}`, a
    concave function whose gradient is :math:`L-S\theta(\lambda)` with
    :math:`\theta(\lambda)` the best response (:func:`_best_response`) to
    :math:`v=S^\top\lambda`, and whose Hessian is :math:`-SJS^\top`,
    :math:`J=\partial\theta/\partial v=\frac1N(I-\theta(\theta^{p-1})^\top)
    \mathrm{diag}(q\,w/v)`, :math:`w=v^q`, :math:`q=1/(p-1)`, :math:`N=\|w\|_p`.
    Equality-constrained Newton steps (:math:`\sum\lambda=1`) on the cuts in the support
    of ``lam`` (the active cuts of the LP), with backtracking on :math:`D`, solve the KKT
    system of the master (:math:`L^r-\theta^\top S^r=\eta` on the active cuts) quadratically
    fast when the support is right. Returns the improved ``lam`` (zero off the support), or
    None when a step leaves the simplex (the support is wrong: the caller refines the LP).
    """
    act = np.flatnonzero(lam > 0)
    x = lam[act] / lam[act].sum()
    q = 1.0 / (p - 1.0)

    def dual(x):
        v = cuts.S[act].T @ x
        return float(x @ cuts.L[act]) - dual_norm(v, p), v

    D, v = dual(x)
    for _ in range(max_iter):
        La, Sa, k = cuts.L[act], cuts.S[act], act.size
        theta = _best_response(v, p)
        g = La - Sa @ theta
        pos = v > 0
        d = np.zeros_like(v)
        d[pos] = q * theta[pos] / v[pos]  # q w / (v N)
        J = d[None, :] * (np.eye(v.size) - np.outer(theta, theta ** (p - 1.0)))
        H = Sa @ J @ Sa.T  # Hessian of the norm part (D's Hessian is -H)
        kkt = np.zeros((k + 1, k + 1))
        kkt[:k, :k] = H + 1e-12 * max(np.trace(H), 1e-300) / k * np.eye(k)
        kkt[:k, k] = kkt[k, :k] = 1.0
        try:
            step = np.linalg.solve(kkt, np.append(g, 0.0))[:k]  # H step + nu 1 = g
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(step)):
            return None
        if float(g @ step) <= tol * max(1.0, abs(D)):  # stationary on the face
            out_vals = cuts.L - cuts.S @ theta
            out_vals[act] = -np.inf
            r = int(np.argmax(out_vals))
            if out_vals[r] <= float(x @ g) + tol * max(1.0, abs(D)):
                break  # no cut off the face is above the face's value: KKT point
            act, x = np.append(act, r), np.append(x, 0.0)  # add the most violated cut
            continue
        neg = step < 0
        tau_max = min(1.0, float(np.min(-x[neg] / step[neg]))) if np.any(neg) else 1.0
        tau = tau_max
        if tau <= 0.0:  # blocked at once by a multiplier at 0: drop it
            keep = ~((x <= 0) & neg)
            act, x = act[keep], x[keep]
            continue
        while True:  # backtracking on the concave D
            cand = np.maximum(x + tau * step, 0.0)
            D_new, v_new = dual(cand)
            if D_new >= D:
                break
            tau *= 0.5
            if tau < 1e-10:
                return None
        x, D, v = cand, D_new, v_new
        if tau == tau_max < 1.0:  # a cut's multiplier reached 0: leave it out of the face
            keep = x > 1e-14
            act, x = act[keep], x[keep] / x[keep].sum()
            D, v = dual(x)
    out = np.zeros_like(lam)
    out[act] = x
    return out


def _tangent_lp_master(cuts, p, tangents, *, inner_eps=1e-6, max_inner=200, max_tangents=None):
    r"""Restricted master of the semi-infinite program as LPs over an outer polyhedron of the ball.

    The master of the cutting plane of Kloft et al. (2009, Sec. 2.4.2) over the cuts
    :math:`r=1..R` collected so far,

    .. math::
        \eta^*=\min_{\theta\ge0,\ \|\theta\|_p\le1}\ \max_r\ L^r-\theta^\top S^r ,

    is solved by outer approximation (Kelley's cutting planes on the constraint): the ball is
    replaced by the box :math:`0\le\theta\le1` and the tangent half-spaces
    :math:`g(u)^\top\theta\le1`, :math:`g(u)_m=u_m^{p-1}`, of the unit sphere at points
    :math:`u\ge0`, :math:`\|u\|_p=1` (by convexity and homogeneity of the norm,
    :math:`\|\theta\|_p\ge\nabla\|u\|_p^\top\theta=g(u)^\top\theta`, so every tangent
    half-space contains the ball). Each round solves the LP

    .. math::
        \underline\eta=\min_{\theta,\eta}\ \eta\quad\text{s.t.}\quad
        L^r-\theta^\top S^r\le\eta\ (r\le R),\quad g(u_k)^\top\theta\le1\ (k\le T),
        \quad0\le\theta\le1

    with HiGHS (:func:`mklcore.masters.highs_lp`, the machinery of SILP's master
    :func:`mklcore.masters.lp_master`). Its solution :math:`\hat\theta` gives two bounds of
    the master's value: :math:`\underline\eta\le\eta^*` (a relaxation) and
    :math:`\bar\eta=\max_r L^r-\bar\theta^\top S^r\ge\eta^*` at the feasible
    :math:`\bar\theta=\hat\theta/\|\hat\theta\|_p` (as :math:`S^r\ge0`, scaling onto the
    sphere never raises a cut). While :math:`\bar\eta-\underline\eta>` ``inner_eps``
    :math:`\cdot\max(1,|\bar\eta|)` the tangent at :math:`u=\bar\theta` (which
    :math:`\hat\theta` violates when it lies outside the ball) is added and the LP re-solved,
    so the returned weights solve the master to a certified relative accuracy ``inner_eps``.
    The tangents depend on the ball only, not on the cuts: they are kept in ``tangents``
    across outer iterations, so later masters start from a finer polyhedron.

    Parameters
    ----------
    cuts : Cuts
        The cuts :math:`(L^r, S^r)`.
    p : float
        Norm, ``1 < p < inf``.
    tangents : list of ndarray
        Gradients :math:`g(u_k)` of the tangent half-spaces so far (appended to in place).
    inner_eps : float, default=1e-6
        Relative accuracy of the master value.
    max_inner : int, default=200
        Maximum number of LPs.
    max_tangents : int, default=None
        Keep at most this many tangents (those with the largest slack at the solution are
        dropped first); None keeps all.

    Returns
    -------
    theta : ndarray of shape (n_kernels,)
        Weights on the unit p-sphere.
    eta : float
        :math:`\bar\eta`, the largest cut at ``theta``.
    n_lp : int
        Number of LPs solved.

    Raises
    ------
    NumericalFailure
        If HiGHS does not solve an LP.
    """
    R, M = cuts.S.shape
    c = np.zeros(M + 1)
    c[-1] = 1.0
    A_cuts = np.hstack([-cuts.S, -np.ones((R, 1))])
    b_cuts = -cuts.L
    lb = np.append(np.zeros(M), -np.inf)
    ub = np.append(np.ones(M), np.inf)
    no_eq = np.zeros((0, M + 1))
    best, eta_low = None, -np.inf
    for n_lp in range(1, max_inner + 1):
        G = np.asarray(tangents, dtype=float).reshape(-1, M)
        A_ub = np.vstack([A_cuts, np.hstack([G, np.zeros((G.shape[0], 1))])])
        b_ub = np.append(b_cuts, np.ones(G.shape[0]))
        res = highs_lp(c, A_ub, b_ub, no_eq, np.zeros(0), lb, ub)
        if not res["success"]:
            raise NumericalFailure(f"lp-norm master LP failed: {res['message']}")
        eta_low = max(eta_low, float(res["x"][-1]))
        # candidate 1: the LP solution scaled onto the sphere
        radial = normalize_pnorm(np.maximum(res["x"][:M], 0.0), p)
        # candidate 2: the best response to the LP's cut multipliers lambda (the dual of
        # the master is max_{lambda in simplex} lambda'L - ||S'lambda||_{p*}); its dual
        # value is a second lower bound
        lam = np.maximum(-np.asarray(res["ineqlin_marginals"][:R], dtype=float), 0.0)
        cands = [radial]
        if lam.sum() > 0:
            lam /= lam.sum()
            v = cuts.S.T @ lam
            eta_low = max(eta_low, float(lam @ cuts.L) - dual_norm(v, p))
            if np.isfinite(p) and np.any(v > 0):
                cands.append(_best_response(v, p))
                polished = _dual_master_newton(cuts, lam, p)
                if polished is not None:  # the KKT point on the LP's active cuts
                    v = cuts.S.T @ polished
                    eta_low = max(eta_low, float(polished @ cuts.L) - dual_norm(v, p))
                    cands.append(_best_response(v, p))
        for cand in cands:
            val = float(np.max(cuts.values(cand)))
            if best is None or val < best[1]:
                best = (cand, val)
        if best[1] - eta_low <= inner_eps * max(1.0, abs(best[1])) or np.isinf(p):
            break  # certified (p = inf: the box is the ball, the first LP is exact)
        for cand in cands:  # the tangents at both candidates (both cut off the LP point
            tangents.append(cand ** (p - 1.0))  # or make the LP's dual bound exact)
    theta, eta = best
    if max_tangents is not None and len(tangents) > max_tangents:
        slack = 1.0 - np.asarray(tangents) @ theta
        keep = np.sort(np.argsort(slack, kind="stable")[:max_tangents])
        tangents[:] = [tangents[k] for k in keep]
    return theta, eta, n_lp


#: above this p the cutting-plane master uses the unit box (the p = inf ball) instead of the
#: Taylor QCLP (whose coefficients theta^(p-2) under/overflow): the p-ball lies between the
#: box scaled by M^(-1/p) and the box, a relative difference below ln(M)/p ~ 1e-6
_P_BOX = 1e7
#: cvxpy's rational approximation of pnorm breaks down for larger p (ZeroDivisionError)
_P_EXACT_MAX = 1e3


class _CuttingPlaneStep(SIPWeightStep):
    r"""Column generation for the semi-infinite program of Kloft et al. (2009, Sec. 2.4.2).

    Each step adds the cut :math:`\eta\ge L(\alpha)-\theta^\top S(\alpha)` of the current SVM
    and solves the restricted master over the cuts. Masters (``master=``):

    * ``"lp"`` (default): LPs over an outer polyhedron of the p-ball refined by tangent
      planes (:func:`_tangent_lp_master`), solved by HiGHS as SILP's master, to a certified
      accuracy ``inner_eps``; at p = 1 the LP of SILP itself (:func:`mklcore.masters.lp_master`);
    * ``"sqclp"``: the paper's sequence of second-order Taylor QCLPs around the current point
      (Sec. 2.4.2; cvxpy + Clarabel) until the master value settles to ``inner_eps``;
    * ``"exact"``: one conic program with the exact constraint ``pnorm(theta, p) <= 1``
      (cvxpy + Clarabel, p <= 1000).

    Stops on :math:`\Delta_{rel}` (default) or, with ``stop="sip"``, on the SIP gap
    :math:`|1-\eta/J|` (see :class:`~mklcore.wrapper.SIPWeightStep`).
    """

    method = "lpmkl"

    def __init__(self, p, *, master="lp", inner_eps=1e-6, max_inner=None, max_tangents=500,
                 **cut_options):
        super().__init__(**cut_options)
        self.p, self.kind, self.inner_eps = p, master, inner_eps
        self.max_inner = (200 if master == "lp" else 50) if max_inner is None else max_inner
        self.max_tangents = max_tangents
        self.tangents = []  # tangent planes of the unit p-sphere (the "lp" master)
        self.n_lp = 0
        self.fallback = None  # (n_cuts, reason) once the SQCLP master gave way to the exact one
        self.label = f"LpMKL (cutting_plane, p={p:g})"

    def init(self, n_kernels):
        if self.kind == "lp" and 1 < self.p <= _P_BOX:  # tangent at the uniform weights
            self.tangents = [np.full(n_kernels, float(n_kernels) ** ((1.0 - self.p) / self.p))]
        return super().init(n_kernels)

    def master(self, state):
        cuts = self.cuts
        if self.p == 1:  # the LP of SILP (Sonnenburg et al. 2006, Algorithm 1)
            theta, eta = lp_master(cuts)
            self.n_master_solves += 1
        elif self.kind == "lp":  # beyond _P_BOX: the LP over the box (the p = inf ball)
            p_ball = np.inf if self.p > _P_BOX else self.p
            theta, eta, n_lp = _tangent_lp_master(cuts, p_ball, self.tangents,
                                                  inner_eps=self.inner_eps,
                                                  max_inner=self.max_inner,
                                                  max_tangents=self.max_tangents)
            self.n_master_solves += 1
            self.n_lp += n_lp
            if p_ball != self.p:
                theta = normalize_pnorm(theta, self.p)
                eta = float(np.max(cuts.values(theta)))
        elif self.kind == "exact" and self.p > _P_EXACT_MAX:
            raise NumericalFailure(
                f"master='exact' supports p <= {_P_EXACT_MAX:g} (cvxpy's pnorm); use "
                f"master='lp' for p={self.p:g}")
        elif self.kind == "exact" or self.p > _P_BOX:
            # for huge p the Taylor terms theta^(p-2), the power cones and the tangents
            # u^(p-1) are numerically useless; use the box (see _P_BOX), then normalise to
            # the p-sphere
            theta, eta = _cvx_master(cuts, np.inf if self.p > _P_BOX else self.p,
                                     kind="exact")
            self.n_master_solves += 1
            theta = normalize_pnorm(theta, self.p)
        else:  # SQCLP: a sequence of QCLPs around the current point
            try:
                return self._sqclp(state)
            except NumericalFailure as exc:
                if self.p > _P_EXACT_MAX:
                    raise
                # Taylor surrogates around nearly sparse weights (coefficients
                # theta^(p-2) spanning many orders on large banks) can defeat the conic
                # solver: continue with the exact p-norm master
                self.kind = "exact"
                self.fallback = (len(self.cuts), str(exc))
                return self.master(state)
        return theta, eta

    def _sqclp(self, state):
        """The SQCLP master: QCLPs around the current point until eta settles."""
        cuts = self.cuts
        theta_t = normalize_pnorm(state.theta, self.p)
        eta_old = None
        for _ in range(self.max_inner):
            theta_star, _ = _cvx_master(cuts, self.p, theta_tilde=theta_t, kind="sqclp")
            self.n_master_solves += 1
            theta_t = normalize_pnorm(theta_star, self.p)
            eta = float(np.max(cuts.values(theta_t)))
            if self.p == 2:  # the surrogate is exact: one QCLP solves the master
                break
            if eta_old is not None and abs(1.0 - eta / eta_old) < self.inner_eps:
                break
            eta_old = eta
        return theta_t, eta

    def result_extras(self):
        out = super().result_extras()
        out["master_fallback"] = self.note() or None
        if self.kind == "lp" and self.p > 1:
            out["n_master_lps"] = self.n_lp
        return out

    def note(self):
        if self.fallback is None:
            return ""
        return (f"the SQCLP master failed at cut {self.fallback[0]}; continued with "
                f"master='exact'")

    def history_extras(self):
        return {"eta": self.eta, "n_master_solves": self.n_master_solves,
                "n_cuts": 0 if self.cuts is None else len(self.cuts)}


_SOLVER_OPTIONS = {
    "newton": {"newton_steps": [Interval("int", 1, None)],
               "ls_shrink": [Interval("real", 0, 1, closed="neither")],
               "ls_min": [Interval("real", 0, 1, closed="neither")],
               "armijo_c": [Interval("real", 0, 1, closed="left")],
               "theta_floor": [Interval("real", 0, 1e-3, closed="right")]},
    "analytic": {"theta_floor": [Interval("real", 0, 1e-3, closed="right")]},
    "cutting_plane": {"master": [Options("lp", "sqclp", "exact")],
                      "inner_eps": [Interval("real", 0, None, closed="neither")],
                      "max_inner": [Interval("int", 1, None), None],
                      "max_tangents": [Interval("int", 1, None), None],
                      "max_cuts": [Interval("int", 1, None)],
                      "prune_cuts": [bool],
                      "stop": [Options("gap", "sip")]},
}
_COMMON_OPTIONS = {"svm_backend": [str],
                   "polish_tol": [Interval("real", 0, None, closed="neither")],
                   "mode": [Options("wrapper", "interleaved")],
                   "mkl_every": [Interval("int", 1, None), None],
                   "svm_max_iter": [Interval("int", 1, None), None]}

_LPMKL_CONSTRAINTS = {
    "p": [Interval("real", 1, np.inf, closed="both")],
    "solver": [Options("auto", "newton", "cutting_plane", "analytic")],
    **common_constraints("C", "tol", "max_iter", "svm_tol", "verbose", "callback"),
}


def default_engine(solver, p, n_samples, *, mode=None, svm_backend=None, mkl_every=None,
                   master="lp", **_ignored):
    r"""The SVM engine of :func:`lpmkl_solve`: ``(mode, svm_backend, mkl_every)``.

    Fills in what the caller left unset with the fastest certified engine measured for each
    weight update (see the Notes of :func:`lpmkl_solve`): ``mode="interleaved"`` (the
    warm-started :class:`~mklcore.smo.StackSMO`, ``max(10, n_samples // 20)`` SMO
    iterations between weight steps) for ``"newton"`` and ``"analytic"`` at finite p and for
    ``"cutting_plane"`` at p = 1 (a linear master, as SILP) and at p > 1 with its default LP
    master (``master="lp"``); ``mode="wrapper"`` (the SVM solved before every step,
    warm-started) for ``"cutting_plane"`` with the cvxpy masters ``"sqclp"`` and ``"exact"``
    (whose conic master problems cost more than the SVM iterations that interleaving saves)
    and for ``p=inf`` (one SVM on the sum kernel).

    Parameters
    ----------
    solver : {"newton", "cutting_plane", "analytic"}
        Weight update.
    p : float
        Norm of the weight constraint.
    n_samples : int
        Number of training points.
    mode : {"wrapper", "interleaved"}, default=None
        Chosen mode, or None for the default above (``"wrapper"`` whenever ``svm_backend``
        is given and is not ``"smo"``).
    svm_backend : str, default=None
        Chosen backend, or None: :func:`mklcore.svm.default_backend` (``"smo"``, the compiled
        engine; ``"libsvm"``, scikit-learn's SVC, is the reference).
    mkl_every : int, default=None
        Chosen chunk length, or None for the default above (ignored in wrapper mode).
    master : {"lp", "sqclp", "exact"}, default="lp"
        Master problem of ``"cutting_plane"`` (ignored by the other solvers).
    **_ignored
        Other solver options (not used here).

    Returns
    -------
    mode : str
    svm_backend : str
    mkl_every : int or None
        None in wrapper mode.
    """
    if mode is None and svm_backend not in (None, "smo"):
        mode = "wrapper"  # another backend (e.g. LIBSVM) cannot be interleaved
    if mode is None:
        conic_master = solver == "cutting_plane" and p > 1 and master != "lp"
        mode = "wrapper" if np.isinf(p) or conic_master else "interleaved"
    if svm_backend is None:
        svm_backend = default_backend()
    if mode != "interleaved":
        return mode, svm_backend, None
    return mode, svm_backend, mkl_every or max(10, int(n_samples) // 20)


def _split_options(owner, solver, options, allowed):
    unknown = sorted(set(options) - set(allowed) - set(_COMMON_OPTIONS))
    if unknown:
        raise TypeError(
            f"{owner} got unknown option(s) {unknown} for solver={solver!r}; allowed: "
            f"{sorted(set(allowed) | set(_COMMON_OPTIONS))}.")
    validate_params(owner, {**allowed, **_COMMON_OPTIONS}, options)
    common = {k: options[k] for k in _COMMON_OPTIONS if k in options}
    own = {k: v for k, v in options.items() if k not in _COMMON_OPTIONS}
    return own, common


@fill_doc
def lpmkl_solve(K, y, *, p=2.0, C=1.0, solver="auto", tol=1e-5, max_iter=1000, svm_tol=1e-3,
                callback=None, verbose=0, check_input=True, **solver_options):
    r"""Solve lp-norm MKL, problem (6) of Kloft et al. (2009), on a precomputed kernel stack.

    Finds kernel weights :math:`\theta\ge0`, :math:`\|\theta\|_p=1`, and the SVM on
    :math:`K_\theta=\sum_m\theta_mK_m` that solve the Ivanov problem (5)/(6)

    .. math::
        \min_{\theta\ge0,\ \|\theta\|_p\le1}\ J(\theta),\qquad
        J(\theta)=\max_{0\le\alpha\le C,\ y^\top\alpha=0}\ \mathbf1^\top\alpha
        -\tfrac12\sum_m\theta_m\alpha^\top Q_m\alpha ,

    the saddle-point problem of Sec. 2.4.2 of [1]_, with dual
    :math:`\max_\alpha \mathbf1^\top\alpha-\|S(\alpha)\|_{p^*}`,
    :math:`S_m=\frac12\alpha^\top Q_m\alpha`, :math:`Q_m=YK_mY`, :math:`p^*=p/(p-1)`, by
    alternating an SVM at the current :math:`\theta` with one weight update.

    Parameters
    ----------
    {K}
    {y}
    p : float, default=2.0
        Norm of the weight constraint :math:`\|\theta\|_p\le1` in (5), ``1 <= p <= inf``.
        ``p=inf`` is the SVM on the unweighted sum kernel (:math:`\theta=\mathbf1`).
    C : float, default=1.0
        Misclassification penalty :math:`C` of (5)/(6). Must be > 0.
    solver : {"auto", "newton", "cutting_plane", "analytic"}, default="auto"
        Weight update: ``"newton"`` (Sec. 2.4.1 of [1]_; needs p > 1), ``"cutting_plane"``
        (the semi-infinite program of Sec. 2.4.2 of [1]_ by column generation; its master
        problems are LPs solved by HiGHS, as SILP's, with tangent planes of the p-ball for
        p > 1, or the paper's SQCLPs with ``master="sqclp"``), ``"analytic"`` (closed form of [2]_, Algorithm 1).
        ``"auto"`` picks ``"newton"`` for p > 1 (the paper's own update, the fastest measured)
        and ``"cutting_plane"`` for p = 1 (where Newton's step on :math:`\log\theta` is
        undefined; its LP master is SILP's, the exact l1 solution).
    tol : float, default=1e-5
        The paper's MKL epsilon: stop when :math:`\Delta_{rel}=(\|S\|_{p^*}-\theta^\top S)/J`
        is at most ``tol`` (the cutting plane at p = 1: :math:`\min(\Delta_{rel},
        |1-\eta/J|)`, its LP value :math:`\eta` being a lower bound of the optimum; with
        ``stop="sip"``: the SIP gap :math:`|1-\eta/J|`).
    max_iter : int, default=1000
        Maximum number of outer iterations (one SVM phase and one weight update each).
    svm_tol : float, default=1e-3
        KKT tolerance of the SVM (the "outer SVM epsilon" of [1]_, Sec. 3.1).
    {callback}
    {verbose}
    {check_input}
    **solver_options
        ``"newton"``: ``newton_steps=1``, ``ls_shrink=0.5``, ``ls_min=1e-9``, ``armijo_c=0``
        (0: any strict decrease; SHOGUN uses 1e-4), ``theta_floor=1e-12``. ``"analytic"``:
        ``theta_floor=1e-12``. ``"cutting_plane"``: ``master={"lp", "sqclp", "exact"}``
        (``"lp"``, default: LPs over tangent planes of the p-ball with Newton steps on the
        dual master, certified to ``inner_eps``, no cvxpy; ``"sqclp"``: the paper's Taylor
        QCLPs, Sec. 2.4.2 of [1]_, cvxpy + Clarabel; ``"exact"``: one conic program with the
        ``pnorm`` constraint, p <= 1000), ``inner_eps=1e-6`` (relative accuracy of the master
        value), ``max_inner`` (LPs or QCLPs per master, default 200 / 50),
        ``max_tangents=500`` (tangent planes kept by ``"lp"``), ``max_cuts=100`` and ``prune_cuts=True`` (keep at most
        ``max(max_cuts, 2 * n_active)`` cuts), ``stop={"gap", "sip"}`` (``"sip"``: stop on
        the SIP gap :math:`|1-\eta/J|`, the paper's "inner SIP precision"). All solvers:
        ``mode={"wrapper", "interleaved"}`` (``"interleaved"``: the paper's scheme,
        ``mkl_every`` SMO iterations between updates, default ``max(10, n // 20)``; the
        default mode is the faster one measured, see Notes and :func:`default_engine`),
        ``svm_backend`` (``"smo"``, the compiled engine, default and required by
        ``"interleaved"``; ``"libsvm"``, scikit-learn's SVC, the reference), ``polish_tol``
        (re-solve the final SVM at this tolerance), ``svm_max_iter`` (cap on the iterations
        of one SVM solve, default ``max(10**6, 100 n)``; reaching it ends the run with
        status 2, see :func:`mklcore.wrapper.run_wrapper`).

    Returns
    -------
    result : MKLResult
        The keys of :func:`mklcore.wrapper.run_wrapper`: ``weights`` (:math:`\theta`,
        :math:`\|\theta\|_p=1`), ``dual_coef``, ``intercept``, ``objective``
        (:math:`J(\theta)=\mathbf1^\top\alpha-\theta^\top S(\alpha)`), ``gap``
        (:math:`\Delta_{rel}`), ``dual_objective``
        (:math:`D_p(\alpha)=\mathbf1^\top\alpha-\|S(\alpha)\|_{p^*}`), ``rigorous_gap``,
        ``method="lpmkl"``..., plus ``p`` and ``solver``; ``"newton"`` adds
        ``n_line_search_failures``, ``"cutting_plane"`` ``eta``, ``n_master_solves``,
        ``n_cuts``, ``n_cuts_pruned`` (and ``eta``, ``n_master_solves``, ``n_cuts`` per
        history row).

    Raises
    ------
    ValueError
        For invalid parameters or inputs, and for ``solver="newton"`` with ``p=1``.

    See Also
    --------
    simplemkl_solve, silp_solve : l1-MKL (p = 1) baselines.
    sum_kernel_svm_solve : the :math:`p=\infty` baseline.

    Notes
    -----
    Initial weights :math:`M^{-1/p}\mathbf1`. Per-kernel terms use the unweighted kernels
    (:math:`\|w_m\|^2=\theta_m^2\alpha^\top Q_m\alpha`); norms and updates are computed in
    the log domain. The final SVM belongs to the returned weights.

    ``K`` may also be a :class:`~mklcore.rowsource.LazyStack` (kernel rows computed from the
    features, for problems whose stack does not fit in memory) or a
    :class:`~mklcore.lowrank.LowRankStack` (Nyström factors; the result then also holds
    ``rank`` and ``kernel_error``); both need ``svm_backend="smo"`` and add
    ``n_kernel_rows`` to the result.

    Engine (:func:`default_engine`): every SVM runs on the compiled SMO engine of
    :mod:`mklcore.smo`. ``"newton"``, ``"analytic"`` and ``"cutting_plane"`` (with its
    default LP master) interleave a weight step after every ``max(10, n // 20)`` SMO
    iterations (Sonnenburg et al. 2006, Algorithm 2; the caches :math:`H_m=K_m(\alpha\circ
    y)` give :math:`S_m` and the gradient at new weights in :math:`O(Mn)`); the cutting plane
    with the cvxpy masters (``master="sqclp"`` or ``"exact"``) and ``p=inf`` solve the SVM
    to ``svm_tol`` before each step (``mode="wrapper"``), warm-started. Both modes stop
    at the same certified gap ``tol``. Measured costs: ``benchmarks/README.md``.

    References
    ----------
    .. [1] M. Kloft, U. Brefeld, S. Sonnenburg, P. Laskov, K.-R. Müller, A. Zien. Efficient
       and Accurate lp-Norm Multiple Kernel Learning. NIPS 22, 2009.
    .. [2] M. Kloft, U. Brefeld, S. Sonnenburg, A. Zien. lp-Norm Multiple Kernel Learning.
       JMLR 12:953-997, 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.lpnorm import lpmkl_solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = np.sign(X[:, 0] + 0.1)
    >>> K = np.stack([np.outer(X[:, 0], X[:, 0]), np.outer(X[:, 1], X[:, 1])])
    >>> res = lpmkl_solve(K, y, p=2.0, C=1.0)
    >>> res.success, bool(res.weights[0] > res.weights[1])
    (True, True)
    >>> round(float(np.linalg.norm(res.weights)), 6)
    1.0
    """
    validate_params("lpmkl_solve", _LPMKL_CONSTRAINTS, locals())
    return _lpmkl("lpmkl_solve", K, y, None, p=p, C=C, solver=solver, tol=tol,
                  max_iter=max_iter, svm_tol=svm_tol, callback=callback, verbose=verbose,
                  check_input=check_input, solver_options=solver_options)


def _lpmkl(owner, K, y, epsilon, *, p, C, solver, tol, max_iter, svm_tol, callback, verbose,
           check_input, solver_options):
    """The body of :func:`lpmkl_solve` (``epsilon`` None) and :func:`lpmkl_svr_solve`."""
    p = float(p)
    if solver == "auto":
        solver = "cutting_plane" if p == 1.0 else "newton"
    if solver == "newton" and p == 1.0:
        raise ValueError(
            "solver='newton' requires p > 1: the Newton step on log(theta) of Kloft et al. "
            "(2009, Sec. 2.4.1) is undefined for p = 1. Use solver='cutting_plane' (the "
            "LP master of SILP), solver='analytic', or simplemkl_solve / silp_solve.")
    own, common = _split_options(owner, solver, solver_options, _SOLVER_OPTIONS[solver])
    extras = {"p": p, "solver": solver}
    if isinstance(K, LazyStack):  # kernel rows from features: the bank checked them
        if epsilon is not None:
            raise ValueError(f"{owner} does not take kernel rows from features (LazyStack) "
                             "yet: pass the Gram stack (memory='stack').")
        y_pm, task = check_lazy_labels(K, y, owner), None
    elif epsilon is None:
        K, y_pm, Y = check_classification_inputs(K, y, owner, check_input)
        task = None if Y is None else OneVsRestTask(Y)
    else:
        K, y = check_regression_inputs(K, y, owner, check_input)
        y_pm, task = None, RegressionTask(y, epsilon)
        extras.update(task="regression", epsilon=float(epsilon))
    if np.isinf(p):  # the sum kernel, theta = 1 (Kloft et al. 2009, Sec. 2)
        step = FixedWeights(np.ones(K.shape[0]), p=np.inf, method="lpmkl",
                            label="LpMKL (p=inf, sum kernel)")
    elif solver == "newton":
        step = _NewtonStep(p, **own)
    elif solver == "analytic":
        step = _AnalyticStep(p, **own)
    else:
        step = _CuttingPlaneStep(p, **own)
    mode, backend, mkl_every = default_engine(solver, p, K.shape[1],
                                              master=own.get("master", "lp"), **common)
    result = run_wrapper(K, y_pm, step, C=C, tol=tol, max_iter=max_iter, svm_tol=svm_tol,
                         callback=callback, verbose=int(verbose), svm_backend=backend,
                         polish_tol=common.get("polish_tol"), extras=extras, mode=mode,
                         mkl_every=mkl_every, svm_max_iter=common.get("svm_max_iter"), task=task)
    if isinstance(K, LazyStack):  # rows computed; the approximation of a low-rank stack
        result.update(K.result_extras())
    return result


@functools.partial(fill_doc, parts={"memory": MEMORY_DOC})
class LpMKLClassifier(MemoryMixin, BaseMKLClassifier):
    r"""lp-norm multiple kernel learning classifier (Kloft et al., NIPS 2009).

    Learns non-negative kernel weights :math:`\theta` with :math:`\|\theta\|_p=1` jointly with
    an SVM on :math:`\sum_m\theta_mK_m` by solving problem (6) of [1]_ (see
    :func:`lpmkl_solve`). ``p=1`` gives sparse l1-MKL, ``p=inf`` the uniform sum kernel.

    Parameters
    ----------
    {kernels}
    p : float, default=2.0
        Norm of the weight constraint in (5), ``1 <= p <= inf``.
    {C}
    solver : {"auto", "newton", "cutting_plane", "analytic"}, default="auto"
        Weight update (see :func:`lpmkl_solve`; ``"auto"``: Newton for p > 1, the cutting
        plane for p = 1); ``"newton"`` needs p > 1.
    {normalize}
    tol : float, default=1e-5
        Relative duality gap :math:`\Delta_{rel}` at which every solver stops (the cutting
        plane at p = 1 may also use its LP bound; see :func:`lpmkl_solve`).
    {max_iter}
    {svm_tol}
    {verbose}
    {svm_max_iter}
    {check_input_fit}
    {memory}
    {multiclass}
    {probability}

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
        Kernel weights :math:`\theta` of [1]_ (:math:`\|\theta\|_p=1`).
    {fitted_model}
    n_iter_ : int
        Number of outer iterations.
    converged_ : bool
        Whether the stopping criterion was met.
    objective_ : float
        Final objective :math:`J(\theta)` of (6).
    gap_ : float
        Final relative duality gap :math:`\Delta_{rel}`.
    {fitted_run}

    See Also
    --------
    lpmkl_solve : the solver on precomputed kernels.
    SimpleMKLClassifier, SILPMKLClassifier : l1-MKL baselines.

    References
    ----------
    .. [1] M. Kloft, U. Brefeld, S. Sonnenburg, P. Laskov, K.-R. Müller, A. Zien. Efficient
       and Accurate lp-Norm Multiple Kernel Learning. NIPS 22, 2009.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from mklcore.lpnorm import LpMKLClassifier
    >>> X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    >>> clf = LpMKLClassifier(p=2.0).fit(X, y)
    >>> clf.weights_.shape, round(float(np.linalg.norm(clf.weights_)), 6)
    ((2,), 1.0)
    """

    _parameter_constraints = {**BaseMKLClassifier._parameter_constraints,
                              "p": _LPMKL_CONSTRAINTS["p"], "solver": _LPMKL_CONSTRAINTS["solver"],
                              **common_constraints("multiclass"),
                              **MemoryMixin.memory_constraints}
    _solver = staticmethod(lpmkl_solve)
    _shared_multiclass = True

    def __init__(self, *, kernels=None, p=2.0, C=1.0, solver="auto", normalize=None, tol=1e-5,
                 max_iter=1000, svm_tol=1e-3, verbose=0, svm_max_iter=None, check_input=True,
                 memory="auto", cache_size=1024, multiclass="ovr",
                 probability=False, random_state=None):
        self._store_params(locals())


# ======================================================================================
# regression: epsilon-SVR MKL on the same loop (mklcore.tasks.RegressionTask)
# ======================================================================================

_SVR_DOC = {
    "y_reg": """y : array-like of shape (n_samples,)
        Real targets.""",
    "epsilon": """epsilon : float, default=0.1
        Width of the epsilon-insensitive tube of the SVR loss (in the units of ``y``).""",
    "svr_dual": r"""the epsilon-SVR dual (Smola & Schölkopf 2004, eq. (10)) in place of the
    C-SVM's,

    .. math::
        J(\theta)=\max_{\alpha,\alpha^*\in[0,C]^n,\ \mathbf1^\top(\alpha-\alpha^*)=0}\
        y^\top c-\epsilon\mathbf1^\top(\alpha+\alpha^*)-\tfrac12\sum_m\theta_mc^\top K_mc,
        \qquad c=\alpha-\alpha^*,

    the regression form of MKL of Rakotomamonjy et al. (2008, Sec. 5.2) and Sonnenburg et al.
    (2006, Sec. 2.2). The per-kernel terms :math:`S_m=\frac12c^\top K_mc`, the weight
    updates, the dual value :math:`L-\|S\|_{p^*}` and the relative duality gap are those of the
    classifier; the hinge primal becomes the epsilon-insensitive one.""",
}


@fill_doc
def lpmkl_svr_solve(K, y, *, p=2.0, C=1.0, epsilon=0.1, solver="auto", tol=1e-5,
                    max_iter=1000, svm_tol=1e-3, callback=None, verbose=0, check_input=True,
                    **solver_options):
    r"""Solve lp-norm MKL for regression (epsilon-SVR) on a precomputed kernel stack.

    Problem (6) of Kloft et al. (2009) with {svr_dual}

    Parameters
    ----------
    {K}
    {y_reg}
    p : float, default=2.0
        Norm of the weight constraint, ``1 <= p <= inf`` (``inf``: the sum kernel).
    C : float, default=1.0
        Penalty of the epsilon-insensitive loss. Must be > 0.
    {epsilon}
    solver : {"auto", "newton", "cutting_plane", "analytic"}, default="auto"
        Weight update, as in :func:`lpmkl_solve`.
    tol : float, default=1e-5
        Stop when the relative duality gap is at most ``tol``.
    {max_iter}
    {svm_tol}
    {callback}
    {verbose}
    {check_input}
    **solver_options
        As in :func:`lpmkl_solve` (the ``"smo"`` engine only).

    Returns
    -------
    result : MKLResult
        The keys of :func:`lpmkl_solve` (``dual_coef`` is :math:`c=\alpha-\alpha^*`,
        ``alpha`` the :math:`2n` variables :math:`(\alpha, \alpha^*)`, ``primal_objective``
        the epsilon-insensitive primal) plus ``task="regression"`` and ``epsilon``.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.lpnorm import lpmkl_svr_solve
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = X[:, 0] + 0.1 * rng.normal(size=40)
    >>> K = np.stack([np.outer(X[:, 0], X[:, 0]), np.outer(X[:, 1], X[:, 1])])
    >>> res = lpmkl_svr_solve(K, y, p=2.0, C=1.0, epsilon=0.1)
    >>> res.success, bool(res.weights[0] > res.weights[1])
    (True, True)
    """
    validate_params("lpmkl_svr_solve", {**_LPMKL_CONSTRAINTS, "epsilon": EPSILON_CONSTRAINT},
                    locals())
    return _lpmkl("lpmkl_svr_solve", K, y, epsilon, p=p, C=C, solver=solver, tol=tol,
                  max_iter=max_iter, svm_tol=svm_tol, callback=callback, verbose=verbose,
                  check_input=check_input, solver_options=solver_options)


@fill_doc
def sum_kernel_svr_solve(K, y, *, C=1.0, epsilon=0.1, svm_tol=1e-3, check_input=True,
                         svm_max_iter=None):
    r"""The epsilon-SVR on the unweighted sum of the kernels (the regression baseline).

    :func:`lpmkl_svr_solve` with ``p=inf`` (all weights 1), as :func:`sum_kernel_svm_solve`
    is :func:`lpmkl_solve` with ``p=inf``.

    Parameters
    ----------
    {K}
    {y_reg}
    C : float, default=1.0
        Penalty of the epsilon-insensitive loss. Must be > 0.
    {epsilon}
    {svm_tol}
    {check_input}
    {svm_max_iter}

    Returns
    -------
    result : MKLResult
        The :func:`lpmkl_svr_solve` result at ``p=inf``: ``weights`` all ones, ``gap`` 0,
        ``rigorous_gap`` (epsilon-insensitive primal minus dual) certifies the SVR.

    Examples
    --------
    >>> import numpy as np
    >>> from mklcore.lpnorm import sum_kernel_svr_solve
    >>> X = np.linspace(0, 1, 8)[:, None]; y = 2 * X[:, 0]
    >>> res = sum_kernel_svr_solve(np.stack([X @ X.T, np.exp(-(X - X.T) ** 2)]), y, C=10.0)
    >>> res.weights.tolist(), res.success
    ([1.0, 1.0], True)
    """
    validate_params("sum_kernel_svr_solve",
                    {**COMMON_CONSTRAINTS, "check_input": [bool], "epsilon": EPSILON_CONSTRAINT},
                    {"C": C, "svm_tol": svm_tol, "svm_max_iter": svm_max_iter,
                     "check_input": check_input, "epsilon": epsilon})
    return lpmkl_svr_solve(K, y, p=np.inf, C=C, epsilon=epsilon, svm_tol=svm_tol,
                           check_input=check_input, svm_max_iter=svm_max_iter)


for _f in (lpmkl_svr_solve, sum_kernel_svr_solve):
    fill_doc(_f, _SVR_DOC)


@fill_doc
class SumKernelSVR(BaseMKLRegressor):
    r"""Epsilon-SVR on the unweighted sum of a bank of kernels (the regression baseline).

    Parameters
    ----------
    {kernels}
    C : float, default=1.0
        Penalty of the epsilon-insensitive loss. Must be > 0.
    epsilon : float, default=0.1
        Width of the epsilon-insensitive tube (in the units of ``y``).
    {normalize}
    {svm_tol}
    {svm_max_iter}
    {check_input_fit}

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
        All ones (the sum kernel).
    {svr_fitted}
    objective_ : float
        SVR dual objective at the solution.
    gap_ : float
        Relative MKL duality gap (0: the weights are fixed).
    {fitted_run}

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from mklcore import SumKernelSVR
    >>> X, y = make_regression(n_samples=60, n_features=4, noise=1.0, random_state=0)
    >>> reg = SumKernelSVR(C=10.0, normalize="trace").fit(X, y / y.std())
    >>> reg.weights_.tolist()
    [1.0, 1.0]
    """

    _parameter_constraints = {**common_constraints("kernels", "C", "normalize", "svm_tol",
                                                   "svm_max_iter", "check_input"),
                              "epsilon": EPSILON_CONSTRAINT}
    _solver = staticmethod(sum_kernel_svr_solve)
    _sum_kernel = True

    def __init__(self, *, kernels=None, C=1.0, epsilon=0.1, normalize=None, svm_tol=1e-3,
                 svm_max_iter=None, check_input=True):
        self._store_params(locals())


@fill_doc
class LpMKLRegressor(BaseMKLRegressor):
    r"""lp-norm MKL for regression: an epsilon-SVR on :math:`\sum_m\theta_mK_m`.

    Kernel weights :math:`\theta\ge0`, :math:`\|\theta\|_p=1`, learnt jointly with the SVR
    (see :func:`lpmkl_svr_solve`; Kloft et al. 2009, problem (6), with the SVR loss).

    Parameters
    ----------
    {kernels}
    p : float, default=2.0
        Norm of the weight constraint, ``1 <= p <= inf``.
    C : float, default=1.0
        Penalty of the epsilon-insensitive loss. Must be > 0.
    epsilon : float, default=0.1
        Width of the epsilon-insensitive tube (in the units of ``y``).
    solver : {"auto", "newton", "cutting_plane", "analytic"}, default="auto"
        Weight update (see :func:`lpmkl_solve`).
    {normalize}
    tol : float, default=1e-5
        Relative duality gap at which to stop.
    {max_iter}
    {svm_tol}
    {verbose}
    {svm_max_iter}
    {check_input_fit}

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
        Kernel weights :math:`\theta` (:math:`\|\theta\|_p=1`).
    {svr_fitted}
    objective_ : float
        Final objective :math:`J(\theta)`.
    gap_ : float
        Final relative duality gap.
    {fitted_run}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_regression
    >>> from mklcore import LpMKLRegressor
    >>> X, y = make_regression(n_samples=60, n_features=4, noise=1.0, random_state=0)
    >>> reg = LpMKLRegressor(p=2.0, C=10.0, normalize="trace").fit(X, y / y.std())
    >>> reg.weights_.shape, round(float(np.linalg.norm(reg.weights_)), 6)
    ((2,), 1.0)
    """

    _parameter_constraints = {**BaseMKLClassifier._parameter_constraints,
                              "p": _LPMKL_CONSTRAINTS["p"], "solver": _LPMKL_CONSTRAINTS["solver"],
                              "epsilon": EPSILON_CONSTRAINT}
    _solver = staticmethod(lpmkl_svr_solve)

    def __init__(self, *, kernels=None, p=2.0, C=1.0, epsilon=0.1, solver="auto",
                 normalize=None, tol=1e-5, max_iter=1000, svm_tol=1e-3, verbose=0,
                 svm_max_iter=None, check_input=True):
        self._store_params(locals())
