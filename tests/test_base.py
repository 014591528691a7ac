"""The public extension points (mklcore.base): a new method built from them alone."""

import numpy as np

import mklcore
from mklcore import base
from mklcore.wrapper import normalize_pnorm, run_wrapper


def test_base_exports_the_objects_the_library_uses():
    from mklcore import _base, _result, wrapper

    assert base.BaseMKLClassifier is _base.BaseMKLClassifier
    assert base.Monitor is _result.Monitor and base.MKLResult is _result.MKLResult
    assert base.WeightStep is wrapper.WeightStep
    assert mklcore.base is base and sorted(base.__all__) == sorted(
        ["BaseMKLClassifier", "Monitor", "MKLResult", "WeightStep"])


class HalfStep(base.WeightStep):
    """Halfway to the closed-form l2 update (theta^2 S)^(1/3): the README's example."""

    p = 2.0
    method, label = "halfstep", "HalfStep (p=2)"

    def step(self, state, oracle):
        target = normalize_pnorm(np.cbrt(state.theta ** 2 * state.S), self.p)
        return normalize_pnorm(0.5 * (state.theta + target), self.p)


def test_a_weight_step_subclass_is_a_certified_solver():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(40) > 0, 1.0, -1.0)
    K = np.stack([np.outer(X[:, j], X[:, j]) for j in range(3)] + [np.eye(40)])
    result = run_wrapper(K, y, HalfStep(), C=1.0, tol=1e-5, max_iter=500, svm_tol=1e-6)
    assert isinstance(result, base.MKLResult) and result.method == "halfstep"
    assert result.success and result.gap <= 1e-5
    # the same optimum as the library's own p = 2 solver (weights to the gap's precision)
    ref = mklcore.lpmkl_solve(K, y, p=2.0, C=1.0, tol=1e-6, svm_tol=1e-6)
    assert abs(result.objective - ref.objective) <= 1e-4 * abs(ref.objective)
    assert np.allclose(result.weights, ref.weights, atol=1e-2)
