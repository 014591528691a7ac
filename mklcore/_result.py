"""MKLResult: the one result type every mklcore solver returns."""

import numpy as np

__all__ = ["MKLResult", "STATUS_MESSAGES", "History"]

#: status codes shared by every solver (as in scipy.optimize)
STATUS_MESSAGES = {
    0: "converged",
    1: "maximum number of iterations reached",
    2: "numerical failure",
    3: "stopped by callback",
}

_CORE_KEYS = (
    "weights", "dual_coef", "intercept", "objective", "gap", "n_iter",
    "success", "status", "message", "history", "method",
)


class MKLResult(dict):
    """Result of an MKL solver, a dict with attribute access (like ``OptimizeResult``).

    Core keys, always present:

    ``weights`` : ndarray of shape (n_kernels,)
        Kernel weights (the paper's theta, d, beta or u; each solver's docstring says which).
    ``dual_coef`` : ndarray of shape (n_samples,)
        Signed dual coefficients of the final model (``alpha * y`` for SVM-type methods), so
        that ``f(x) = sum_m weights[m] * K_m(x, X) @ dual_coef + intercept``.
    ``intercept`` : float
        Bias of the final model.
    ``objective``, ``gap`` : float
        Final objective value and relative duality gap (``nan`` if the method has none).
    ``n_iter`` : int
        Number of outer iterations.
    ``success``, ``status``, ``message``
        As in scipy: ``status`` 0 = converged, 1 = max_iter reached, 2 = numerical failure,
        3 = stopped by callback; ``message`` says it in words.
    ``history`` : dict of ndarray
        Equal-length arrays recorded every outer iteration: ``objective``, ``gap``,
        ``weights`` (n_iter, n_kernels), ``time`` (seconds since the start).
    ``method`` : str
        Name of the solver, e.g. ``"simplemkl"``.

    Solvers add documented extra keys (for example ``n_svm_calls``).
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as exc:
            raise AttributeError(name) from exc

    def __setattr__(self, name, value):
        self[name] = value

    def __delattr__(self, name):
        del self[name]

    def __dir__(self):
        return list(self.keys())

    def __repr__(self):
        if not self:
            return "MKLResult()"
        width = max(len(k) for k in self) + 1
        lines = []
        for key in sorted(self, key=lambda k: (k not in _CORE_KEYS, k)):
            value = self[key]
            if isinstance(value, dict):
                text = "{" + ", ".join(
                    f"{k}: {np.shape(v)}" for k, v in value.items()) + "}"
            elif isinstance(value, np.ndarray) and value.size > 8:
                text = f"array(shape={value.shape}, dtype={value.dtype})"
            else:
                text = repr(value)
            lines.append(f"{key.rjust(width)}: {text}")
        return "\n".join(lines)

    def decision(self, K_test):
        """Evaluate the model on a test stack.

        Parameters
        ----------
        K_test : ndarray of shape (n_kernels, n_test, n_train)
            Test kernels between test points (rows) and training points (columns).

        Returns
        -------
        f : ndarray of shape (n_test,)
            ``sum_m weights[m] * K_test[m] @ dual_coef + intercept``.
        """
        return decision(self, K_test)


def decision(result, K_test):
    """Evaluate ``f = sum_m weights[m] K_test[m] dual_coef + intercept``.

    Parameters
    ----------
    result : MKLResult
        A fitted result with ``weights``, ``dual_coef`` and ``intercept``.
    K_test : ndarray of shape (n_kernels, n_test, n_train)
        Test stack; rows are test points, columns training points.

    Returns
    -------
    f : ndarray of shape (n_test,)

    Notes
    -----
    Results of methods whose model is not a weighted kernel sum (RLS2, StPMKL, localized
    MKL) subclass :class:`MKLResult` and override ``decision``; this function dispatches
    to that override, so ``decision(result, K_test)`` works for every solver.
    """
    override = getattr(type(result), "decision", None)
    if override is not None and override is not MKLResult.decision:
        return result.decision(K_test)
    K_test = np.asarray(K_test)
    weights = np.asarray(result["weights"], dtype=float)
    coef = np.asarray(result["dual_coef"], dtype=float)
    if K_test.ndim != 3 or K_test.shape[0] != weights.shape[0] or K_test.shape[2] != coef.shape[0]:
        raise ValueError(
            f"K_test must have shape (n_kernels={weights.shape[0]}, n_test, "
            f"n_train={coef.shape[0]}); got {K_test.shape}.")
    active = np.flatnonzero(weights)
    f = np.zeros(K_test.shape[1])
    for m in active:  # skip zero-weight kernels
        f += weights[m] * (K_test[m] @ coef)
    return f + float(result["intercept"])


class History:
    """Accumulates per-iteration records and turns them into equal-length arrays.

    ``History.append(objective=..., gap=..., weights=..., **extra)`` adds one row;
    ``time`` is filled in automatically (seconds since construction).
    """

    def __init__(self):
        import time

        self._clock = time.perf_counter
        self._t0 = self._clock()
        self._rows = {"objective": [], "gap": [], "weights": [], "time": []}

    def append(self, *, objective, gap, weights, **extra):
        self._rows["objective"].append(float(objective))
        self._rows["gap"].append(float(gap))
        self._rows["weights"].append(np.array(weights, dtype=float, copy=True))
        self._rows["time"].append(self._clock() - self._t0)
        for key, value in extra.items():
            self._rows.setdefault(key, []).append(value)

    def __len__(self):
        return len(self._rows["objective"])

    def elapsed(self):
        return self._clock() - self._t0

    def as_dict(self, n_kernels=None):
        out = {}
        for key, values in self._rows.items():
            if key == "weights":
                if values:
                    out[key] = np.vstack(values)
                else:
                    out[key] = np.empty((0, n_kernels or 0))
            else:
                out[key] = np.asarray(values)
        return out
