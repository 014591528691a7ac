"""mklcore: multiple kernel learning solvers and reproductions of five MKL papers."""

__version__ = "0.1.0"
