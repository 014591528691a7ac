r"""SimpleMKL: l1-norm MKL by reduced-gradient descent (Rakotomamonjy et al., JMLR 2008).

Minimises :math:`J(d)`, the optimal SVM value at the combined kernel :math:`\sum_md_mK_m`,
over the simplex of kernel weights :math:`d`, following the reference MATLAB code
(``mklsvm.m``, ``mklsvmupdate.m``, Algorithm 1 of the paper) line by line: normalised
reduced gradient, descent direction, moves along it while the cost decreases, then a
golden-section line search, each cost evaluation being an SVM solved to ``svm_tol``. Runs
inside the shared wrapper loop of :mod:`mklcore.wrapper`. The line search evaluates the cost
on the line :math:`d+tD` through a :class:`~mklcore.wrapper.LineOracle`: the kernel at a
trial step is :math:`K_d+tK_D`, formed from two combined kernels in :math:`O(n^2)`, so only
the accepted point of an iteration reads the whole stack; the golden section reuses the inner
point it keeps instead of solving the SVM there again.
"""

import numpy as np

from ._base import BaseMKLClassifier, common_constraints, fill_doc
from ._validation import Interval, check_solver_inputs, validate_params
from .wrapper import LineOracle, WeightStep, run_wrapper

__all__ = ["simplemkl_solve", "SimpleMKLClassifier"]

_GOLD = (1.0 + np.sqrt(5.0)) / 2.0
_EPS = np.finfo(float).eps


def simplemkl_duality_gap(state):
    r"""SimpleMKL's duality gap ``(obj + max(normek) - sum(alpha)) / obj`` of ``mklsvm.m``.

    With :math:`J=\mathbf1^\top\alpha-d^\top S` this equals
    :math:`(\max_mS_m-d^\top S)/J`, the relative duality gap
    :math:`\Delta_{rel}=(\|S\|_{p^*}-\theta^\top S)/J` of :mod:`mklcore.wrapper` at p = 1.

    Parameters
    ----------
    state : WrapperState
        SVM solution at the current weights (from the wrapper loop's oracle).

    Returns
    -------
    gap : float
        The relative duality gap.
    """
    return (state.J + float(np.max(state.S)) - state.L) / state.J


class _SimpleMKLStep(WeightStep):
    """One outer iteration of SimpleMKL (``mklsvmupdate.m`` + the clean-up of ``mklsvm.m``)."""

    p = 1.0
    method = "simplemkl"
    label = "SimpleMKL"
    criterion_name = "duality gap"

    def __init__(self, *, gs_tol=0.1, step_cap=0.1, numerical_precision=1e-8,
                 zero_threshold=1e-12, zero_threshold_iters=20):
        self.gs_tol = gs_tol
        self.step_cap = step_cap
        self.eps_num = numerical_precision
        self.zero_threshold = zero_threshold
        self.zero_threshold_iters = zero_threshold_iters
        self.n_updates = 0
        self.n_line_search_evals = 0

    def init(self, n_kernels):  # mklsvm.m: Sigma = ones/nbkernel
        return np.full(n_kernels, 1.0 / n_kernels)

    def gap(self, state):
        return simplemkl_duality_gap(state)

    def _cost(self, line, t, warm, cached=()):
        """J at step ``t`` of the line: a point already evaluated there, or an SVM solve."""
        for point in cached:  # golden section: one of the two inner points is the last one's
            if point is not None and abs(point.t - t) <= 1e-12 * max(abs(t), _EPS):
                return point
        self.n_line_search_evals += 1
        return line(t, start=warm)

    def _direction(self, d, grad, mu, D=None):
        """Lines 2-3 (first call) and 10 (``D`` given) of ``mklsvmupdate.m``."""
        if D is None:
            D = -grad * ((d > 0) | (grad < 0))
        else:
            D = D * ((d > self.eps_num) | (D > 0))
        D[mu] = 0.0
        D[mu] = -D.sum()
        neg = D < 0
        step_max = float(np.min(-d[neg] / D[neg])) if neg.any() else 0.0
        return D, step_max

    def _update(self, state, oracle):
        """``mklsvmupdate.m``: ``(point, weights, line)`` of the new weights, or ``None``.

        The trial points are those of the reference code; each is an SVM on
        :math:`K_d+tK_D` (:class:`~mklcore.wrapper.LineOracle`), the golden section reuses
        the inner point it keeps.
        """
        d = state.theta.copy()
        grad = -state.S  # dJ/dd_m = -S_m(alpha*)
        cost_old = state.J
        norm = np.sqrt(grad @ grad)
        if norm == 0:
            return None
        g = grad / norm  # line 1
        mu = int(np.argmax(d))  # first index on ties
        D, step_max = self._direction(d, g - g[mu], mu)  # lines 2-3: reduced gradient
        delta_max = step_max
        if step_max <= 0:
            return None
        step_max = min(step_max, self.step_cap)  # line 4
        line = LineOracle(oracle, d, D)
        cost_min, cost_max = cost_old, 0.0  # line 5
        min_pt = max_pt = state
        while cost_max < cost_min:  # lines 6-12: follow D while the cost decreases
            max_pt = self._cost(line, step_max, min_pt)
            cost_max = max_pt.J
            if cost_max < cost_min:
                cost_min = cost_max
                d = line.weights(step_max)
                D, step_max = self._direction(d, None, mu, D)  # lines 10-12
                line.move(max_pt.t, D)
                min_pt = max_pt
                min_pt.t = 0.0  # the new anchor (its caches are rebuilt when used)
                delta_max = step_max
                cost_max = 0.0 if step_max > 0 else cost_max
        # line 13: golden-section search on [0, step_max] along D from d
        step_min = 0.0
        steps, points = [step_min, step_max], [min_pt, max_pt]
        costs = [cost_min, cost_max]
        best = int(np.argmin(costs))
        pt_l = pt_r = None
        while (step_max - step_min) > self.gs_tol * abs(delta_max) and step_max > _EPS:
            step_r = step_min + (step_max - step_min) / _GOLD
            pt_r = self._cost(line, step_r, min_pt, (pt_l, pt_r))
            step_l = step_min + (pt_r.t - step_min) / _GOLD
            pt_l = self._cost(line, step_l, pt_r, (pt_l,))
            steps = [step_min, pt_l.t, pt_r.t, step_max]
            costs = [cost_min, pt_l.J, pt_r.J, cost_max]
            points = [min_pt, pt_l, pt_r, max_pt]
            best = int(np.argmin(costs))
            if best <= 1:
                step_max, cost_max, max_pt = steps[best + 1], costs[best + 1], points[best + 1]
            else:
                step_min, cost_min, min_pt = steps[best - 1], costs[best - 1], points[best - 1]
        # line 14: accept the best point if it lowers the cost
        if costs[best] < cost_old:
            return points[best], line.weights(steps[best]), line
        return None

    def step(self, state, oracle):
        self.n_updates += 1
        d_old = state.theta
        found = self._update(state, oracle)
        d = d_old.copy() if found is None else found[1].copy()
        # mklsvm.m "Thresholding" during the first iterations
        if (self.zero_threshold != 0 and d.max() > self.zero_threshold
                and self.n_updates < self.zero_threshold_iters):
            d = d * (d > self.zero_threshold)
        d[d < self.eps_num] = 0.0  # "Numerical cleaning"
        d = d / d.sum()
        # mklsvm.m: refine the line search when the weights stall
        if np.max(np.abs(d - d_old)) < self.eps_num and self.gs_tol > 1e-8:
            self.gs_tol /= 10.0
        if found is None:
            # same alpha, cleaned weights (mklsvm.m recomputes the gradient from that alpha)
            return state if np.array_equal(d, d_old) else oracle.rescore(state, d)
        point, d_line, line = found
        # alpha solved at d_line, which the clean-up changes by less than numerical_precision
        return line.state(point, d, exact=bool(np.max(np.abs(d - d_line)) <= self.eps_num))

    def result_extras(self):
        return {"n_line_search_evals": self.n_line_search_evals}


_SIMPLEMKL_CONSTRAINTS = {
    **common_constraints("C", "tol", "max_iter", "svm_tol", "verbose", "callback"),
    "gs_tol": [Interval("real", 0, 1, closed="neither")],
    "step_cap": [Interval("real", 0, None, closed="neither")],
    "numerical_precision": [Interval("real", 0, 1e-2, closed="both")],
    "svm_backend": [str],
    "svm_max_iter": [Interval("int", 1, None), None],
}


@fill_doc
def simplemkl_solve(K, y, *, C=1.0, tol=1e-2, max_iter=1000, svm_tol=1e-3, callback=None,
                    verbose=0, check_input=True, gs_tol=0.1, step_cap=0.1,
                    numerical_precision=1e-8, svm_backend="libsvm", svm_max_iter=None):
    r"""Solve l1-norm MKL with SimpleMKL's reduced-gradient descent (Rakotomamonjy et al. 2008).

    Solves problem (6) of Kloft et al. (2009) with :math:`p=1` in SimpleMKL's form

    .. math::
        \min_{d\ge0,\ \sum_md_m=1}\ J(d),\qquad
        J(d)=\max_{0\le\alpha\le C,\ y^\top\alpha=0}\ \mathbf1^\top\alpha
        -\tfrac12\sum_md_m\alpha^\top Q_m\alpha ,

    with gradient :math:`\partial J/\partial d_m=-S_m(\alpha^*)` (Algorithm 1 of [1]_). Each
    cost evaluation of the line search is an SVM on :math:`K_d+tK_D` solved to ``svm_tol``
    (:class:`~mklcore.wrapper.LineOracle`), warm-started from the previous alpha with the
    ``"smo"`` backend.

    Parameters
    ----------
    {K}
    {y}
    {C}
    tol : float, default=1e-2
        Stop when SimpleMKL's duality gap ``(J + max_m S_m - 1'alpha) / J`` is at most
        ``tol`` (the reference default 0.01; it equals the relative duality gap
        :math:`\Delta_{rel}` of :func:`mklcore.lpnorm.lpmkl_solve` at p = 1). Kloft et al.
        set it to the relative gap reached by SILP for their timings.
    {max_iter}
    {svm_tol}
    {callback}
    {verbose}
    {check_input}
    gs_tol : float, default=0.1
        Golden-section stop: interval below ``gs_tol * step_max`` (``goldensearch_deltmax``).
    step_cap : float, default=0.1
        Cap on the first trial step (present in the reference code).
    numerical_precision : float, default=1e-8
        Weights below this are set to 0 (``option.numericalprecision``).
    svm_backend : str, default="libsvm"
        ``"libsvm"`` (scikit-learn's SVC on the combined kernel, no warm start), ``"smo"``
        (the warm-started :class:`~mklcore.svm.CachedSMO`; in the line search on the
        two-kernel stack :math:`(K_d, K_D)`, each evaluation starting from the alpha and
        caches of a previous point) or another backend of
        :func:`mklcore.svm.available_backends`.
    svm_max_iter : int, default=None
        Cap on the iterations of one SVM solve (each line-search evaluation included);
        ``None``: ``max(10**6, 100 n)``. Reaching it ends the run with status 2 and a
        ``ConvergenceWarning`` (huge C, unscaled features; see
        :func:`mklcore.wrapper.run_wrapper`).

    Returns
    -------
    result : MKLResult
        The keys of :func:`mklcore.wrapper.run_wrapper` (``weights`` = :math:`d` on the
        simplex, ``objective`` = :math:`J(d)`, ``gap`` = :math:`\Delta_{rel}`, equal to
        SimpleMKL's duality gap, ``dual_objective`` =
        :math:`D_1(\alpha)=\mathbf1^\top\alpha-\max_mS_m`, ``n_svm_calls`` counting the line
        search, ``method="simplemkl"``...) plus ``n_line_search_evals``.

    See Also
    --------
    silp_solve : the same problem by column generation.
    lpmkl_solve : lp-norm MKL.

    Notes
    -----
    Algorithm 1 of [1]_ as implemented in its reference code (``mklsvmupdate.m``): descent
    direction :math:`D_m=-(\nabla_m-\nabla_\mu)` on the free coordinates,
    :math:`D_\mu=-\sum_{m\ne\mu}D_m` with :math:`\mu=\arg\max_md_m`; maximal step capped at
    0.1; golden-section search; weights below 1e-12 zeroed during the first 20 iterations.

    References
    ----------
    .. [1] A. Rakotomamonjy, F. Bach, S. Canu, Y. Grandvalet. SimpleMKL. JMLR 9:2491-2521,
       2008.
    .. [2] M. Kloft, U. Brefeld, S. Sonnenburg, P. Laskov, K.-R. Müller, A. Zien. Efficient
       and Accurate lp-Norm Multiple Kernel Learning. NIPS 22, 2009.

    {simplex_solve_example}
    """
    validate_params("simplemkl_solve", _SIMPLEMKL_CONSTRAINTS, locals())
    K, y_pm = check_solver_inputs(K, y, "simplemkl_solve", check_input)
    step = _SimpleMKLStep(gs_tol=gs_tol, step_cap=step_cap,
                          numerical_precision=numerical_precision)
    return run_wrapper(K, y_pm, step, C=C, tol=tol, max_iter=max_iter, svm_tol=svm_tol,
                       callback=callback, verbose=int(verbose), svm_backend=svm_backend,
                       extras={"p": 1.0}, svm_max_iter=svm_max_iter)


@fill_doc
class SimpleMKLClassifier(BaseMKLClassifier):
    r"""SimpleMKL classifier: l1-norm MKL by reduced gradient (Rakotomamonjy et al., 2008).

    Kernel weights :math:`d` on the simplex and an SVM on :math:`\sum_md_mK_m` (see
    :func:`simplemkl_solve`). Kloft et al. (2009) use it as the wrapper baseline.

    Parameters
    ----------
    {kernels}
    {C}
    {normalize}
    tol : float, default=1e-2
        SimpleMKL's duality gap at which to stop (reference default 0.01).
    {max_iter}
    {svm_tol}
    {verbose}

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
        Kernel weights :math:`d` of SimpleMKL, summing to 1.
    {fitted_model}
    n_iter_ : int
        Number of outer iterations.
    converged_ : bool
        Whether the duality gap fell below ``tol``.
    objective_ : float
        Final objective :math:`J(d)`.
    gap_ : float
        Final relative duality gap (SimpleMKL's duality gap).
    {fitted_run}

    See Also
    --------
    simplemkl_solve : the solver on precomputed kernels.

    {simplex_example}
    """

    _solver = staticmethod(simplemkl_solve)

    def __init__(self, *, kernels=None, C=1.0, normalize=None, tol=1e-2, max_iter=1000,
                 svm_tol=1e-3, verbose=0):
        self._store_params(locals())
