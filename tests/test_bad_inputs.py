"""Bad inputs for every public solver and estimator: one table, input x API -> verdict.

Every solve path of :mod:`mklcore.registry` (``solve:<name>``) and every estimator
(``fit:<name>``) meets every input of :data:`CASES` that applies to it: NaN / inf / sparse /
misshapen / indefinite kernels or features, short, one-class, string or NaN labels, and each
numeric hyperparameter at 0, below 0, at inf, at NaN and of the wrong type. The expected
verdict is an exception of a given type whose message matches a pattern naming the argument,
or ``OK`` (a finite result, no exception) where the input is valid. Nothing may be silently
accepted where the message of the range says it is not.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import ClassifierMixin, RegressorMixin, is_regressor
from sklearn.exceptions import ConvergenceWarning

import mklcore
from mklcore.kernels import gaussian, linear
from mklcore.registry import SOLVERS, SolverInfo

OK = "ok"

# ------------------------------------------------------------------ data (small, fixed)
_rng = np.random.default_rng(0)
X = _rng.normal(size=(24, 3))
Y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1.0, -1.0)
Y_REG = X[:, 0] - 0.5 * X[:, 2] + 0.1 * _rng.normal(size=24)
_D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
K = np.stack([X @ X.T, np.exp(-_D / 2.0)])

# hyperparameters without defaults, and budgets small enough for a fast table
SOLVE_EXTRA = {
    "stpmkl_exact": {"noise_level": 0.0, "lam": 1e-2},
    "stpmkl_amp": {"noise_level": 0.0, "lam": 1e-2},
    "stpmkl_vi": {"noise_level": 0.0, "lam": 1e-2},
    "mipmkl": {"noise_level": 0.1, "lam": 1e-2, "max_alt": 3, "max_iter": 100},
    "rls2": {"lam": 0.5},
    "linear_rls2": {"lam": 0.5},
    "lmkl": {"random_state": 0, "max_iter": 3},
    "rls2_path": {"lams": [1.0, 0.1]},
    "linear_rls2_path": {"lams": [1.0, 0.1]},
}
BANK = [linear(), gaussian(gamma="scale")]


def _not_psd(A, B):
    return -(A @ B.T)


# ------------------------------------------------------------------ the APIs

class Api:
    """One public entry point: a registry solve path or an estimator."""

    def __init__(self, kind, name, info=None, estimator=None):
        self.kind, self.name, self.info, self._estimator = kind, name, info, estimator
        if kind == "solve":
            self.owner = info.solve.__name__
            self.task, self.inputs = info.task, info.inputs
            self.params = set(info.solve.__code__.co_varnames)
            self.budget = info.budget
        else:
            est = self.make()
            self.owner = type(est).__name__
            self.task = "regression" if is_regressor(est) else "classification"
            self.inputs = "kernels" if "kernels" in est.get_params() else "features"
            self.params = set(est.get_params())
            self.budget = next((b for b in ("max_alt", "max_iter") if b in self.params), None)

    def make(self, **params):
        est = self._estimator() if callable(self._estimator) else self.info.make_estimator()
        base = {"kernels": BANK} if "kernels" in est.get_params() else {}
        if "max_iter" in est.get_params() and isinstance(est, mklcore.LMKLClassifier):
            base.update(max_iter=3, random_state=0)
        if "max_alt" in est.get_params():  # MiPMKL: 3 alternations of inner solves of at
            base.update(max_alt=3, max_iter=100)  # most 100 iterations (tol=0 runs them all)
        return est.set_params(**{**base, **params})

    def call(self, K_=None, X_=None, y_=None, **kwargs):
        y_ = (Y_REG if self.task == "regression" else Y) if y_ is None else y_
        if self.kind == "fit":
            return self.make(**kwargs).fit(X if X_ is None else X_, y_)
        K_ = K if K_ is None else K_
        X_ = X if X_ is None else X_
        args = {"kernels": (K_, y_), "kernels+Q": (K_, y_, np.eye(2)),
                "kernels+gate": (K_, y_, X), "features": (X_, y_),
                "features+Q": (X_, y_, np.eye(3))}[self.inputs]
        return self.info.run(*args, **{**SOLVE_EXTRA.get(self.name, {}), **kwargs})

    def __repr__(self):
        return f"{self.kind}:{self.name}"


#: public solve functions outside the registry: the RLS2 paths (the SVM engine
#: svm_solve trusts its inputs, see test_svm_engine_rejects_sparse_and_bad_ranges)
EXTRA_SOLVERS = [
    SolverInfo(name="rls2_path", label="RLS2 path", solve_ref="rls2:rls2_path",
               estimator_ref=None, options={}, tol=1e-6, task="regression",
               inputs="kernels", paper="", method="rls2"),
    SolverInfo(name="linear_rls2_path", label="Linear RLS2 path",
               solve_ref="rls2:rls2_linear_path", estimator_ref=None,
               options={}, tol=1e-6, task="regression", inputs="features",
               paper="", method="linear_rls2"),
]


def _apis():
    apis = [Api("solve", info.name, info) for info in [*SOLVERS.values(), *EXTRA_SOLVERS]]
    seen = set()
    for name, info in SOLVERS.items():
        if info.estimator_ref not in seen:
            seen.add(info.estimator_ref)
            apis.append(Api("fit", info.estimator_ref.split(":")[1], info))
    apis += [Api("fit", cls.__name__, estimator=cls)
             for cls in (mklcore.RLS2Classifier, mklcore.LinearRLS2Classifier)]
    return apis


APIS = _apis()


# ------------------------------------------------------------------ the inputs

def _with(array, index, value):
    out = array.copy()
    out[index] = value
    return out


def _data_name(api):
    """The argument that carries the data: K for kernel solvers, X otherwise."""
    return "K" if api.kind == "solve" and api.inputs.startswith("kernels") else "X"


def _bad_data(api, case):
    """Arguments of ``api.call`` for a corrupted K or X (None: the case does not apply)."""
    if _data_name(api) == "K":
        return {
            "nan": {"K_": _with(K, (0, 0, 1), np.nan)},
            "inf": {"K_": _with(K, (1, 2, 2), np.inf)},
            "sparse": {"K_": sp.csr_matrix(K[0])},
            "sparse_list": {"K_": [sp.csr_matrix(k) for k in K]},
            "not_square": {"K_": K[:, :, :-1]},
            "1d": {"K_": K[0, 0]},
            "strings": {"K_": "gram"},
            "not_psd": {"K_": _with(K, 1, K[1] - 3.0 * np.eye(24))},
        }.get(case)
    if case == "not_psd":
        return {"kernels": [linear(), _not_psd]} if "kernels" in api.params else None
    return {
        "nan": {"X_": _with(X, (0, 1), np.nan)},
        "inf": {"X_": _with(X, (3, 0), -np.inf)},
        "sparse": {"X_": sp.csr_matrix(X)},
        "sparse_list": None,
        "not_square": None,
        "1d": {"X_": X[:, 0]},
        "strings": {"X_": "features"},
    }.get(case)


def _bad_labels(api, case):
    """Arguments of ``api.call`` for unusual labels y."""
    y = Y_REG if api.task == "regression" else Y
    return {
        "y_short": {"y_": y[:-1]},
        "y_nan": {"y_": _with(y, 4, np.nan)},
        "y_one_class": {"y_": np.ones(24)},
        "y_strings": {"y_": np.where(Y > 0, "yes", "no")},
        "y_one_sample_class": {"y_": np.where(np.arange(24) == 5, 1.0, -1.0)},
        "y_none": {"y_": np.where(np.arange(24) == 3, None, y.astype(object))},
    }[case]


DATA_CASES = ["nan", "inf", "sparse", "sparse_list", "not_square", "1d", "strings", "not_psd"]
LABEL_CASES = ["y_short", "y_nan", "y_one_class", "y_strings", "y_one_sample_class", "y_none"]
VALUE_CASES = {"zero": 0.0, "neg": -1.0, "inf": np.inf, "nan": np.nan, "str": "1"}
#: switches: a truthy str or an int is not a bool (NumPy's bool is)
BOOL_CASES = {"str": "no", "int": 1, "np_bool": np.True_}
PARAM_CASES = ([f"{p}={v}" for p in ("C", "lam", "lams", "tol", "budget") for v in VALUE_CASES]
               + [f"check_input={v}" for v in BOOL_CASES] + ["svm_tol=10"])


def _expected(api, case):
    """The verdict of one cell: ``OK`` or ``(exception type, pattern)``; None: no such cell."""
    if case in DATA_CASES:
        args = _bad_data(api, case)
        if args is None:
            return None
        name = _data_name(api)
        # the estimators check X with sklearn's validate_data: its messages for a NaN, a
        # sparse X or a 1-D X ("Expected 2D array, got 1D array instead") are the standard ones
        shape = "Expected 2D array" if api.kind == "fit" else rf"^{name} must (have shape|hold)"
        return args, {
            "nan": (ValueError, rf"^(Input )?{name} contains (NaN|infinity)"),
            "inf": (ValueError, rf"^(Input )?{name} contains (NaN|infinity)"),
            "sparse": (TypeError, rf"^Sparse data was passed for {name}\b"),
            "sparse_list": (TypeError, rf"^Sparse data was passed for {name} \(item 0 of 2\)"),
            "not_square": (ValueError, r"square"),
            "1d": (ValueError, shape),
            "strings": (ValueError, rf"{shape}|needs numeric {name}\b"),
            "not_psd": (ValueError, r"not positive semidefinite"),
        }[case]
    if case in LABEL_CASES:
        args = _bad_labels(api, case)
        regression = api.task == "regression"
        verdict = {
            "y_short": (ValueError, r"\by\b|samples"),
            "y_nan": (ValueError, r"^(Input )?y contains NaN|^y must hold labels"),
            "y_one_class": OK if regression else (ValueError, r"\by\b.*one class|single class"),
            # solvers that need {-1, +1} say so naming y; the others map any two labels
            "y_strings": ((ValueError, r"\by\b") if regression or api.owner == "lmkl_solve"
                          else OK),
            "y_one_sample_class": OK,
            # object labels holding None: a message naming y, never "'<' not supported"
            "y_none": (ValueError, r"^y must hold labels; got None or NaN at 1 entries|"
                                   r"^y contains NaN|needs numeric outputs y"),
        }[case]
        return args, verdict
    param, value = case.split("=")
    param = api.budget if param == "budget" else param
    if param is None or param not in api.params:
        return None
    if param == "check_input":
        if BOOL_CASES[value] is np.True_:
            return {param: np.True_}, OK
        verdict = (ValueError, rf"^The 'check_input' parameter of {api.owner} must be an "
                               rf"instance of bool\. Got {BOOL_CASES[value]!r} instead")
        return {param: BOOL_CASES[value]}, verdict
    if param == "svm_tol":  # a KKT tolerance >= 1 stops the SVM at alpha = 0 (it divided by 0)
        return {param: 10.0}, (ValueError, rf"^The 'svm_tol' parameter of {api.owner} must be "
                                           rf"a float in the range \(0, 1\)")
    value = VALUE_CASES[value]
    kwargs = {param: value}
    if param == "lams":  # the values of an RLS2 path; inf is the limit of Lemma 5
        if isinstance(value, str):  # a str is not a sequence of numbers
            return {"lams": value}, (ValueError, rf"^The 'lams' parameter of {api.owner} must "
                                                 rf"be a non-empty 1-D array of floats, not a str")
        return {"lams": [1.0, value]}, (OK if value == np.inf else (
            ValueError, rf"The 'lams' parameter of {api.owner} must hold floats"))
    # tol=0 is allowed everywhere: only an exact optimum stops; the budget ends the run
    if param == "tol" and value == 0.0:
        return {**kwargs, **({api.budget: 3} if api.budget else {})}, OK
    if param == "lam" and value == np.inf and api.kind == "solve" and "rls2" in api.owner:
        return kwargs, OK  # the limit lambda -> inf of Lemma 5 of Dinuzzo (2010): c = 0
    return kwargs, (ValueError, rf"The '{param}' parameter of {api.owner} must be")


def _cells():
    cells = []
    for api in APIS:
        for case in DATA_CASES + LABEL_CASES + PARAM_CASES:
            expected = _expected(api, case)
            if expected is None:
                continue
            args, verdict = expected
            marks = ()
            if isinstance(verdict, tuple) and isinstance(verdict[0], pytest.MarkDecorator):
                marks, verdict = verdict
            cells.append(pytest.param(api, args, verdict, id=f"{api!r}-{case}", marks=marks))
    return cells


@pytest.mark.parametrize("api,args,expected", _cells())
def test_bad_input(api, args, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if expected == OK:
            out = api.call(**args)
            if api.kind == "solve":
                for res in out if isinstance(out, list) else [out]:
                    assert np.all(np.isfinite(res.weights)) and np.all(np.isfinite(res.dual_coef))
                    assert res.status in (0, 1)
            elif api.task == "regression":
                assert np.all(np.isfinite(out.predict(X)))
            else:
                assert set(out.predict(X)) <= set(args.get("y_", Y))
            return
        exc, pattern = expected
        with pytest.raises(exc, match=pattern):
            api.call(**args)


def test_the_table_covers_every_solver_estimator_and_input():
    public = {name for name in mklcore.__all__
              if isinstance(getattr(mklcore, name), type)
              and issubclass(getattr(mklcore, name), (ClassifierMixin, RegressorMixin))}
    assert {api.name for api in APIS if api.kind == "fit"} == public
    solve = {name for name in mklcore.__all__ if name.endswith(("_solve", "_path"))}
    solve.discard("svm_solve")
    assert {api.owner for api in APIS if api.kind == "solve"} == solve
    cells = _cells()
    for api in APIS:
        cases = {c.id.split("-", 1)[1] for c in cells if c.values[0] is api}
        assert {"nan", "inf", "sparse", "1d", "strings", "y_short", "y_strings",
                "y_one_class"} <= cases, api
        assert any(case.startswith(("C=", "lam")) for case in cases), api
        if api.budget is not None:
            assert {f"budget={v}" for v in VALUE_CASES} <= cases, api
        if "kernels" in api.inputs or "kernels" in api.params:
            assert "not_psd" in cases, api


@pytest.mark.parametrize("kwargs,exc,pattern", [
    ({"K": sp.csr_matrix(K[0])}, TypeError, r"^Sparse data was passed for K\b"),
    ({"y": sp.csr_matrix(Y)}, TypeError, r"^Sparse data was passed for y\b"),
    ({"C": np.inf}, ValueError, r"The 'C' parameter of svm_solve must be"),
    ({"C": np.nan}, ValueError, r"The 'C' parameter of svm_solve must be"),
    ({"tol": np.inf}, ValueError, r"The 'tol' parameter of svm_solve must be"),
    ({"tol": 0.0}, ValueError, r"The 'tol' parameter of svm_solve must be"),
])
def test_svm_engine_rejects_sparse_and_bad_ranges(kwargs, exc, pattern):
    from mklcore.svm import svm_solve

    args = {"K": K, "y": Y, **kwargs}
    with pytest.raises(exc, match=pattern):
        svm_solve(args.pop("K"), args.pop("y"), **args)


# ------------------------------------------------------------------ data folders

@pytest.mark.parametrize("variable,value,exc,pattern", [
    ("MKLCORE_DATA_DIR", "missing", FileNotFoundError, r"^\$MKLCORE_DATA_DIR is set to .*missing"),
    ("MKLCORE_DATA_HOME", "file", FileExistsError, r"^\$MKLCORE_DATA_HOME \(.*file'\)"),
    ("MKLCORE_DATA_HOME", "file/below", NotADirectoryError, r"^\$MKLCORE_DATA_HOME \("),
    ("data_home", "file", FileExistsError, r"^The 'data_home' folder .*file'"),
])
def test_bad_data_folders_name_the_variable(variable, value, exc, pattern, tmp_path,
                                            monkeypatch):
    from mklcore import datasets

    (tmp_path / "file").write_text("not a folder")
    path = str(tmp_path / value)
    monkeypatch.delenv("MKLCORE_DATA_HOME", raising=False)
    monkeypatch.delenv("MKLCORE_DATA_DIR", raising=False)
    with pytest.raises(exc, match=pattern):
        if variable == "MKLCORE_DATA_DIR":
            monkeypatch.setenv(variable, path)
            datasets.data_dir()
        elif variable == "data_home":
            datasets._resolve_data_home(path)
        else:
            monkeypatch.setenv(variable, path)
            datasets._resolve_data_home()


# ------------------------------------------------------------------ cheap stack checks
def test_kernel_stack_checks_find_every_bad_entry():
    from mklcore._validation import check_finite, check_kernel_stack

    K = np.stack([X @ X.T, np.exp(-_D)])
    for bad in (np.nan, np.inf, -np.inf):
        K_bad = K.copy()
        K_bad[1, 3, 5] = bad
        with pytest.raises(ValueError, match=r"K contains NaN or infinity \(1 entries\)"):
            check_kernel_stack(K_bad)
    # huge but finite entries (their sum overflows) are accepted
    check_finite(np.full((4, 4), 1e308), "K")
    K_asym = K.copy()
    K_asym[1, 0, 1] += 1e-3
    with pytest.raises(ValueError, match=r"Kernel 1 of 2 is not symmetric: max \|K - K\^T\| = "
                                         r"1.00e-03"):
        check_kernel_stack(K_asym)
    # symmetric_tol=None: for stacks symmetric by construction
    assert check_kernel_stack(K_asym, symmetric_tol=None, check_psd_=False) is not None


# ------------------------------------------------------------------ StPMKL starts and switches
_N = Y.size


@pytest.mark.parametrize("func,kwargs,pattern", [
    ("stpmkl_solve", {"warm_start": (np.full((_N, 2), np.nan), np.zeros(_N))},
     r"^stpmkl_solve: warm_start\[0\] \(coef\) contains NaN or infinity"),
    ("stpmkl_solve", {"warm_start": (np.zeros((_N, 2)), np.full(_N, np.nan))},
     r"^stpmkl_solve: warm_start\[1\] \(gamma\) contains NaN or infinity"),
    ("stpmkl_solve", {"warm_start": (np.zeros((_N, 3)), np.zeros(_N))},
     r"^stpmkl_solve: warm_start\[0\] \(coef\) must have shape \(24, 2\); got \(24, 3\)"),
    ("stpmkl_solve", {"warm_start": (np.zeros((_N, 2)), np.zeros(_N - 1)), "solver": "amp"},
     r"^stpmkl_solve: warm_start\[1\] \(gamma\) must have shape \(24,\); got \(23,\)"),
    ("stpmkl_solve", {"warm_start": np.zeros(_N)}, r"^stpmkl_solve: warm_start must be a pair"),
    ("stpmkl_solve", {"warm_start": ("a", np.zeros(_N))},
     r"^stpmkl_solve: warm_start\[0\] \(coef\) must be a numeric array"),
    ("stpmkl_solve", {"warm_cuts": np.full((2, _N), np.nan)},
     r"^stpmkl_solve: warm_cuts contains NaN or infinity"),
    ("stpmkl_solve", {"warm_cuts": np.zeros((2, 2, _N))},
     r"^stpmkl_solve: warm_cuts must be an array of shape \(n_cuts, n_samples=24\)"),
    ("stpmkl_solve", {"warm_cuts": "cuts"}, r"^stpmkl_solve: warm_cuts must be a numeric array"),
    ("mipmkl_solve", {"warm_cuts": np.full((1, _N), np.inf)},
     r"^mipmkl_solve: warm_cuts contains NaN or infinity"),
    ("stpmkl_grid", {"warn": "no"},
     r"^The 'warn' parameter of stpmkl_grid must be an instance of bool\. Got 'no'"),
    ("stpmkl_grid", {"check_input": "no"},
     r"^The 'check_input' parameter of stpmkl_grid must be an instance of bool"),
    ("mipmkl_solve", {"check_input": 1},
     r"^The 'check_input' parameter of mipmkl_solve must be an instance of bool"),
])
def test_stpmkl_bad_starts_and_switches_name_the_argument(func, kwargs, pattern):
    """Issue 28, item 4: a NaN or misshapen warm_start / warm_cuts and a str switch raise an
    error naming the argument (they were internal linprog / numpy messages, or accepted)."""
    from mklcore import stpmkl

    args = {"noise_level": 0.1, "lam": 1e-2, "max_iter": 5}
    if func == "mipmkl_solve":
        args.update(max_alt=2)
    with pytest.raises(ValueError, match=pattern):
        getattr(stpmkl, func)(K, Y, **{**args, **kwargs})


def test_np_bool_switches_are_accepted():
    from mklcore.stpmkl import stpmkl_grid

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = stpmkl_grid(K, Y, noise_level=0.1, lam=[1e-2], max_iter=3, warn=np.False_,
                          check_input=np.True_)
    assert len(res) == 1 and res[0].status in (0, 1)


# ------------------------------------------------------------------ refits that fail
FIT_APIS = [api for api in APIS if api.kind == "fit"]
X_B = np.random.default_rng(5).normal(size=(30, 3))
Y_B = np.where(X_B[:, 1] > 0, 1.0, -1.0)


def _y_for(api, X_):
    return X_[:, 0] if api.task == "regression" else np.where(X_[:, 0] + 0.5 * X_[:, 1] > 0,
                                                               1.0, -1.0)


def _assert_unfitted(est):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        est.predict(X)
    assert not hasattr(est, "n_features_in_") and not hasattr(est, "classes_")


@pytest.mark.parametrize("api", FIT_APIS, ids=repr)
def test_refit_interrupted_by_ctrl_c_leaves_no_model(api, monkeypatch):
    """Issue 28, item 2: fit on A, refit on B interrupted by KeyboardInterrupt inside the solve
    (after the labels, the bank and n_features_in_ of B were set): the estimator is unfitted
    (NotFittedError), never a mix of the old model and the new data; a fit after it works."""
    est = api.make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, _y_for(api, X))
        before = est.predict(X)

        def interrupted(*args, **kwargs):
            raise KeyboardInterrupt

        monkeypatch.setattr(type(est), "_solve", interrupted)
        X_wide = np.hstack([X_B, X_B[:, :1]])  # 4 features: B differs from A in shape too
        with pytest.raises(KeyboardInterrupt):
            est.fit(X_wide, _y_for(api, X_wide))
        _assert_unfitted(est)
        monkeypatch.undo()
        np.testing.assert_array_equal(est.fit(X, _y_for(api, X)).predict(X), before)


@pytest.mark.parametrize("api", FIT_APIS, ids=repr)
def test_rejected_refit_leaves_no_model(api):
    """A refit rejected by validation (NaN features of another width) does not leave the old
    model answering with the old feature count as if it were current: NotFittedError."""
    est = api.make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, _y_for(api, X))
    X_bad = _with(np.hstack([X_B, X_B]), (0, 0), np.nan)
    with pytest.raises(ValueError, match="NaN"):
        est.fit(X_bad, _y_for(api, X_B))
    _assert_unfitted(est)


def test_callback_ctrl_c_mid_fit_and_failed_first_fit(monkeypatch):
    """KeyboardInterrupt raised by a callback in the middle of SimpleMKL's iterations, and
    a first fit failing in the solver: NotFittedError, not AttributeError."""
    from sklearn.exceptions import NotFittedError

    calls = []

    def callback(res):
        calls.append(res.n_iter)
        if len(calls) == 2:
            raise KeyboardInterrupt

    est = mklcore.SimpleMKLClassifier(kernels=BANK).fit(X, Y)
    solver = type(est)._solver
    monkeypatch.setattr(type(est), "_solver",
                        staticmethod(lambda K, y, **kw: solver(K, y, callback=callback, **kw)))
    with pytest.raises(KeyboardInterrupt):
        est.fit(X_B, Y_B)
    assert calls == [1, 2]
    with pytest.raises(NotFittedError):
        est.decision_function(X_B)
    bad = mklcore.SimpleMKLClassifier(kernels=[linear(), _not_psd])
    with pytest.raises(ValueError, match="not positive semidefinite"):
        bad.fit(X, Y)
    with pytest.raises(NotFittedError):
        bad.predict(X)


def test_labels_of_mixed_types_name_y():
    """Object labels mixing numbers and strings: a ValueError naming y, not numpy's
    "'<' not supported between instances of 'str' and 'int'"."""
    from mklcore import lpmkl_solve

    y_mixed = np.array([1 if v > 0 else "no" for v in Y], dtype=object)
    with pytest.raises(ValueError, match=r"^y must hold labels of one comparable type; got a "
                                         r"mix of int, str"):
        lpmkl_solve(K, y_mixed)


# ------------------------------------------------------------------ bounded SVM solves
def _wide_scales():
    """30 points; a linear kernel on features of scale 1000 beside two Gaussians."""
    rng = np.random.default_rng(0)
    Xw = rng.normal(size=(30, 3)) * 1000
    yw = np.where(Xw[:, 0] > 0, 1.0, -1.0)
    yw[:3] *= -1
    Dw = ((Xw[:, None] - Xw[None]) ** 2).sum(-1)
    return Xw, yw, np.stack([Xw @ Xw.T, np.exp(-Dw / Dw.mean()), np.exp(-Dw / (10 * Dw.mean()))])


@pytest.mark.parametrize("name", ["sum_kernel", "lpmkl", "silp", "simplemkl", "qmkl", "lmkl"])
def test_kernels_on_wide_scales_end_at_the_svm_cap_and_name_the_cause(name):
    """Every solver on the SMO engine ends at the SVM's iteration cap (default
    max(10**6, 100 n)) with status 2 and a warning naming the cause, instead of running on."""
    from sklearn.exceptions import ConvergenceWarning

    from mklcore.localized import lmkl_solve
    from mklcore.lpnorm import lpmkl_solve, sum_kernel_svm_solve
    from mklcore.qmkl import qmkl_solve
    from mklcore.silp import silp_solve
    from mklcore.simplemkl import simplemkl_solve

    Xw, yw, Kw = _wide_scales()
    run = {"sum_kernel": lambda: sum_kernel_svm_solve(Kw, yw),
           "lpmkl": lambda: lpmkl_solve(Kw, yw), "silp": lambda: silp_solve(Kw, yw),
           "simplemkl": lambda: simplemkl_solve(Kw, yw),
           "qmkl": lambda: qmkl_solve(Kw, yw, np.eye(3)),
           "lmkl": lambda: lmkl_solve(Kw, yw, Xw, max_iter=5, random_state=1)}[name]
    cause = r"traces differ by a factor" if name != "lmkl" else r"very different scales"
    with pytest.warns(ConvergenceWarning, match=rf"did not converge within .*{cause}"):
        res = run()
    assert res.status == 2 and not res.success


@pytest.mark.parametrize("case", ["features_1e6", "C_1e300"])
def test_qsvm_ends_at_the_svm_cap(case):
    from sklearn.exceptions import ConvergenceWarning

    from mklcore.qmkl import qsvm_solve

    Xw, yw, _ = _wide_scales()
    X_case, C = (Xw * 1e3, 1.0) if case == "features_1e6" else (Xw / 1e3, 1e300)
    with pytest.warns(ConvergenceWarning, match=r"did not converge within 1000000 iterations"):
        res = qsvm_solve(X_case, yw, np.eye(3), C=C)
    assert res.status == 2


def test_svm_engine_returns_to_python_for_ctrl_c():
    """The compiled loop hands control back every CHECK_EVERY iterations, so a KeyboardInterrupt
    raised there (as Ctrl-C's handler does) stops a long solve at once."""
    import mklcore.smo as smo

    _, yw, Kw = _wide_scales()
    calls = []

    def interrupt(n_iter):
        calls.append(n_iter)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        smo.smo_solve(smo.KernelRows(Kw.sum(axis=0)), yw, 1.0, tol=1e-12, on_check=interrupt)
    assert calls == [smo.CHECK_EVERY]


@pytest.mark.parametrize("name", ["lpmkl", "silp", "simplemkl", "qmkl", "lmkl"])
def test_memory_layout_of_the_stack_does_not_change_the_bits(name):
    """A Fortran-ordered or strided stack gives the bits of the C-ordered one."""
    from mklcore.localized import lmkl_solve
    from mklcore.lpnorm import lpmkl_solve
    from mklcore.qmkl import qmkl_solve
    from mklcore.silp import silp_solve
    from mklcore.simplemkl import simplemkl_solve

    rng = np.random.default_rng(0)
    Xl = rng.normal(size=(90, 4))
    yl = np.where(Xl[:, 0] + 0.3 * rng.normal(size=90) > 0, 1.0, -1.0)
    Dl = ((Xl[:, None] - Xl[None]) ** 2).sum(-1)
    Kl = np.stack([Xl @ Xl.T / 4, np.exp(-Dl / 2), np.exp(-Dl / 8), np.exp(-Dl / 32)])
    big = np.zeros((4, 180, 180))
    big[:, ::2, ::2] = Kl
    run = {"lpmkl": lambda K: lpmkl_solve(K, yl), "silp": lambda K: silp_solve(K, yl),
           "simplemkl": lambda K: simplemkl_solve(K, yl),
           "qmkl": lambda K: qmkl_solve(K, yl, np.eye(4)),
           "lmkl": lambda K: lmkl_solve(K, yl, Xl, max_iter=3, random_state=0)}[name]
    ref = run(Kl)
    for K in (np.asfortranarray(Kl), big[:, ::2, ::2]):
        res = run(K)
        np.testing.assert_array_equal(res.weights, ref.weights)
        np.testing.assert_array_equal(res.dual_coef, ref.dual_coef)


@pytest.mark.parametrize("case, match", [
    ("negative_weight", r"weights must hold 3 finite non-negative numbers"),
    ("nan_weight", r"weights must hold 3 finite non-negative numbers"),
    ("short_weights", r"weights must hold 3 finite non-negative numbers"),
    ("asymmetric", r"Kernel 1 of 3 is not symmetric"),
    ("indefinite", r"Kernel 2 of 3 is not positive semidefinite"),
])
def test_svm_solve_refuses_bad_weights_and_kernels(case, match):
    from mklcore.svm import svm_solve

    rng = np.random.default_rng(2)
    Xs = rng.normal(size=(80, 3))
    ys = np.where(Xs[:, 0] > 0, 1.0, -1.0)
    Ds = ((Xs[:, None] - Xs[None]) ** 2).sum(-1)
    Ks = np.stack([Xs @ Xs.T, np.exp(-Ds), np.exp(-Ds / 4)])
    weights = {"negative_weight": [1.0, -1.0, 1.0], "nan_weight": [1.0, np.nan, 1.0],
               "short_weights": [1.0, 1.0]}.get(case)
    if case == "asymmetric":
        Ks[1] += np.triu(np.ones((80, 80)), 1)
    elif case == "indefinite":
        Ks[2] -= 3.0 * np.eye(80)
    with pytest.raises(ValueError, match=match):
        svm_solve(Ks, ys, weights=weights)


@pytest.mark.parametrize("estimator, workspace", [("LpMKLClassifier", 3),
                                                  ("SimpleMKLClassifier", 8)])
def test_memory_check_reserves_the_solvers_workspace(monkeypatch, estimator, workspace):
    """A stack that fits in free memory but leaves no room for the solver's Gram-sized
    matrices is refused before it is built, with a MemoryError that counts them."""
    import mklcore
    import mklcore.kernels as kernels

    n, M = 60, 2
    stack_bytes = M * n * n * 8
    monkeypatch.setattr(kernels, "MEMORY_CHECK_MIN_BYTES", 0)
    # room for the stack and its own temporaries, not for the solver's workspace
    monkeypatch.setattr(kernels, "available_memory", lambda: stack_bytes + n * n * 8)
    Xm = np.random.default_rng(0).normal(size=(n, 3))
    ym = np.where(Xm[:, 0] > 0, 1, -1)
    clf = getattr(mklcore, estimator)(kernels=[kernels.linear(), kernels.gaussian()])
    if "memory" in clf.get_params():  # memory="auto" would fit on kernel rows instead
        clf.set_params(memory="stack")
    with pytest.raises(MemoryError, match=r"plus .* of workspace"):
        clf.fit(Xm, ym)
    assert type(clf)._solver_workspace == workspace


def test_tiny_svm_tol_ends_at_the_svm_cap():
    """svm_tol=1e-300 (below the round-off of the gradient) ends at the SVM's cap with
    status 2 instead of running on."""
    from sklearn.exceptions import ConvergenceWarning

    from mklcore.lpnorm import lpmkl_solve

    _, yw, Kw = _wide_scales()
    with pytest.warns(ConvergenceWarning, match=r"did not converge within svm_max_iter"):
        res = lpmkl_solve(Kw[1:], yw, svm_tol=1e-300, svm_max_iter=20_000)
    assert res.status == 2 and res.n_smo_iter <= 60_000  # chunks, then the capped final SVM


@pytest.mark.parametrize("estimator", ["LpMKLClassifier", "SimpleMKLClassifier",
                                       "SILPMKLClassifier"])
def test_estimator_with_a_huge_callable_kernel_ends_and_names_the_scale(estimator):
    """A callable kernel scaled by 1e12 beside a Gaussian: the fit ends at the SVM's cap with
    a warning naming the kernels' trace spread (not a run without end)."""
    from sklearn.exceptions import ConvergenceWarning

    import mklcore
    from mklcore.kernels import gaussian

    rng = np.random.default_rng(0)
    Xh = rng.normal(size=(40, 3))
    yh = np.where(Xh[:, 0] > 0, 1, -1)
    yh[:4] *= -1
    clf = getattr(mklcore, estimator)(kernels=[lambda A, B: 1e12 * (A @ B.T), gaussian()])
    with pytest.warns(ConvergenceWarning, match=r"traces differ by a factor 2\.8e\+12"):
        clf.fit(Xh, yh)
    assert not clf.converged_
