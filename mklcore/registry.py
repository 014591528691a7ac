"""A registry of every mklcore solve path: name -> solve function, estimator and defaults.

One :class:`SolverInfo` per way of solving a problem (``"lpmkl_analytic"`` and
``"lpmkl_newton"`` are two entries of the same method), so that code that loops over
methods -- the contract tests, experiment dispatchers, plot colours (:attr:`SolverInfo.color`)
-- reads one table
instead of repeating it. Functions and estimators are stored as ``"module:name"`` strings
and imported on first use, so importing the registry imports no solver.

Examples
--------
>>> from mklcore.registry import get_solver, list_solvers
>>> info = get_solver("lpmkl_analytic")
>>> dict(info.options), info.tol, info.inputs
({'solver': 'analytic'}, 1e-05, 'kernels')
>>> "rls2" in list_solvers(task="regression")
True
"""
import importlib
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["SolverInfo", "SOLVERS", "INPUTS", "TASKS", "get_solver", "list_solvers"]

#: what a solve function takes before its keyword arguments
INPUTS = MappingProxyType({
    "kernels": "(K, y): a Gram stack of shape (n_kernels, n, n) and labels",
    "kernels+Q": "(K, y, Q): a Gram stack, labels and the kernel-coupling matrix Q",
    "kernels+gate": "(K, y, X_gate): a Gram stack, labels and the gating features",
    "features": "(X, y): a feature matrix of shape (n, n_features) and targets",
    "features+Q": "(X, y, Q): a feature matrix, labels and the feature-coupling matrix Q",
})

#: the learning tasks of the registry
TASKS = ("classification", "regression")


def _resolve(ref):
    module, name = ref.split(":")
    return getattr(importlib.import_module(f"mklcore.{module}"), name)


@dataclass(frozen=True)
class SolverInfo:
    """How to run one solve path of mklcore.

    Parameters
    ----------
    name : str
        Registry key, e.g. ``"lpmkl_newton"``.
    label : str
        Human-readable name for tables and legends, e.g. ``"LpMKL (Newton)"``.
    solve_ref : str
        ``"module:function"`` of the solve function inside :mod:`mklcore`.
    estimator_ref : str or None
        ``"module:class"`` of the matching scikit-learn estimator (``None``: none).
    options : mapping
        Read-only keyword arguments that select this path of the solve function (e.g.
        ``{"solver": "newton"}``); passed by :meth:`run` and :meth:`make_estimator`.
    tol : float or None
        Default stopping tolerance of the solve function (``None``: no stopping test by
        default, the loop runs its budget).
    task : {"classification", "regression"}
        Learning task (classification: binary labels; regression: real targets).
    inputs : str
        Positional inputs of the solve function, a key of :data:`INPUTS`.
    paper : str
        Paper that defines or evaluates the method (``"author year"``).
    method : str
        ``result.method`` of the returned :class:`~mklcore.MKLResult`.
    budget : str or None, default="max_iter"
        Name of the keyword that caps the outer iterations (``None``: a single solve with
        no outer loop).
    required : tuple of str, default=()
        Keyword arguments the solve function needs (no default), e.g. ``("lam",)``.
    bias : bool, default=True
        Whether the model has a fitted intercept (``False`` e.g. for StPMKL).
    color : str, default="#3d3d3d"
        Plot colour (hex), shared by the solve paths of one method, so that a method has one
        colour in every figure (``mklcore.repro.plotting.method_palette``).
    """

    name: str
    label: str
    solve_ref: str
    estimator_ref: str
    options: dict
    tol: float
    task: str
    inputs: str
    paper: str
    method: str
    budget: str = "max_iter"
    required: tuple = ()
    bias: bool = True
    color: str = "#3d3d3d"

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}; got {self.task!r}.")
        if self.inputs not in INPUTS:
            raise ValueError(f"inputs must be one of {sorted(INPUTS)}; got {self.inputs!r}.")
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @property
    def solve(self):
        """The solve function (imported on first access).

        Returns
        -------
        solve : callable
        """
        return _resolve(self.solve_ref)

    @property
    def estimator(self):
        """The matching estimator class (imported on first access), or ``None``.

        Returns
        -------
        estimator : type or None
        """
        return None if self.estimator_ref is None else _resolve(self.estimator_ref)

    def run(self, *args, **kwargs):
        """Call the solve function with this path's :attr:`options`.

        Parameters
        ----------
        *args
            Positional inputs, as described by :attr:`inputs` (e.g. ``K, y``).
        **kwargs
            Further keyword arguments of the solve function; they may not change
            :attr:`options`.

        Returns
        -------
        result : MKLResult
        """
        clash = sorted(k for k in kwargs if k in self.options and kwargs[k] != self.options[k])
        if clash:
            raise ValueError(f"{self.name!r} fixes {clash}; use another registry entry.")
        return self.solve(*args, **{**self.options, **kwargs})

    def make_estimator(self, **params):
        """The estimator of this path with its :attr:`options` set.

        Parameters
        ----------
        **params
            Further estimator parameters.

        Returns
        -------
        estimator : estimator instance
        """
        if self.estimator_ref is None:
            raise ValueError(f"{self.name!r} has no estimator.")
        return self.estimator(**{**self.options, **params})


#: plot colour of each method (seaborn's "colorblind" palette); the sum kernel is grey
_COLORS = {"simplemkl": "#0173b2", "lpmkl": "#de8f05", "silp": "#029e73", "stpmkl": "#d55e00",
           "mipmkl": "#cc78bc", "qmkl": "#ca9161", "qsvm": "#fbafe4", "sum_kernel": "#949494",
           "rls2": "#ece133", "linear_rls2": "#ece133", "lmkl": "#56b4e9"}


def _info(name, label, solve_ref, estimator_ref, *, tol, paper, method, task="classification",
          inputs="kernels", options=None, color=None, **kw):
    return SolverInfo(name=name, label=label, solve_ref=solve_ref, estimator_ref=estimator_ref,
                      options=dict(options or {}), tol=tol, task=task, inputs=inputs,
                      paper=paper, method=method, color=color or _COLORS[method], **kw)


_KLOFT, _YANG = "Kloft et al. 2009", "Yang et al. 2012"
_ENTRIES = [
    _info("sum_kernel", "Sum kernel (uniform weights)", "lpnorm:sum_kernel_svm_solve",
          "lpnorm:SumKernelSVC", tol=None, paper=_KLOFT, method="lpmkl", budget=None,
          color=_COLORS["sum_kernel"]),
    _info("lpmkl_newton", "LpMKL (Newton)", "lpnorm:lpmkl_solve", "lpnorm:LpMKLClassifier",
          tol=1e-5, paper=_KLOFT, method="lpmkl", options={"solver": "newton"}),
    _info("lpmkl_cutting_plane", "LpMKL (cutting plane)", "lpnorm:lpmkl_solve",
          "lpnorm:LpMKLClassifier", tol=1e-5, paper=_KLOFT, method="lpmkl",
          options={"solver": "cutting_plane"}),
    _info("lpmkl_analytic", "LpMKL (analytic)", "lpnorm:lpmkl_solve", "lpnorm:LpMKLClassifier",
          tol=1e-5, paper=_KLOFT, method="lpmkl", options={"solver": "analytic"}),
    _info("simplemkl", "SimpleMKL", "simplemkl:simplemkl_solve",
          "simplemkl:SimpleMKLClassifier", tol=1e-2, paper="Rakotomamonjy et al. 2008",
          method="simplemkl"),
    _info("silp", "SILP", "silp:silp_solve", "silp:SILPMKLClassifier", tol=1e-5,
          paper="Sonnenburg et al. 2006", method="silp"),
    _info("stpmkl_exact", "StPMKL (exact)", "stpmkl:stpmkl_solve", "stpmkl:StPMKLClassifier",
          tol=1e-2, paper=_YANG, method="stpmkl", options={"solver": "exact"},
          required=("noise_level", "lam"), bias=False),
    _info("stpmkl_amp", "StPMKL (AMP)", "stpmkl:stpmkl_solve", "stpmkl:StPMKLClassifier",
          tol=1e-2, paper=_YANG, method="stpmkl", options={"solver": "amp"},
          required=("noise_level", "lam"), bias=False),
    _info("stpmkl_vi", "StPMKL (VI)", "stpmkl:stpmkl_solve", "stpmkl:StPMKLClassifier",
          tol=1e-2, paper=_YANG, method="stpmkl", options={"solver": "vi"},
          required=("noise_level", "lam"), bias=False),
    _info("mipmkl", "MiPMKL", "stpmkl:mipmkl_solve", "stpmkl:MiPMKLClassifier", tol=1e-2,
          paper=_YANG, method="mipmkl", budget="max_alt", required=("noise_level", "lam"),
          bias=False),
    _info("qmkl", "Q-MKL", "qmkl:qmkl_solve", "qmkl:QMKLClassifier", tol=1e-4,
          paper="Hinrichs et al. 2012", method="qmkl", inputs="kernels+Q"),
    _info("qsvm", "Q-SVM", "qmkl:qsvm_solve", "qmkl:QSVMClassifier", tol=None,
          paper="Hinrichs et al. 2012", method="qsvm", inputs="features+Q", budget=None),
    _info("rls2", "RLS2", "rls2:rls2_solve", "rls2:RLS2Regressor", tol=1e-6,
          paper="Dinuzzo 2010", method="rls2", task="regression", required=("lam",)),
    _info("linear_rls2", "Linear RLS2", "rls2:rls2_linear_solve",
          "rls2:LinearRLS2Regressor", tol=1e-6, paper="Dinuzzo 2010", method="linear_rls2",
          task="regression", inputs="features", required=("lam",)),
    _info("lmkl", "LMKL", "localized:lmkl_solve", "localized:LMKLClassifier", tol=None,
          paper="Gönen and Alpaydın 2008", method="lmkl", inputs="kernels+gate"),
    _info("sum_kernel_svr", "Sum kernel SVR (uniform weights)", "lpnorm:sum_kernel_svr_solve",
          "lpnorm:SumKernelSVR", tol=None, paper=_KLOFT, method="lpmkl", budget=None,
          task="regression", color=_COLORS["sum_kernel"]),
    _info("lpmkl_svr", "LpMKL SVR", "lpnorm:lpmkl_svr_solve", "lpnorm:LpMKLRegressor",
          tol=1e-5, paper=_KLOFT, method="lpmkl", task="regression"),
    _info("simplemkl_svr", "SimpleMKL SVR", "simplemkl:simplemkl_svr_solve",
          "simplemkl:SimpleMKLRegressor", tol=1e-2, paper="Rakotomamonjy et al. 2008",
          method="simplemkl", task="regression"),
    _info("silp_svr", "SILP SVR", "silp:silp_svr_solve", "silp:SILPMKLRegressor", tol=1e-5,
          paper="Sonnenburg et al. 2006", method="silp", task="regression"),
]

#: registry name -> :class:`SolverInfo`, one entry per solve path (read-only)
SOLVERS = MappingProxyType({info.name: info for info in _ENTRIES})


def get_solver(name):
    """The registry entry of a solve path.

    Parameters
    ----------
    name : str
        A key of :data:`SOLVERS`, e.g. ``"simplemkl"``.

    Returns
    -------
    info : SolverInfo
    """
    try:
        return SOLVERS[name]
    except KeyError:
        raise ValueError(f"unknown solver {name!r}; known: {', '.join(SOLVERS)}.") from None


def list_solvers(*, task=None, inputs=None):
    """Names of the registered solve paths, optionally filtered.

    Parameters
    ----------
    task : {"classification", "regression"}, default=None
        Keep only this task.
    inputs : str, default=None
        Keep only this input kind (a key of :data:`INPUTS`).

    Returns
    -------
    names : list of str
        In registry order.
    """
    return [name for name, info in SOLVERS.items()
            if (task is None or info.task == task) and (inputs is None or info.inputs == inputs)]
