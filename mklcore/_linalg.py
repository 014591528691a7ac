"""Cholesky factorisation and solves through LAPACK, without scipy's per-call wrappers.

The routines behind ``scipy.linalg.cholesky`` / ``cho_factor``, ``cho_solve`` and
``solve_triangular``, called with the arguments those functions pass (so the results are the
same to the last bit), for the many small systems of the RLS2 and Q-MKL solvers. Inputs are
float64 arrays.

:func:`one_blas_thread` runs a block with BLAS/LAPACK on one thread: OpenBLAS splits products,
factorisations and eigensolvers between its threads and rounds the pieces differently, so only
one-thread results have the same bits for every thread count. The limit is process-wide: solvers
run concurrently in threads of one process share it (use processes for thread-independent bits).
"""

import functools

import numpy as np
from scipy.linalg import get_lapack_funcs

__all__ = ["cholesky", "cholesky_solve", "lower_triangular_solve", "one_blas_thread",
           "on_one_blas_thread"]

#: the BLAS libraries of the process (created on first use, after NumPy and SciPy loaded them)
_BLAS = None


def one_blas_thread():
    """Context manager: BLAS/LAPACK on one thread inside the block (``threadpoolctl``)."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController().select(user_api="blas")
    return _BLAS.limit(limits=1)


def on_one_blas_thread(func):
    """Decorator: ``func`` runs inside :func:`one_blas_thread`."""
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        with one_blas_thread():
            return func(*args, **kwargs)
    return wrapped


_POTRF, _POTRS, _TRTRS = get_lapack_funcs(("potrf", "potrs", "trtrs"), (np.empty(1),))


def cholesky(A, *, lower, clean=True, overwrite_a=False):
    """Cholesky factor of an SPD ``A`` (``dpotrf``; ``clean=False`` as ``cho_factor``)."""
    c, info = _POTRF(A, lower=int(lower), clean=int(clean), overwrite_a=int(overwrite_a))
    if info > 0:
        raise np.linalg.LinAlgError(f"{info}-th leading minor of the array is not positive "
                                    f"definite")
    if info < 0:  # pragma: no cover - argument error
        raise ValueError(f"illegal value in argument {-info} of POTRF")
    return c


def cholesky_solve(c, B, *, lower):
    """``A^{-1} B`` from the Cholesky factor ``c`` of ``A`` (``dpotrs``, as ``cho_solve``)."""
    x, info = _POTRS(c, B, lower=int(lower))
    if info != 0:  # pragma: no cover - argument error
        raise ValueError(f"illegal value in argument {-info} of POTRS")
    return x


def lower_triangular_solve(L, B):
    """``L^{-1} B`` for a lower triangular ``L`` (as ``solve_triangular(L, B, lower=True)``)."""
    if L.flags.f_contiguous:
        x, info = _TRTRS(L, B, lower=1, trans=0, unitdiag=0)
    else:  # the transposed system, as LAPACK expects Fortran order
        x, info = _TRTRS(L.T, B, lower=0, trans=1, unitdiag=0)
    if info > 0:  # pragma: no cover - a Cholesky factor has a positive diagonal
        raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal {info - 1}")
    if info < 0:  # pragma: no cover - argument error
        raise ValueError(f"illegal value in argument {-info} of TRTRS")
    return x
