"""mklcore: multiple kernel learning solvers and reproductions of five MKL papers.

Two layers per method: a ``*_solve`` function on a precomputed Gram stack of shape
``(n_kernels, n, n)`` returning an :class:`MKLResult`, and a scikit-learn estimator that
works on raw features. Submodules: ``kernels``, ``datasets``, ``experiments``, ``plotting``,
``reporting``, ``svm`` and one module per method family.
"""

from . import datasets, experiments, kernels, plotting, reference, reporting, svm
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
from .lpnorm import LpMKLClassifier, SumKernelSVC, lpmkl_solve, sum_kernel_svm_solve
from .silp import SILPMKLClassifier, silp_solve
from .simplemkl import SimpleMKLClassifier, simplemkl_solve
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
]
