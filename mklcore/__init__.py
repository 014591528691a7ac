"""mklcore: multiple kernel learning solvers and reproductions of five MKL papers.

Two layers per method: a ``*_solve`` function on a precomputed Gram stack of shape
``(n_kernels, n, n)`` returning an :class:`MKLResult`, and a scikit-learn estimator that
works on raw features. Submodules: ``kernels``, ``datasets``, ``experiments``, ``plotting``,
``reporting``, ``svm`` and one module per method family.
"""

from . import (datasets, experiments, kernels, localized, lpnorm, plotting, qmkl, reference,
               reporting, rls2, silp, simplemkl, stpmkl, svm)
from ._paths import project_root
from ._result import MKLResult, decision
from .datasets import (add_label_noise, fetch_14cancer, fetch_servo, fetch_wpbc,
                       gauss4_bayes_accuracy, gauss4_bayes_predict, list_datasets, load_auto_mpg,
                       load_banana, load_bupa, load_cpu, load_dataset, load_digits, load_german,
                       load_heart, load_housing, load_ionosphere, load_khan, load_liver,
                       load_mfeat, load_mnist, load_nci60, load_pima, load_prostate,
                       load_ringnorm, load_sonar, load_spambase, load_splice, load_wdbc,
                       make_binary_strings, make_gauss4, make_synthetic_dna)
from .kernels import (KernelBank, alignment, as_kernel, fit_kernels, is_psd, kernel_bank,
                      kernel_stack, normalize_cosine, normalize_trace)
from .localized import LMKLClassifier, LMKLResult, lmkl_decision, lmkl_solve
from .lpnorm import LpMKLClassifier, SumKernelSVC, lpmkl_solve, sum_kernel_svm_solve
from .qmkl import (QMKLClassifier, QSVMClassifier, block_diagonal_q, graph_laplacian,
                   grid_laplacian, q_from_alpha_covariance, q_from_correlation, qmkl_solve,
                   qsvm_solve)
from .rls2 import (LinearRLS2Classifier, LinearRLS2Regressor, RLS2Classifier, RLS2Regressor,
                   RLS2Result, rls2_decision, rls2_linear_path, rls2_linear_solve, rls2_path,
                   rls2_scaling, rls2_solve)
from .silp import SILPMKLClassifier, silp_solve
from .simplemkl import SimpleMKLClassifier, simplemkl_solve
from .stpmkl import (MiPMKLClassifier, StPMKLClassifier, StPMKLResult, mipmkl_solve,
                     stpmkl_decision, stpmkl_grid, stpmkl_solve)
from .svm import svm_solve

__version__ = "0.1.0"

__all__ = [
    "MKLResult", "decision", "project_root", "svm_solve",
    # kernels
    "KernelBank", "alignment", "as_kernel", "fit_kernels", "is_psd", "kernel_bank",
    "kernel_stack", "normalize_cosine", "normalize_trace",
    # datasets
    "add_label_noise", "fetch_14cancer", "fetch_servo", "fetch_wpbc", "gauss4_bayes_accuracy",
    "gauss4_bayes_predict", "list_datasets", "load_auto_mpg", "load_banana", "load_bupa",
    "load_cpu", "load_dataset", "load_digits", "load_german", "load_heart", "load_housing",
    "load_ionosphere", "load_khan", "load_liver", "load_mfeat", "load_mnist", "load_nci60",
    "load_pima", "load_prostate", "load_ringnorm", "load_sonar", "load_spambase",
    "load_splice", "load_wdbc", "make_binary_strings", "make_gauss4", "make_synthetic_dna",
    # methods
    "SumKernelSVC", "sum_kernel_svm_solve", "LpMKLClassifier", "lpmkl_solve",
    "SimpleMKLClassifier", "simplemkl_solve", "SILPMKLClassifier", "silp_solve",
    "StPMKLClassifier", "MiPMKLClassifier", "stpmkl_solve", "mipmkl_solve", "stpmkl_grid",
    "stpmkl_decision", "StPMKLResult",
    "QMKLClassifier", "QSVMClassifier", "qmkl_solve", "qsvm_solve", "graph_laplacian",
    "block_diagonal_q", "grid_laplacian", "q_from_correlation", "q_from_alpha_covariance",
    "RLS2Regressor", "RLS2Classifier", "LinearRLS2Regressor", "LinearRLS2Classifier",
    "rls2_solve", "rls2_path", "rls2_linear_solve", "rls2_linear_path", "rls2_scaling",
    "rls2_decision", "RLS2Result",
    "LMKLClassifier", "lmkl_solve", "lmkl_decision", "LMKLResult",
]
