"""mklcore: multiple kernel learning solvers and reproductions of five MKL papers.

Two layers per method: a ``*_solve`` function on a precomputed Gram stack of shape
``(n_kernels, n, n)`` returning an :class:`MKLResult`, and a scikit-learn estimator that
works on raw features. Submodules: ``kernels``, ``datasets``, ``svm``, ``reference`` (cvxpy
oracles) and one module per method family. Reproducing the papers (experiment runner, reports,
plots, one module per paper) is :mod:`mklcore.repro`, which the core never imports.
"""

import importlib

from ._result import BudgetExhausted, MKLResult, TimeLimit, decision

__version__ = "0.1.0"

#: public name -> submodule that defines it; loaded on first access (PEP 562), so that
#: ``import mklcore`` imports neither scikit-learn nor pandas until a solver is used
_LAZY = {
    **dict.fromkeys(["svm_solve"],
                    "svm"),
    **dict.fromkeys(["KernelBank", "alignment", "as_kernel", "fit_kernels", "is_psd",
         "kernel_bank", "kernel_stack", "normalize_cosine", "normalize_trace"],
                    "kernels"),
    **dict.fromkeys(["add_label_noise", "fetch_14cancer", "fetch_servo", "fetch_wpbc",
         "gauss4_bayes_accuracy", "gauss4_bayes_predict", "list_datasets",
         "load_auto_mpg", "load_banana", "load_bupa", "load_cpu",
         "load_dataset", "load_digits", "load_german", "load_heart",
         "load_housing", "load_ionosphere", "load_khan", "load_liver",
         "load_mfeat", "load_mnist", "load_nci60", "load_pima",
         "load_prostate", "load_ringnorm", "load_sonar", "load_spambase",
         "load_splice", "load_wdbc", "make_binary_strings", "make_gauss4",
         "make_synthetic_dna", "load_magic", "load_letter", "make_ringnorm", "make_twonorm"],
                    "datasets"),
    **dict.fromkeys(["SumKernelSVC", "sum_kernel_svm_solve", "LpMKLClassifier", "lpmkl_solve",
         "SumKernelSVR", "sum_kernel_svr_solve", "LpMKLRegressor", "lpmkl_svr_solve"],
                    "lpnorm"),
    **dict.fromkeys(["SimpleMKLClassifier", "simplemkl_solve", "SimpleMKLRegressor",
         "simplemkl_svr_solve"],
                    "simplemkl"),
    **dict.fromkeys(["SILPMKLClassifier", "silp_solve", "SILPMKLRegressor", "silp_svr_solve"],
                    "silp"),
    **dict.fromkeys(["StPMKLClassifier", "MiPMKLClassifier", "stpmkl_solve", "mipmkl_solve",
         "stpmkl_grid", "stpmkl_decision"],
                    "stpmkl"),
    **dict.fromkeys(["QMKLClassifier", "QSVMClassifier", "qmkl_solve", "qsvm_solve",
         "graph_laplacian", "block_diagonal_q", "grid_laplacian",
         "q_from_correlation", "q_from_alpha_covariance"],
                    "qmkl"),
    **dict.fromkeys(["RLS2Regressor", "RLS2Classifier", "LinearRLS2Regressor",
         "LinearRLS2Classifier", "rls2_solve", "rls2_path",
         "rls2_linear_solve", "rls2_linear_path", "rls2_scaling",
         "rls2_decision"],
                    "rls2"),
    **dict.fromkeys(["LMKLClassifier", "lmkl_solve", "lmkl_decision"],
                    "localized"),
    **dict.fromkeys(["SOLVERS", "SolverInfo", "get_solver", "list_solvers"],
                    "registry"),
}
__all__ = ["MKLResult", "decision", "TimeLimit", "BudgetExhausted", *_LAZY]

_SUBMODULES = ("base", "datasets", "kernels", "localized", "lpnorm", "masters", "qmkl",
               "reference", "registry", "repro", "rls2", "silp", "simplemkl", "stpmkl", "svm",
               "tasks", "wrapper")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mklcore' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))

