r"""SimpleMKL: l1-norm MKL by reduced-gradient descent (Rakotomamonjy et al., JMLR 2008).

Minimises :math:`J(d)`, the optimal SVM value at the combined kernel :math:`\sum_md_mK_m`,
over the simplex of kernel weights :math:`d`, following the reference MATLAB code
(``mklsvm.m``, ``mklsvmupdate.m``, Algorithm 1 of the paper): normalised reduced gradient,
descent direction, moves along it while the cost decreases, then a line search, each cost
evaluation being an SVM solved to ``svm_tol``. Runs inside the shared wrapper loop of
:mod:`mklcore.wrapper`. The line search evaluates the cost on the line :math:`d+tD` through a
:class:`LineOracle`: the kernel at a trial step is :math:`K_d+tK_D`, formed
from two combined kernels in :math:`O(n^2)`, and every trial point also gives the slope
:math:`J'(t)=-\frac12c^\top K_Dc`. The default line search (``"derivative"``) uses that
slope; ``"golden"`` keeps the reference code's golden section.
"""

import itertools
import time

import numpy as np

from ._base import BaseMKLClassifier, BaseMKLRegressor, common_constraints, fill_doc
from ._validation import (Interval, Options, check_classification_inputs,
                          check_regression_inputs, validate_params)
from .lpnorm import EPSILON_CONSTRAINT
from .tasks import OneVsRestTask, RegressionTask
from .smo import StackSMO
from .svm import combine_kernels, kernel_quadratic_terms
from .wrapper import SVMIterationLimit, WeightStep, WrapperState, run_wrapper

__all__ = ["simplemkl_solve", "SimpleMKLClassifier", "simplemkl_svr_solve", "SimpleMKLRegressor",
           "LinePoint", "LineOracle", "StackLine"]

_GOLD = (1.0 + np.sqrt(5.0)) / 2.0
_EPS = np.finfo(float).eps


# --------------------------------------------------------------------------------------
# the SVM along a line of kernel weights (the line search's cost oracle)
# --------------------------------------------------------------------------------------

class LinePoint:
    r"""The SVM solution at one point :math:`\theta+tD` of a :class:`LineOracle`.

    Parameters
    ----------
    t : float
        Step along the direction.
    alpha : ndarray of shape (n,)
        Unsigned dual variables.
    intercept : float
        Bias of the SVM.
    decision : ndarray of shape (n,)
        :math:`f=K_{\theta+tD}(\alpha\circ y)+b` on the training points.
    q : float
        :math:`(\alpha\circ y)^\top K_{\theta+tD}(\alpha\circ y)`.
    q_direction : float
        :math:`(\alpha\circ y)^\top K_D(\alpha\circ y)`.
    H : ndarray of shape (2, n) or None
        Caches :math:`(K_\theta c, K_Dc)`, :math:`c=\alpha\circ y` (``"smo"`` engine).
    anchor : int
        Which anchor (of which line) the caches belong to.

    Attributes
    ----------
    J : float
        :math:`\mathbf1^\top\alpha-\frac12q`, the SVM dual value at :math:`\theta+tD`.
    slope : float
        :math:`J'(t)=-\frac12(\alpha\circ y)^\top K_D(\alpha\circ y)`, the derivative of
        :math:`t\mapsto J(\theta+tD)` (:math:`\partial J/\partial\theta_m=-S_m`, Danskin).
    S : ndarray of shape (n_kernels,) or None
        The per-kernel terms :math:`S_m=\frac12\alpha^\top Q_m\alpha` computed so far
        (``nan`` where not yet computed; see :meth:`LineOracle.kernel_terms`).
    """

    __slots__ = ("t", "alpha", "intercept", "decision", "J", "slope", "H", "anchor", "S")

    def __init__(self, t, alpha, intercept, decision, q, q_direction, H=None, anchor=0):
        self.t, self.alpha = float(t), alpha
        self.intercept = (float(intercept) if np.ndim(intercept) == 0
                          else np.asarray(intercept, dtype=float))
        self.decision, self.H, self.anchor = decision, H, anchor
        self.J = float(np.sum(alpha)) - 0.5 * float(q)
        self.slope = -0.5 * float(q_direction)
        self.S = None


def _kernel_sum(K, weights, out, base=None):
    r""":math:`B+\sum_mw_mK_m` into ``out`` (:math:`B` = ``base`` or 0)."""
    if base is out:
        base = base.copy()
    combine_kernels(K, weights, out=out)
    if base is not None:
        out += base
    return out


class LineOracle:
    r"""The SVM along a line :math:`\theta+tD` of kernel weights, at :math:`O(n^2)` a point.

    For the line searches of descent methods (SimpleMKL): the two combined kernels
    :math:`K_\theta=\sum_m\theta_mK_m` and :math:`K_D=\sum_mD_mK_m` are formed once, so the
    kernel at a trial step is :math:`K_\theta+tK_D` and a trial point never touches the
    stack of M kernels; only the accepted point pays for its per-kernel terms :math:`S_m`
    (:meth:`state`). Each evaluation solves the SVM with the oracle's engine, its tolerance
    and its iteration cap (a solve that reaches it raises :class:`SVMIterationLimit`):
    LIBSVM on :math:`K_\theta+tK_D`, or for ``"smo"`` the warm-started
    :class:`~mklcore.smo.StackSMO` on the two-kernel stack :math:`(K_\theta, K_D)` at weights
    :math:`(1, t)`, started from a previous point's alpha and gradient caches. Every point
    also carries the slope :math:`J'(t)` (:attr:`LinePoint.slope`), at :math:`O(n)` extra cost
    with ``"smo"`` (the cache :math:`K_Dc`) and :math:`O(n\,n_{SV})` with LIBSVM. Calls, SVM
    iterations and time are counted in the oracle.

    Parameters
    ----------
    oracle : SVMOracle
        The loop's oracle (kernels, labels, C, engine, counters).
    theta : array-like of shape (n_kernels,)
        Anchor of the line.
    direction : array-like of shape (n_kernels,)
        Direction :math:`D`.
    kernel : ndarray of shape (n, n), default=None
        :math:`K_\theta`, if known (e.g. from :meth:`kernel` of the previous line); else it is
        formed from the stack. A C-contiguous float64 array is taken over, not copied (the
        line changes it in :meth:`move`).
    direction_kernel : ndarray of shape (n, n), default=None
        :math:`K_D`, if known (e.g. the chord :math:`K_{\theta'}-K_\theta` between two
        points); else it is formed from the stack. Taken over like ``kernel``.
    buffers : list, default=None
        Spare (n, n) float64 arrays, shared by the lines of one search: the line takes its
        new arrays from it (instead of allocating) and :meth:`recycle` gives them back.

    Attributes
    ----------
    stack : list of two ndarrays of shape (n, n)
        :math:`K_\theta` and :math:`K_D`.
    """

    _anchors = itertools.count()  # anchors are unique across lines (for the caches)

    #: most spare arrays a buffer list keeps (see :meth:`recycle`)
    max_spare = 4

    def __init__(self, oracle, theta, direction, kernel=None, direction_kernel=None,
                 buffers=None):
        self.oracle = oracle
        self.buffers = buffers
        K = oracle.K
        self.theta = np.array(theta, dtype=float)
        self.direction = np.array(direction, dtype=float)
        self.stack = []
        for given, weights in ((kernel, self.theta), (direction_kernel, self.direction)):
            if given is None:
                given = _kernel_sum(K, weights, self._new_array())
            self.stack.append(np.require(given, dtype=np.float64, requirements="C"))
        self.anchor = next(self._anchors)
        self._smo = None
        self._buffer = None

    @staticmethod
    def solved_kernel(oracle, theta):
        r"""A copy of the combined kernel of the oracle's last LIBSVM-type solve, if that
        solve was at ``theta`` (else ``None``): the anchor kernel of a line from the weights
        the loop's oracle just solved at, without a pass over the stack."""
        last, buffer = oracle.last, oracle.kernel_buffer
        theta = np.asarray(theta, dtype=float)
        if (oracle.backend == "smo" or last is None or buffer is None
                or not np.array_equal(last.theta, theta)):
            return None
        K = oracle.K
        n = K.shape[1]
        idx = np.linspace(0, n - 1, min(n, 8)).astype(int)  # check a few entries
        expected = np.einsum("m,mij->ij", theta, K[:, idx][:, :, idx])
        if not np.allclose(buffer[np.ix_(idx, idx)], expected, rtol=1e-12, atol=1e-12):
            return None
        return buffer.copy()

    def move(self, t, direction):
        r"""Re-anchor the line at :math:`\max(\theta+tD, 0)` with a new direction.

        Costs :math:`O(n^2)` per weight clipped at 0 and per changed direction coefficient.

        Parameters
        ----------
        t : float
            Step to the new anchor.
        direction : array-like of shape (n_kernels,)
            The new direction.
        """
        K = self.oracle.K
        raw = self.theta + t * self.direction
        self.stack[0] += t * self.stack[1]
        for m in np.flatnonzero(raw < 0):  # clipped round-off
            self.stack[0] -= raw[m] * K[m]
        self.theta = np.maximum(raw, 0.0)
        direction = np.asarray(direction, dtype=float)
        delta = direction - self.direction
        changed = np.flatnonzero(delta)
        if changed.size > K.shape[0] // 3:
            combine_kernels(K, direction, out=self.stack[1])
        else:
            for m in changed:
                self.stack[1] += delta[m] * K[m]
        self.direction = direction.copy()
        self.anchor = next(self._anchors)
        self._smo = None

    def weights(self, t):
        r"""The weights :math:`\max(\theta+tD, 0)` at step ``t``."""
        return np.maximum(self.theta + t * self.direction, 0.0)

    def kernel(self, t, theta, out=None):
        r"""The combined kernel :math:`K_{\theta'}` at weights near the point at step ``t``.

        For the next line's anchor: ``theta`` is the point's weights :math:`\theta+tD` up to a
        rescaling and a few changed coordinates (weights zeroed by a clean-up), so
        :math:`K_{\theta'}=a(K_\theta+tK_D)+\sum_{m\in\text{changed}}\delta_mK_m` costs
        :math:`O(n^2)` per changed weight instead of a pass over the stack (which it falls
        back to when more than a third of the weights changed). Changes below
        :math:`10^{-13}\max_m\theta'_m` are round-off and ignored.

        Parameters
        ----------
        t : float
        theta : array-like of shape (n_kernels,)
        out : ndarray of shape (n, n), default=None
            Output buffer (float64, C-contiguous; e.g. from :meth:`release_buffer`).

        Returns
        -------
        K_theta : ndarray of shape (n, n)
        """
        K = self.oracle.K
        theta = np.asarray(theta, dtype=float)
        raw = self.theta + t * self.direction
        j = int(np.argmax(theta))
        scale = theta[j] / raw[j] if raw[j] > 0 else 0.0
        delta = theta - scale * raw
        changed = np.flatnonzero(np.abs(delta) > 1e-13 * theta[j])
        if scale <= 0 or changed.size > K.shape[0] // 3:
            return combine_kernels(K, theta, out=out)
        out = np.multiply(self.stack[1], t * scale, out=out)
        out += scale * self.stack[0] if scale != 1.0 else self.stack[0]
        for m in changed:
            out += delta[m] * K[m]
        return out

    def release_buffer(self):
        """Hand over the line's scratch buffer (the kernel LIBSVM last trained on; or None),
        e.g. as the ``out`` of :meth:`kernel` for the next line."""
        buffer, self._buffer = self._buffer, None
        return buffer

    def chord(self, t, theta):
        r"""The line from the point at step ``t`` to the weights ``theta``.

        Anchored at :math:`\theta_t=\max(\theta+tD,0)` with direction
        :math:`\theta'-\theta_t`, so that step 1 is ``theta``. Its kernels cost :math:`O(n^2)`
        per non-zero weight of ``theta`` or per changed weight, whichever are fewer (one pass
        over the stack at most).

        Parameters
        ----------
        t : float
            Step of the chord's start on this line.
        theta : array-like of shape (n_kernels,)
            The chord's end.

        Returns
        -------
        line : LineOracle
        """
        start = self.weights(t)
        theta = np.asarray(theta, dtype=float)
        delta = theta - start
        K_start = self.kernel(t, start, out=self.release_buffer())
        K_end = self._new_array()
        if np.count_nonzero(theta) <= np.count_nonzero(delta):
            _kernel_sum(self.oracle.K, theta, K_end)
        else:
            _kernel_sum(self.oracle.K, delta, K_end, base=K_start)
        K_end -= K_start
        return LineOracle(self.oracle, start, delta, kernel=K_start, direction_kernel=K_end,
                          buffers=self.buffers)

    def _new_array(self):
        """An (n, n) array from the spare buffers, or a new one."""
        if self.buffers:
            return self.buffers.pop()
        n = self.oracle.K.shape[1]
        return np.empty((n, n))

    def recycle(self):
        """Give the line's kernels and scratch buffer to its buffer list (at most
        :attr:`max_spare` are kept); the line must not be used afterwards."""
        if self.buffers is None:
            return
        for array in (*self.stack, self._buffer):
            if array is not None and len(self.buffers) < self.max_spare:
                self.buffers.append(array)
        self.stack, self._buffer, self._smo = [], None, None

    def slope(self, point):
        r"""The slope :math:`-\frac12c^\top K_Dc`, :math:`c=\alpha\circ y`, of the line's
        current direction at a point's (:class:`LinePoint` or :class:`WrapperState`) alpha."""
        coef = point.alpha * self.oracle.y
        sv = np.flatnonzero(coef)
        return -0.5 * float(coef[sv] @ (self.stack[1][sv] @ coef))  # rows sv of K_D c

    def __call__(self, t, start=None, *, warm=False):
        """The SVM at step ``t``, warm-started from ``start`` (a :class:`LinePoint` or a
        :class:`WrapperState`; ``"smo"`` or ``warm=True`` only).

        Parameters
        ----------
        t : float
        start : LinePoint or WrapperState, default=None
        warm : bool, default=False
            Solve with the warm-started :class:`~mklcore.smo.StackSMO` whatever the oracle's
            engine: when the SVM's dual solution is not unique, the solution reached from
            ``start`` is the one nearest it.

        Returns
        -------
        point : LinePoint
        """
        o = self.oracle
        y = o.y
        n = y.shape[0]
        t0 = time.perf_counter()
        if o.backend == "smo" or warm:
            w = np.array([1.0, float(t)])
            if self._smo is None:
                self._smo = StackSMO(np.stack(self.stack), y, o.C)
            if start is None:
                alpha0, H = np.zeros(n), np.zeros((2, n))
            elif (isinstance(start, LinePoint) and start.anchor == self.anchor
                  and start.H is not None):
                alpha0, H = start.alpha, start.H.copy()
            else:
                alpha0 = start.alpha
                sv = np.flatnonzero(alpha0)
                H = np.array([k[:, sv] @ (alpha0[sv] * y[sv]) for k in self.stack])
            alpha, H, b, n_iter, converged = self._smo.solve(w, alpha0, H, o.svm_tol,
                                                             o.svm_max_iter)
            o.n_smo_iter += n_iter
            capped = not converged
            g = w @ H
            coef = alpha * y
            point = LinePoint(t, alpha, b, g + b, g @ coef, H[1] @ coef, H, self.anchor)
        else:
            if self._buffer is None:
                self._buffer = self._new_array()
            K_t = np.multiply(self.stack[1], float(t), out=self._buffer)
            K_t += self.stack[0]
            res, capped = o.solve_combined(K_t, None, K_t, o.svm_tol)
            coef = res.dual_coef
            sv = np.flatnonzero(coef)
            q_dir = float(coef[sv] @ (self.stack[1][sv] @ coef))  # rows sv of K_D c
            point = LinePoint(t, res.alpha, res.intercept, res.decision_train, res.q[0],
                              q_dir, anchor=self.anchor)
        o.svm_time += time.perf_counter() - t0
        o.n_calls += 1
        if capped:
            raise o.limit_error()
        return point

    def kernel_terms(self, point, index=None):
        r"""Per-kernel terms :math:`S_m=\frac12c^\top K_mc`, :math:`c=\alpha\circ y`, of a
        point, computed once and kept in :attr:`LinePoint.S`.

        The slope along another direction :math:`D'` is :math:`-\sum_mD'_mS_m`; a term costs
        :math:`O(n^2)`, all of them one pass over the stack.

        Parameters
        ----------
        point : LinePoint
        index : array-like of int, default=None
            The kernels wanted; ``None``: all.

        Returns
        -------
        S : ndarray
            :math:`S_m` for the kernels ``index`` (all kernels if ``None``).
        """
        K = self.oracle.K
        if point.S is None:
            point.S = np.full(K.shape[0], np.nan)
        wanted = np.arange(K.shape[0]) if index is None else np.asarray(index, dtype=int)
        missing = wanted[np.isnan(point.S[wanted])]
        if missing.size:
            coef = point.alpha * self.oracle.y
            if 2 * missing.size > K.shape[0]:
                point.S[:] = 0.5 * kernel_quadratic_terms(K, coef)
            else:
                for m in missing:
                    point.S[m] = max(0.5 * float(coef @ (K[m] @ coef)), 0.0)
        return point.S[wanted]

    def state(self, point, theta, *, exact=True):
        r"""The :class:`WrapperState` of a point, with its per-kernel terms :math:`S_m`.

        Parameters
        ----------
        point : LinePoint
        theta : array-like of shape (n_kernels,)
            The weights to report: those of the point, or the same up to a clean-up of
            negligible weights.
        exact : bool, default=True
            Whether alpha counts as solved at ``theta``.

        Returns
        -------
        state : WrapperState
            Its primal objective uses the point's decision values.
        """
        o = self.oracle
        coef = point.alpha * o.y
        S = self.kernel_terms(point)
        theta = np.asarray(theta, dtype=float)
        hinge = np.maximum(0.0, 1.0 - o.y * point.decision).sum()
        primal = float(theta @ S) + o.C * float(hinge)
        return WrapperState(theta, point.alpha, coef, point.intercept, S, o.p,
                            primal_objective=primal, exact=exact)


class StackLine:
    r"""The SVM along a line :math:`\theta+tD` on the stack itself (the ``"smo"`` engine).

    The interface of :class:`LineOracle` without its two dense kernels: a point at step ``t``
    is an SVM at weights :math:`\max(\theta+tD,0)` solved by the oracle's
    :class:`~mklcore.smo.StackSMO` (rows of the combined kernel computed when SMO touches
    them), warm-started from a previous point's alpha and caches
    :math:`H_m=K_m(\alpha\circ y)`; the caches give every point all its per-kernel terms
    :math:`S_m=\frac12c^\top H_m` and its slope along any direction at :math:`O(Mn)`.

    Parameters
    ----------
    oracle : SVMOracle
        The loop's oracle (kernels, labels, C, counters).
    theta, direction : array-like of shape (n_kernels,)
        Anchor and direction of the line.
    **_ignored
        The dense-kernel arguments of :class:`LineOracle` (unused).
    """

    _anchors = itertools.count()

    def __init__(self, oracle, theta, direction, **_ignored):
        self.oracle = oracle
        self.theta = np.array(theta, dtype=float)
        self.direction = np.array(direction, dtype=float)
        self.anchor = next(self._anchors)

    def weights(self, t):
        r"""The weights :math:`\max(\theta+tD, 0)` at step ``t``."""
        return np.maximum(self.theta + t * self.direction, 0.0)

    def _caches(self, start):
        """Alpha and caches H of a starting point (computed from its support if missing)."""
        o = self.oracle
        n_kernels, n = o.K.shape[0], o.K.shape[1]
        if start is None:
            return np.zeros(n), np.zeros((n_kernels, n))
        if getattr(start, "H", None) is not None and start.H.shape == (n_kernels, n):
            return start.alpha, start.H.copy()
        from .loops import stack_update

        coef = start.alpha * o.y
        H = np.zeros((n_kernels, n))
        stack_update(o.engine().K, coef, np.flatnonzero(coef).astype(np.int64), H)
        return start.alpha, H

    def __call__(self, t, start=None, *, warm=False):
        r"""The SVM at step ``t``, warm-started from ``start`` (a :class:`LinePoint` or a
        :class:`WrapperState`); a :class:`LinePoint` with its terms :math:`S_m`."""
        o = self.oracle
        t0 = time.perf_counter()
        w = self.weights(t)
        if o.task is not None:  # another dual problem (mklcore.tasks): the oracle's solve
            state, capped = o.solve_task(w, start, o.svm_tol, None)
            point = LinePoint(t, state.alpha, state.intercept, None, 2.0 * float(w @ state.S),
                              2.0 * float(self.direction @ state.S), state.H, self.anchor)
            point.J, point.S = state.J, state.S
            o.svm_time += time.perf_counter() - t0
            o.n_calls += 1
            if capped:
                raise o.limit_error()
            return point
        alpha0, H = self._caches(start)
        alpha, H, b, n_iter, converged = o.engine().solve(w, alpha0, H, o.svm_tol,
                                                             o.svm_max_iter)
        o.n_smo_iter += n_iter
        coef = alpha * o.y
        q = np.maximum(H @ coef, 0.0)
        point = LinePoint(t, alpha, b, w @ H + b, float(w @ q), float(self.direction @ q),
                          H, self.anchor)
        point.S = 0.5 * q
        o.svm_time += time.perf_counter() - t0
        o.n_calls += 1
        if not converged:
            raise o.limit_error()
        return point

    def kernel_terms(self, point, index=None):
        r"""Per-kernel terms :math:`S_m` of a point (all of them known)."""
        S = point.S
        return S if index is None else S[np.asarray(index)]

    def slope(self, point):
        r""":math:`-D^\top S` of a point along the line's current direction."""
        return -float(self.direction @ point.S)

    def move(self, t, direction):
        r"""Re-anchor at :math:`\max(\theta+tD, 0)` with a new direction."""
        self.theta = self.weights(t)
        self.direction = np.array(direction, dtype=float)
        self.anchor = next(self._anchors)

    def chord(self, t, theta):
        """The line from the point at step ``t`` to ``theta`` (step 1 is ``theta``)."""
        start = self.weights(t)
        return StackLine(self.oracle, start, np.asarray(theta, dtype=float) - start)

    def kernel(self, t, theta, out=None):
        """No dense kernel: None."""
        return None

    def release_buffer(self):
        """No buffer: None."""
        return None

    def recycle(self):
        """Nothing to give back."""

    def state(self, point, theta, *, exact=True):
        """The :class:`WrapperState` of a point at ``theta`` (see :meth:`LineOracle.state`)."""
        o = self.oracle
        theta = np.asarray(theta, dtype=float)
        if o.task is not None:
            return o.task_state(theta, point.alpha, point.H, point.intercept, exact=exact)
        S = point.S
        hinge = np.maximum(0.0, 1.0 - o.y * point.decision).sum()
        primal = float(theta @ S) + o.C * float(hinge)
        return WrapperState(theta, point.alpha, point.alpha * o.y, point.intercept, S, o.p,
                            primal_objective=primal, exact=exact, H=point.H)


# --------------------------------------------------------------------------------------
# the reduced-gradient step
# --------------------------------------------------------------------------------------

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
    if state.J <= 0:  # an empty SVM (alpha = 0): nothing certified
        return np.inf
    return (state.J + float(np.max(state.S)) - state.L) / state.J


def _cubic_min(lo, hi):
    r"""Minimiser of the cubic through :math:`(t, J, J')` at ``lo`` and ``hi`` (Nocedal &
    Wright 2006, eq. (3.59)), kept in the middle 80% of the bracket; the secant root of
    :math:`J'` or the midpoint when the cubic has no minimiser there."""
    (a, fa, ga), (b, fb, gb) = lo[:3], hi[:3]
    width = b - a
    d1 = ga + gb - 3.0 * (fb - fa) / width
    disc = d1 * d1 - ga * gb
    if disc >= 0 and (gb - ga + 2.0 * np.sqrt(disc)) != 0:
        d2 = np.sqrt(disc)
        t = b - width * (gb + d2 - d1) / (gb - ga + 2.0 * d2)
    elif gb > ga:
        t = a - ga * width / (gb - ga)
    else:
        t = a + 0.5 * width
    if not np.isfinite(t):
        t = a + 0.5 * width
    return float(min(max(t, a + 0.1 * width), b - 0.1 * width))


class _SimpleMKLStep(WeightStep):
    """One outer iteration of SimpleMKL (``mklsvmupdate.m`` + the clean-up of ``mklsvm.m``)."""

    p = 1.0
    method = "simplemkl"
    label = "SimpleMKL"
    criterion_name = "duality gap"
    #: most faces the derivative line search passes without an SVM (the choice is measured in
    #: ``benchmarks/README.md``)
    max_faces_skipped = 32

    def __init__(self, *, gs_tol=0.1, step_cap=0.1, numerical_precision=1e-8,
                 zero_threshold=1e-12, zero_threshold_iters=20, line_search="derivative"):
        self.gs_tol = gs_tol
        self.step_cap = step_cap
        self.eps_num = numerical_precision
        self.zero_threshold = zero_threshold
        self.zero_threshold_iters = zero_threshold_iters
        self.line_search = line_search
        self.n_updates = 0
        self.n_line_search_evals = 0
        self.n_reselected = 0
        self._kernel = None  # (weights, combined kernel) of the last accepted point
        self._trials = []  # (weights, point) of this iteration's line-search evaluations
        self._line0 = None  # this iteration's first line, anchored at the current weights
        self._lines = []  # this iteration's lines, recycled at its end
        self._buffers = []  # their spare (n, n) arrays, for the next lines

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
        point = line(t, start=warm)
        self._trials.append((line.weights(t), point))
        return point

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
        """``mklsvmupdate.m``: ``(point, line)``, the accepted point (``None`` if no trial
        point lowers the cost) and the line searched (``None`` if there is no descent
        direction)."""
        d = state.theta.copy()
        grad = -state.S  # dJ/dd_m = -S_m(alpha*)
        norm = np.sqrt(grad @ grad)
        if norm == 0:
            return None, None
        g = grad / norm  # line 1
        mu = int(np.argmax(d))  # first index on ties
        D, step_max = self._direction(d, g - g[mu], mu)  # lines 2-3: reduced gradient
        if step_max <= 0:
            return None, None
        kernel = None
        if self._kernel is not None and np.array_equal(self._kernel[0], d):
            kernel = self._kernel[1]
        elif oracle.last is state:  # the first line: the loop's SVM at d formed K_d
            kernel = LineOracle.solved_kernel(oracle, d)
        self._kernel = None
        Line = StackLine if oracle.backend == "smo" else LineOracle
        line = Line(oracle, d, D, kernel=kernel, buffers=self._buffers)
        self._line0 = line
        self._lines.append(line)
        search = self._golden if self.line_search == "golden" else self._derivative
        point, line = search(line, state, D, mu, step_max)
        # line 14: accept the best point if it lowers the cost
        return (point if point is not None and point.J < state.J else None), line

    def _follow(self, line, t, D, mu):
        """Lines 9-12: re-anchor the line at step ``t`` (a weight reached 0), new direction.

        Returns the new direction and its maximal step."""
        D, step_max = self._direction(line.weights(t), None, mu, D)
        line.move(t, D)
        return D, step_max

    def _golden(self, line, state, D, mu, step_max):
        """Lines 4-13 of ``mklsvmupdate.m``: descend to the faces, then the golden section.

        The trial points are those of the reference code; the golden section reuses the
        inner point it keeps."""
        delta_max = step_max
        step_max = min(step_max, self.step_cap)  # line 4
        cost_min, cost_max = state.J, 0.0  # line 5
        min_pt = max_pt = state
        while cost_max < cost_min:  # lines 6-12: follow D while the cost decreases
            max_pt = self._cost(line, step_max, min_pt)
            cost_max = max_pt.J
            if cost_max < cost_min:
                cost_min = cost_max
                D, step_max = self._follow(line, max_pt.t, D, mu)
                max_pt.t = 0.0  # the new anchor (its caches are rebuilt when used)
                min_pt = max_pt
                delta_max = step_max
                cost_max = 0.0 if step_max > 0 else cost_max
        # line 13: golden-section search on [0, step_max] along D from d
        step_min = 0.0
        points, costs = [min_pt, max_pt], [cost_min, cost_max]
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
        best = points[best]
        return (None if best is state else best), line

    def _derivative(self, line, state, D, mu, step_max):
        r"""Line search on the slope :math:`J'(t)=-\frac12c^\top K_Dc` (see Notes of
        :func:`simplemkl_solve`): ``(point, line)``, the best point found (or ``None``) and
        the line it lies on.

        Follows :math:`D` to the faces as the reference code does while the cost decreases,
        but solves no SVM at a face while the next segment still descends for the last alpha
        solved; extrapolates past the capped first step while the slope is negative; then
        refines the bracket ``[lo, hi]`` (:math:`J'(lo)<0`, and :math:`J'(hi)\ge0` or
        :math:`J(hi)\ge J(lo)`) by safeguarded cubic interpolation until :math:`|J'|\le`
        ``gs_tol`` :math:`|J'(0)|` or the bracket is below ``gs_tol`` times its first
        width. Faces passed without an SVM are bracketed on the chord from the last solved
        point (along which :math:`J` is convex)."""
        slope0 = -float(state.S @ D)  # J'(0) = sum_m D_m dJ/dd_m
        if not slope0 < 0:
            return None, line
        width = step_max
        t_hi = min(step_max, self.step_cap)
        lo = (0.0, state.J, slope0, state)  # (t, J, J', point)
        best = None
        while True:  # lines 6-12 with the slope: follow D while the cost decreases
            pt = self._cost(line, t_hi, lo[3])
            if not (pt.J < lo[1] and pt.slope < 0):
                hi = (pt.t, pt.J, pt.slope, pt)
                break
            best = pt
            if t_hi < step_max:  # capped first step: extrapolate on the slopes
                t_new = t_hi - pt.slope * (t_hi - lo[0]) / (pt.slope - lo[2]) \
                    if pt.slope > lo[2] else np.inf
                lo = (t_hi, pt.J, pt.slope, pt)
                t_hi = min(step_max, max(t_new, 1.5 * t_hi))
                continue
            # pass the faces while pt's alpha descends along the next segment; the slope
            # -S.D' of pt along a segment's direction D' needs S_m only where D' changes
            theta_pt, n_faces = line.weights(t_hi), 0
            theta, slope = theta_pt, pt.slope
            while True:
                D_new, step_max = self._direction(theta, None, mu, D)
                changed = np.flatnonzero(D_new != D)
                slope -= float(line.kernel_terms(pt, changed) @ (D_new - D)[changed])
                D = D_new
                n_faces += 1
                if not (step_max > 0 and n_faces <= self.max_faces_skipped and slope < 0):
                    break
                theta = np.maximum(theta + step_max * D, 0.0)
            if n_faces == 1:  # no face passed: pt is the end
                return best, line
            chord = line.chord(pt.t, theta)  # from pt to the last face passed
            self._lines.append(chord)
            face = self._cost(chord, 1.0, pt)
            pt.t = 0.0
            if face.J < pt.J and step_max > 0:
                support = np.flatnonzero(D)
                slope = -float(chord.kernel_terms(face, support) @ D[support])
                if slope < 0:  # the face descends along D: search on from there
                    line = type(line)(line.oracle, theta, D, kernel=chord.kernel(1.0, theta),
                                      buffers=self._buffers)
                    self._lines.append(line)
                    face.t, face.slope = 0.0, slope
                    best, lo, t_hi = face, (0.0, face.J, slope, face), step_max
                    continue
            # bracket on the chord from pt to the face
            line, width = chord, 1.0
            lo = (0.0, pt.J, line.slope(pt), pt)
            hi = (1.0, face.J, face.slope, face)
            if hi[2] <= 0:  # convex along the chord: the face is its minimum
                return (face if face.J < pt.J else best), line
            break
        if hi[1] < lo[1]:
            best = hi[3]
        while (best is None or abs(best.slope) > self.gs_tol * abs(slope0)) \
                and (hi[0] - lo[0]) > self.gs_tol * abs(width) and hi[0] - lo[0] > _EPS:
            t = _cubic_min(lo, hi)
            pt = self._cost(line, t, lo[3] if t - lo[0] <= hi[0] - t else hi[3])
            if best is None or pt.J < best.J:
                best = pt
            if pt.J < lo[1] and pt.slope < 0:
                lo = (pt.t, pt.J, pt.slope, pt)
            else:
                hi = (pt.t, pt.J, pt.slope, pt)
        return best, line

    def _reselect(self, state):
        r"""Another SVM solution at the weights of ``state`` when the line search found no
        descent: the SVM re-solved at :math:`d` by SMO warm-started from the alpha of the
        trial point nearest :math:`d`. Returned (as a :class:`WrapperState`) only if its
        duality gap is smaller, else ``None``.

        At a vertex of the simplex or on a face, the kernel :math:`K_d` may be singular and
        the SVM's dual solution at :math:`d` not unique; :math:`J` is then not differentiable
        at :math:`d`, and :math:`-S(\alpha)` of an optimal alpha is one subgradient among
        others. The reduced gradient of the alpha the SVM returned can point away from an
        optimal :math:`d` (no trial point lowers :math:`J`), and its gap
        :math:`(\max_mS_m-d^\top S)/J` stays above ``tol``: without this the run repeats the
        same iterate until ``max_iter``. A trial point just past :math:`d` has an alpha near
        the one of the one-sided derivative of :math:`J` along :math:`D` (an optimal alpha
        at :math:`d` along which :math:`J` does not decrease): the SVM warm-started from it
        stays near it, a candidate for the certificate (on the heart data of the benchmark
        notebook it certifies the optimal vertex at once)."""
        line, d = self._line0, state.theta
        if not self._trials or line is None or not np.array_equal(line.theta, d):
            return None
        _, nearest = min(self._trials, key=lambda wp: float(np.abs(wp[0] - d).sum()))
        try:
            point = line(0.0, start=nearest, warm=True)
        except SVMIterationLimit:  # the SMO did not converge from there: keep the state
            return None
        new = line.state(point, d)
        if not simplemkl_duality_gap(new) < simplemkl_duality_gap(state):
            return None
        self.n_reselected += 1
        return new

    def step(self, state, oracle):
        try:
            return self._step(state, oracle)
        finally:  # the lines' arrays serve the next iteration's lines
            for line in self._lines:
                line.recycle()
            self._lines, self._line0, self._trials = [], None, []

    def _step(self, state, oracle):
        self.n_updates += 1
        d_old = state.theta
        point, line = self._update(state, oracle)
        d = d_old.copy() if point is None else line.weights(point.t)
        # mklsvm.m "Thresholding" during the first iterations
        if (self.zero_threshold != 0 and d.max() > self.zero_threshold
                and self.n_updates < self.zero_threshold_iters):
            d = d * (d > self.zero_threshold)
        d[d < self.eps_num] = 0.0  # "Numerical cleaning"
        d = d / d.sum()
        # mklsvm.m: refine the line search when the weights stall
        if np.max(np.abs(d - d_old)) < self.eps_num and self.gs_tol > 1e-8:
            self.gs_tol /= 10.0
        if line is not None:  # the next line's anchor kernel, without a pass over the stack
            self._kernel = (d, line.kernel(0.0 if point is None else point.t, d,
                                           out=line.release_buffer()))
        if point is None:
            if not np.array_equal(d, d_old):
                # same alpha, cleaned weights (mklsvm.m recomputes the gradient from that alpha)
                return oracle.rescore(state, d)
            return self._reselect(state) or state
        d_line = line.weights(point.t)
        # alpha solved at d_line, which the clean-up changes by less than numerical_precision
        return line.state(point, d, exact=bool(np.max(np.abs(d - d_line)) <= self.eps_num))

    def result_extras(self):
        return {"n_line_search_evals": self.n_line_search_evals,
                "n_reselected": self.n_reselected}


_SIMPLEMKL_CONSTRAINTS = {
    **common_constraints("C", "tol", "max_iter", "svm_tol", "verbose", "callback"),
    "gs_tol": [Interval("real", 0, 1, closed="neither")],
    "step_cap": [Interval("real", 0, None, closed="neither")],
    "numerical_precision": [Interval("real", 0, 1e-2, closed="both")],
    "svm_backend": [str],
    "svm_max_iter": [Interval("int", 1, None), None],
    "line_search": [Options("derivative", "golden")],
}


@fill_doc
def simplemkl_solve(K, y, *, C=1.0, tol=1e-2, max_iter=1000, svm_tol=1e-3, callback=None,
                    verbose=0, check_input=True, gs_tol=0.1, step_cap=0.1,
                    numerical_precision=1e-8, svm_backend="smo", svm_max_iter=None,
                    line_search="derivative"):
    r"""Solve l1-norm MKL with SimpleMKL's reduced-gradient descent (Rakotomamonjy et al. 2008).

    Solves problem (6) of Kloft et al. (2009) with :math:`p=1` in SimpleMKL's form

    .. math::
        \min_{d\ge0,\ \sum_md_m=1}\ J(d),\qquad
        J(d)=\max_{0\le\alpha\le C,\ y^\top\alpha=0}\ \mathbf1^\top\alpha
        -\tfrac12\sum_md_m\alpha^\top Q_m\alpha ,

    with gradient :math:`\partial J/\partial d_m=-S_m(\alpha^*)` (Algorithm 1 of [1]_). Each
    cost evaluation of the line search is an SVM on :math:`K_d+tK_D` solved to ``svm_tol``
    (:class:`LineOracle`), warm-started from the previous alpha with the
    ``"smo"`` backend; the stopping rule is the certified duality gap in every case.

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
        Line-search tolerance. ``"golden"``: stop when the interval is below
        ``gs_tol * step_max`` (``goldensearch_deltmax``); ``"derivative"``: stop when
        :math:`|J'(t)|\le` ``gs_tol`` :math:`|J'(0)|` or the bracket is below ``gs_tol``
        times its first width. Divided by 10 when the weights stall (as in ``mklsvm.m``).
    step_cap : float, default=0.1
        Cap on the first trial step (present in the reference code).
    numerical_precision : float, default=1e-8
        Weights below this are set to 0 (``option.numericalprecision``).
    svm_backend : str, default="smo"
        ``"libsvm"`` (scikit-learn's SVC on the combined kernel, no warm start), ``"smo"``
        (the warm-started :class:`~mklcore.smo.StackSMO`; in the line search on the
        two-kernel stack :math:`(K_d, K_D)`, each evaluation starting from the alpha and
        caches of a previous point) or another backend of
        :func:`mklcore.svm.available_backends`.
    svm_max_iter : int, default=None
        Cap on the iterations of one SVM solve (each line-search evaluation included);
        ``None``: ``max(10**6, 100 n)``. Reaching it ends the run with status 2 and a
        ``ConvergenceWarning`` (huge C, unscaled features; see
        :func:`mklcore.wrapper.run_wrapper`).
    line_search : {"derivative", "golden"}, default="derivative"
        ``"golden"``: the trial points of the reference code (follow :math:`D` face by face,
        an SVM at each, then the golden section). ``"derivative"``: the same descent path
        searched with the slope :math:`J'(t)` (see Notes), several times fewer SVM calls.

    Returns
    -------
    result : MKLResult
        The keys of :func:`mklcore.wrapper.run_wrapper` (``weights`` = :math:`d` on the
        simplex, ``objective`` = :math:`J(d)`, ``gap`` = :math:`\Delta_{rel}`, equal to
        SimpleMKL's duality gap, ``dual_objective`` =
        :math:`D_1(\alpha)=\mathbf1^\top\alpha-\max_mS_m`, ``n_svm_calls`` counting the line
        search, ``method="simplemkl"``...) plus ``n_line_search_evals`` and ``n_reselected``
        (SVMs re-solved at unchanged weights, see Notes).

    See Also
    --------
    silp_solve : the same problem by column generation.
    lpmkl_solve : lp-norm MKL.

    Notes
    -----
    Algorithm 1 of [1]_ as implemented in its reference code (``mklsvmupdate.m``): descent
    direction :math:`D_m=-(\nabla_m-\nabla_\mu)` on the free coordinates,
    :math:`D_\mu=-\sum_{m\ne\mu}D_m` with :math:`\mu=\arg\max_md_m`; maximal step capped at
    0.1; weights below 1e-12 zeroed during the first 20 iterations.

    Line search. By Danskin's theorem the slope of :math:`t\mapsto J(d+tD)` at a trial
    point is :math:`J'(t)=-\sum_mD_mS_m=-\frac12c^\top K_Dc` (:math:`c=\alpha\circ y`),
    a by-product of the SVM on :math:`K_d+tK_D` (the ``"smo"`` cache :math:`K_Dc`, or
    :math:`O(n\,n_{SV})` after LIBSVM). ``line_search="derivative"`` (default) follows the
    reference path (lines 6-12 of ``mklsvmupdate.m``: move along :math:`D`, zero the
    weights that reach 0, keep going while the cost decreases) but solves no SVM at a face
    while the last alpha still descends along the next segment (at most 32 faces in a row);
    it extrapolates past the capped first step while :math:`J'<0`; a bracket
    (:math:`J'(lo)<0\le J'(hi)`, on the segment or on the chord from the last solved point,
    along which :math:`J` is convex) is refined by safeguarded cubic interpolation of
    :math:`(J, J')` (Nocedal & Wright 2006, eq. (3.59)) until :math:`|J'|\le` ``gs_tol``
    :math:`|J'(0)|`. Only points that lower :math:`J` are accepted (line 14), so the descent
    and the certified stop are those of the reference code. ``line_search="golden"`` keeps
    the reference trial points. The combined kernel of the accepted point is carried to the
    next iteration (updated for the weights the clean-up zeroes), saving a pass over the
    stack per iteration. Faces are passed in weight space: the slope of the last solved
    alpha along the next segment's direction :math:`D'` is :math:`-\sum_mD'_mS_m`, which
    needs :math:`S_m` only where :math:`D'` changes (the kernel that reached 0 and
    :math:`\mu`, :math:`O(n^2)` each), and the kernels of the chord are formed once.

    Non-unique SVM solutions. On a face of the simplex (a vertex in particular) the combined
    kernel can be singular and the SVM's dual solution not unique; :math:`J` is then not
    differentiable there and the gradient :math:`-S(\alpha)` of the alpha the SVM returns is
    one subgradient among others. Its reduced gradient can point away from an optimal
    :math:`d`: no trial point lowers :math:`J`, the weights stay, and the same alpha keeps
    the duality gap above ``tol`` (the reference code then runs to its iteration cap). When
    the line search finds no descent, the SVM at :math:`d` is re-solved by SMO warm-started
    from the alpha of the trial point nearest :math:`d` (an optimal alpha at :math:`d`
    along whose subgradient :math:`J` does not decrease), and the new solution replaces the
    old one if its duality gap is smaller (``n_reselected`` counts these); the stopping
    rule is SimpleMKL's duality gap of an SVM solution at :math:`d` in every case.

    Every SVM (the trial points of the line search included) runs on the compiled engine,
    warm-started from the previous point's alpha. Measured costs: ``benchmarks/README.md``.

    References
    ----------
    .. [1] A. Rakotomamonjy, F. Bach, S. Canu, Y. Grandvalet. SimpleMKL. JMLR 9:2491-2521,
       2008.
    .. [2] M. Kloft, U. Brefeld, S. Sonnenburg, P. Laskov, K.-R. Müller, A. Zien. Efficient
       and Accurate lp-Norm Multiple Kernel Learning. NIPS 22, 2009.

    {simplex_solve_example}
    """
    validate_params("simplemkl_solve", _SIMPLEMKL_CONSTRAINTS, locals())
    K, y_pm, Y = check_classification_inputs(K, y, "simplemkl_solve", check_input)
    task = None if Y is None else OneVsRestTask(Y)
    return _simplemkl(K, y_pm, task, C=C, tol=tol, max_iter=max_iter, svm_tol=svm_tol,
                      callback=callback, verbose=verbose, gs_tol=gs_tol, step_cap=step_cap,
                      numerical_precision=numerical_precision, svm_backend=svm_backend,
                      svm_max_iter=svm_max_iter, line_search=line_search, extras={"p": 1.0})


def _simplemkl(K, y_pm, task, *, C, tol, max_iter, svm_tol, callback, verbose, gs_tol,
               step_cap, numerical_precision, svm_backend, svm_max_iter, line_search, extras):
    """The loop of :func:`simplemkl_solve` and :func:`simplemkl_svr_solve`."""
    step = _SimpleMKLStep(gs_tol=gs_tol, step_cap=step_cap,
                          numerical_precision=numerical_precision, line_search=line_search)
    return run_wrapper(K, y_pm, step, C=C, tol=tol, max_iter=max_iter, svm_tol=svm_tol,
                       callback=callback, verbose=int(verbose), svm_backend=svm_backend,
                       extras=extras, svm_max_iter=svm_max_iter, task=task)


@fill_doc
def simplemkl_svr_solve(K, y, *, C=1.0, epsilon=0.1, tol=1e-2, max_iter=1000, svm_tol=1e-3,
                        callback=None, verbose=0, check_input=True, gs_tol=0.1, step_cap=0.1,
                        numerical_precision=1e-8, svm_max_iter=None, line_search="derivative"):
    r"""SimpleMKL for regression: l1-norm MKL with an epsilon-SVR (Rakotomamonjy et al. 2008).

    The reduced-gradient descent of :func:`simplemkl_solve` on the SVR form of SimpleMKL
    (Sec. 5.2 of [1]_): :math:`J(d)` is the optimal value of the epsilon-SVR dual at
    :math:`\sum_md_mK_m`,

    .. math::
        J(d)=\max_{\alpha,\alpha^*\in[0,C]^n,\ \mathbf1^\top(\alpha-\alpha^*)=0}\
        y^\top c-\epsilon\mathbf1^\top(\alpha+\alpha^*)-\tfrac12\sum_md_mc^\top K_mc,
        \qquad c=\alpha-\alpha^*,

    with gradient :math:`\partial J/\partial d_m=-\frac12c^\top K_mc`; the stop is the same
    duality gap. Every SVR runs on the compiled engine (:mod:`mklcore.smo`, the epsilon-SVR's
    two variables per point).

    Parameters
    ----------
    {K}
    y : array-like of shape (n_samples,)
        Real targets.
    {svr_C}
    tol : float, default=1e-2
        SimpleMKL's duality gap at which to stop.
    {max_iter}
    {svm_tol}
    {callback}
    {verbose}
    {check_input}
    gs_tol, step_cap, numerical_precision, line_search
        As in :func:`simplemkl_solve`.
    {svm_max_iter}

    Returns
    -------
    result : MKLResult
        The keys of :func:`simplemkl_solve` (``dual_coef`` = :math:`\alpha-\alpha^*`) plus
        ``task="regression"`` and ``epsilon``.

    References
    ----------
    .. [1] A. Rakotomamonjy, F. Bach, S. Canu, Y. Grandvalet. SimpleMKL. JMLR 9:2491-2521,
       2008.

    {simplex_svr_solve_example}
    """
    constraints = {**_SIMPLEMKL_CONSTRAINTS, "epsilon": EPSILON_CONSTRAINT}
    del constraints["svm_backend"]
    validate_params("simplemkl_svr_solve", constraints, locals())
    K, y = check_regression_inputs(K, y, "simplemkl_svr_solve", check_input)
    return _simplemkl(K, None, RegressionTask(y, epsilon), C=C, tol=tol, max_iter=max_iter,
                      svm_tol=svm_tol, callback=callback, verbose=verbose, gs_tol=gs_tol,
                      step_cap=step_cap, numerical_precision=numerical_precision,
                      svm_backend="smo", svm_max_iter=svm_max_iter, line_search=line_search,
                      extras={"p": 1.0, "task": "regression", "epsilon": float(epsilon)})


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
    {svm_max_iter}
    {check_input_fit}
    {multiclass}
    {probability}

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

    _parameter_constraints = {**BaseMKLClassifier._parameter_constraints,
                              **common_constraints("multiclass")}
    _solver = staticmethod(simplemkl_solve)
    _shared_multiclass = True
    #: the line search's kernels K_d, K_D and its spare buffers
    _solver_workspace = 8

    def __init__(self, *, kernels=None, C=1.0, normalize=None, tol=1e-2, max_iter=1000,
                 svm_tol=1e-3, verbose=0, svm_max_iter=None, check_input=True,
                 multiclass="ovr",
                 probability=False, random_state=None):
        self._store_params(locals())


@fill_doc
class SimpleMKLRegressor(BaseMKLRegressor):
    r"""SimpleMKL for regression: weights :math:`d` on the simplex and an epsilon-SVR on
    :math:`\sum_md_mK_m` (Rakotomamonjy et al. 2008, Sec. 5.2; see :func:`simplemkl_svr_solve`).

    Parameters
    ----------
    {kernels}
    {svr_C}
    {normalize}
    tol : float, default=1e-2
        SimpleMKL's duality gap at which to stop.
    {max_iter}
    {svm_tol}
    {verbose}
    {svm_max_iter}
    {check_input_fit}

    Attributes
    ----------
    weights_ : ndarray of shape (n_kernels,)
        Kernel weights :math:`d`, summing to 1.
    {svr_fitted}
    objective_ : float
        Final objective :math:`J(d)`.
    gap_ : float
        Final relative duality gap.
    {fitted_run}

    {simplex_svr_example}
    """

    _parameter_constraints = {**BaseMKLClassifier._parameter_constraints,
                              "epsilon": EPSILON_CONSTRAINT}
    _solver = staticmethod(simplemkl_svr_solve)
    _solver_workspace = SimpleMKLClassifier._solver_workspace

    def __init__(self, *, kernels=None, C=1.0, epsilon=0.1, normalize=None, tol=1e-2,
                 max_iter=1000, svm_tol=1e-3, verbose=0, svm_max_iter=None, check_input=True):
        self._store_params(locals())
