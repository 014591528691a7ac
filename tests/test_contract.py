"""The iteration and result contract, checked for every solve path of mklcore.registry.

One parametrised file for what every solver promises (see ``mklcore._result.Monitor``):
the single-kernel reduction to the SVM / kernel ridge, permutation equivariance of the
weights, the status codes (1 at the budget with a ConvergenceWarning, 3 on a callback's
StopIteration, 1 without warning when ``tol=None``), the history schema, errors that name the
bad argument, and ``mklcore.decision`` agreeing with the estimators.
"""
import inspect
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC, SVR

from mklcore import decision
from mklcore.registry import SOLVERS

NAMES = list(SOLVERS)
LOOPED = [n for n in NAMES if SOLVERS[n].budget is not None]
HISTORY_KEYS = ("objective", "gap", "criterion", "weights", "time")

# hyperparameters the solve functions need (no default) and small budgets for speed
EXTRA = {
    "stpmkl_exact": {"noise_level": 0.0, "lam": 1e-2},
    "stpmkl_amp": {"noise_level": 0.0, "lam": 1e-2},
    "stpmkl_vi": {"noise_level": 0.0, "lam": 1e-2},
    "mipmkl": {"noise_level": 0.1, "lam": 1e-2, "max_iter": 100},  # inner budget (tol=None)
    "rls2": {"lam": 0.5},
    "linear_rls2": {"lam": 0.5},
    "lmkl": {"random_state": 0},
}


def _gauss(A, B, sigma):
    D = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-D / (2 * sigma * sigma))


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.4 + 0.3 * rng.normal(size=50) > 0, 1.0, -1.0)
    y_reg = X[:, 0] - 0.5 * X[:, 2] + 0.1 * rng.normal(size=50)
    X_tr, X_te = X[:40], X[40:]
    K_all = np.stack([X @ X.T, _gauss(X, X, 1.0), _gauss(X, X, 2.0)])
    return {"X": X_tr, "X_test": X_te, "y": y[:40], "y_reg": y_reg[:40],
            "K": K_all[:, :40, :40], "K_test": K_all[:, 40:, :40]}


def _args(info, data, K=None, X=None, y=None):
    """Positional inputs of a solve path on the shared data."""
    y = (data["y_reg"] if info.task == "regression" else data["y"]) if y is None else y
    K = data["K"] if K is None else K
    X = data["X"] if X is None else X
    return {
        "kernels": (K, y),
        "kernels+Q": (K, y, np.eye(K.shape[0])),
        "kernels+gate": (K, y, data["X"]),
        "features": (X, y),
        "features+Q": (X, y, np.eye(X.shape[1])),
    }[info.inputs]


def _run(name, data, *args, **kwargs):
    info = SOLVERS[name]
    return info.run(*(args or _args(info, data)), **{**EXTRA.get(name, {}), **kwargs})


def _quiet(name, data, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return _run(name, data, *args, **kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_result_method_and_defaults(name, data):
    info = SOLVERS[name]
    res = _quiet(name, data)
    assert res.method == info.method
    assert callable(info.solve) and info.estimator is not None
    params = inspect.signature(info.solve).parameters
    if info.budget is not None:
        assert info.budget in params
    if "tol" in params:
        assert params["tol"].default == info.tol
    for key in info.required:
        assert params[key].default is inspect.Parameter.empty


# ------------------------------------------------------------------ the same model

@pytest.mark.parametrize("name", NAMES)
def test_single_kernel_is_the_svm_or_kernel_ridge(name, data):
    """One kernel: the SVM (classification with a bias) or kernel ridge (RLS2, no bias)."""
    info = SOLVERS[name]
    if not info.bias:
        pytest.skip(f"{info.label} has no bias, so its model is not SVC's")
    K1, Kt = data["K"][1:2], data["K_test"][1:2]
    X1, Xt = data["X"][:, :1], data["X_test"][:, :1]
    if info.task == "regression" and "epsilon" in _params(info):  # the epsilon-SVR
        res = _run(name, data, *_args(info, data, K=K1), svm_tol=1e-10, epsilon=0.1)
        svr = SVR(kernel="precomputed", C=1.0, epsilon=0.1, tol=1e-10).fit(K1[0],
                                                                            data["y_reg"])
        np.testing.assert_allclose(res.weights, [1.0])
        np.testing.assert_allclose(decision(res, Kt), svr.predict(Kt[0]), atol=1e-6)
        assert res.success
        return
    if info.task == "regression":
        extra = {"scaling": None} if info.inputs == "kernels" else {"scaling": "none"}
        res = _quiet(name, data, *_args(info, data, K=K1, X=X1), **extra)
        if info.inputs == "features":
            K1, Kt = (X1 @ X1.T)[None], (Xt @ X1.T)[None]
        ref = KernelRidge(alpha=EXTRA[name]["lam"], kernel="precomputed").fit(
            K1[0], data["y_reg"])
        np.testing.assert_allclose(res.weights, [1.0])
        np.testing.assert_allclose(decision(res, Kt), ref.predict(Kt[0]), atol=1e-6)
        return
    if info.inputs == "features+Q":
        K1, Kt = (X1 @ X1.T)[None], (Xt @ X1.T)[None]
        res = _run(name, data, X1, data["y"], np.eye(1), svm_tol=1e-10)
        f = Xt @ res.coef + res.intercept
    else:
        res = _run(name, data, *_args(info, data, K=K1), svm_tol=1e-10)
        inputs = {"X_gate": data["X_test"]} if info.inputs == "kernels+gate" else {}
        f = decision(res, Kt, **inputs)
    svc = SVC(kernel="precomputed", C=1.0, tol=1e-10).fit(K1[0], data["y"])
    np.testing.assert_allclose(res.weights, [1.0])
    np.testing.assert_allclose(f, svc.decision_function(Kt[0]), atol=1e-6)
    assert res.success


@pytest.mark.parametrize("name", NAMES)
def test_permuting_the_kernels_permutes_the_weights(name, data):
    info = SOLVERS[name]
    if info.inputs == "features+Q":
        pytest.skip("Q-SVM has a single kernel (weights [1])")
    perm = np.array([2, 0, 1])
    # converged runs (the SVM solved tightly), so that the weights do not depend on the path
    kw = {"tol": 1e-6, "svm_tol": 1e-8} if "svm_tol" in _params(info) and info.tol else {}
    if name == "lmkl":  # no tol (a schedule); non-convex: the paths agree when the SVMs do
        kw = {"svm_tol": 1e-8}
    if info.inputs == "features":
        a = _quiet(name, data, **kw)
        b = _quiet(name, data, *_args(info, data, X=data["X"][:, perm]), **kw)
    else:
        a = _quiet(name, data, **kw)
        b = _quiet(name, data, *_args(info, data, K=data["K"][perm]), **kw)
    # the objective is certified to tol; near a flat optimum the weights only to ~sqrt(tol)
    # (SILP interleaved stops on its SIP gap: its weights move by up to ~1.3e-3 with the
    # order of the kernel sums)
    np.testing.assert_allclose(b.weights, a.weights[perm], atol=3e-3)
    np.testing.assert_allclose(b.objective, a.objective, rtol=1e-5)


# ------------------------------------------------------------------ status codes

def _tight(info):
    return {} if info.tol is None and "tol" not in _params(info) else {"tol": 1e-12}


def _params(info):
    return inspect.signature(info.solve).parameters


@pytest.mark.parametrize("name", LOOPED)
def test_budget_gives_status_1_and_a_warning(name, data):
    info = SOLVERS[name]
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        res = _run(name, data, **{info.budget: 1}, **_tight(info))
    assert res.status == 1 and not res.success and res.n_iter == 1
    assert "maximum number of iterations" in res.message or "did not converge" in res.message


@pytest.mark.parametrize("name", LOOPED)
def test_callback_stop_iteration_gives_status_3(name, data):
    info = SOLVERS[name]
    seen = []

    def callback(payload):
        seen.append(payload)
        raise StopIteration

    res = _quiet(name, data, callback=callback, **_tight(info))
    assert res.status == 3 and not res.success and res.n_iter == 1 and len(seen) == 1
    assert "callback" in res.message
    for key in ("n_iter", "objective", "gap", "criterion", "weights", "time", "method"):
        assert key in seen[0], key
    assert seen[0]["method"] == info.method


@pytest.mark.parametrize("name", LOOPED)
def test_tol_none_runs_the_budget_without_warning(name, data):
    info = SOLVERS[name]
    # LMKL at C = 1 on these 40 points reaches a local optimum (gradient ~1e-12, an exact
    # stop) after 2 gating steps; at C = 10 it still descends after 3
    extra = {"C": 10.0} if name == "lmkl" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = _run(name, data, tol=None, **{info.budget: 3}, **extra)
    assert res.status == 1 and res.n_iter == 3


@pytest.mark.parametrize("name", NAMES)
def test_history_schema(name, data):
    res = _quiet(name, data, **({SOLVERS[name].budget: 4} if SOLVERS[name].budget else {}))
    h = res.history
    for key in HISTORY_KEYS:
        assert key in h, key
    for key, column in h.items():
        assert len(column) == res.n_iter, key
    assert h["weights"].shape == (res.n_iter, len(res.weights))
    assert np.all(np.diff(h["time"]) >= 0)


# ------------------------------------------------------------------ bad parameters

def _bad_cases():
    cases = []
    for name in NAMES:
        info = SOLVERS[name]
        params = _params(info)
        if "C" in params:
            cases += [(name, "C=0", {"C": 0.0}, "'C'"), (name, "C<0", {"C": -1.0}, "'C'")]
        if "lam" in params:
            cases.append((name, "lam<0", {"lam": -1.0}, "'lam'"))
        if "tol" in params:
            cases.append((name, "tol<0", {"tol": -1.0}, "'tol'"))
        if info.budget is not None:
            cases.append((name, "budget=0", {info.budget: 0}, f"'{info.budget}'"))
    return cases


@pytest.mark.parametrize("name,case,kwargs,match", _bad_cases(),
                         ids=[f"{c[0]}-{c[1]}" for c in _bad_cases()])
def test_bad_parameters_name_the_argument(name, case, kwargs, match, data):
    with pytest.raises(ValueError, match=match):
        _run(name, data, **kwargs)


def _bad_kernels(data):
    K = data["K"]
    not_psd = K.copy()
    not_psd[1] -= 3.0 * np.eye(K.shape[1])
    nan = K.copy()
    nan[0, 0, 0] = np.nan
    return {"not_psd": not_psd, "wrong_shape": K[:, :, :-1], "nan": nan}


@pytest.mark.parametrize("name,case", [
    (n, c) for n in NAMES for c in ("not_psd", "wrong_shape", "nan", "one_class", "short_y")])
def test_bad_inputs_are_rejected(name, case, data):
    info = SOLVERS[name]
    y = data["y_reg"] if info.task == "regression" else data["y"]
    if case == "one_class":
        if info.task == "regression":
            pytest.skip("one target value is a valid regression problem")
        args = _args(info, data, y=np.ones_like(y))
        match = "class"
    elif case == "short_y":
        args = _args(info, data, y=y[:-1])
        match = "y"
    elif info.inputs.startswith("features"):
        if case == "not_psd":
            pytest.skip("no kernel input")
        X = data["X"].copy()
        if case == "nan":
            X[0, 0] = np.nan
        else:
            X = X[:-1]
        args = _args(info, data, X=X)
        match = "NaN|infinity|X|samples|match"
    else:
        args = _args(info, data, K=_bad_kernels(data)[case])
        match = {"not_psd": "positive semidefinite", "wrong_shape": "K|shape|square",
                 "nan": "NaN|finite|infinity"}[case]
    with pytest.raises(ValueError, match=match):
        _run(name, data, *args)


# ------------------------------------------------------------------ decision

@pytest.mark.parametrize("name", NAMES)
def test_decision_agrees_with_the_estimator(name, data):
    info = SOLVERS[name]
    X, X_test = data["X"], data["X_test"]
    y = data["y_reg"] if info.task == "regression" else data["y"]
    params = {k: v for k, v in EXTRA.get(name, {}).items()}
    if info.inputs.startswith("features"):
        if info.inputs == "features+Q":
            pytest.skip("Q-SVM's model is linear in the features: decision() needs no stack")
        est = info.make_estimator(**params).fit(X, y)
        K_test = np.einsum("ti,ni->itn", X_test, X)  # one linear kernel per feature
    else:
        bank = [lambda A, B: A @ B.T, lambda A, B: _gauss(A, B, 1.0)]
        est = info.make_estimator(kernels=bank, normalize=None, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(X, y)
        K_test = est.kernel_bank_.transform(X_test)
    assert est.result_.method == info.method
    expected = est.predict(X_test) if info.task == "regression" else est.decision_function(X_test)
    inputs = {}
    if info.inputs == "kernels+gate":
        inputs = {"X_gate": est._gating_inputs(X_test)}
    np.testing.assert_allclose(decision(est.result_, K_test, **inputs), expected, atol=1e-10)
