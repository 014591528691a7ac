"""The public extension points of mklcore: what a new method or estimator builds on.

* :class:`BaseMKLClassifier` -- the one estimator base: kernel building from ``kernels=``,
  label encoding, fitting through the subclass's ``_solve(K, y)``, prediction, fitted
  attributes. A new estimator defines ``__init__``, ``_parameter_constraints`` and ``_solve``.
* :class:`Monitor` -- the one iteration contract of every solver loop: a history row per
  iteration, the callback, the stop test, the status codes and the final
  :class:`MKLResult`.
* :class:`MKLResult` -- the one result type of every ``*_solve`` function.
* :class:`WeightStep` -- the weight update of an SVM-wrapper method; the shared loop
  :func:`mklcore.wrapper.run_wrapper` does the rest (SVM engine, warm starts, certificates).

A weight step of four lines is a complete certified MKL solver: see the example in
:mod:`mklcore.wrapper` (``HalfStep``) and the README's "Adding a method".
"""

from ._base import BaseMKLClassifier
from ._result import MKLResult, Monitor
from .wrapper import WeightStep

__all__ = ["BaseMKLClassifier", "Monitor", "MKLResult", "WeightStep"]
