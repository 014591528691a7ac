"""Cholesky factorisation and solves through LAPACK, without scipy's per-call wrappers.

The routines behind ``scipy.linalg.cholesky`` / ``cho_factor``, ``cho_solve`` and
``solve_triangular``, called with the arguments those functions pass (so the results are the
same to the last bit), for the many small systems of the RLS2 and Q-MKL solvers, where
scipy's input validation costs more than the factorisation. Inputs are float64 arrays.

:func:`one_blas_thread` runs a block with the BLAS/LAPACK libraries on one thread: OpenBLAS
splits ``dgemv`` (for some sizes), ``dgemm``, long ``ddot``, ``dpotrf``, ``dsyevd``,
``dgelsd`` and ``dgetrf`` between its threads and rounds the pieces differently, so only
results computed on one thread have the same bits for every thread count.
"""

import functools

import numpy as np
from scipy.linalg import get_lapack_funcs

__all__ = ["cholesky", "cholesky_solve", "lower_triangular_solve", "one_blas_thread",
           "on_one_blas_thread"]

#: the BLAS libraries of the process (created on first use, after NumPy and SciPy loaded them)
_BLAS = None


def one_blas_thread():
    """Context manager: the BLAS/LAPACK libraries use one thread inside the block.

    For solvers whose bits must not depend on the thread count (OpenBLAS splits matrix-vector
    and matrix products, factorisations and eigensolvers between its threads and rounds the
    pieces differently). The previous limits are restored on exit; about 40 microseconds per
    block (``threadpoolctl``). OpenBLAS's limit is process-wide and ``threadpoolctl`` lets one
    thread at a time set it: solvers run concurrently in threads of one process share the
    limit of the thread that set it (run them in processes, e.g. joblib's loky, for bits
    independent of the thread count; :func:`mklcore.experiments.run` caps every worker's
    threads anyway).

    Returns
    -------
    limiter : context manager
    """
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController().select(user_api="blas")
    return _BLAS.limit(limits=1)


def on_one_blas_thread(func):
    """Decorator: ``func`` runs inside :func:`one_blas_thread`.

    Parameters
    ----------
    func : callable

    Returns
    -------
    wrapped : callable
    """
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        with one_blas_thread():
            return func(*args, **kwargs)
    return wrapped

_POTRF, _POTRS, _TRTRS = get_lapack_funcs(("potrf", "potrs", "trtrs"), (np.empty(1),))


def cholesky(A, *, lower, clean=True, overwrite_a=False):
    """Cholesky factor of a symmetric positive definite ``A`` (``dpotrf``).

    Parameters
    ----------
    A : ndarray of shape (n, n)
    lower : bool
        Lower factor (else upper).
    clean : bool, default=True
        Zero the other triangle (as ``cholesky``; ``cho_factor`` passes False).
    overwrite_a : bool, default=False
        Allow LAPACK to overwrite ``A``.

    Returns
    -------
    c : ndarray of shape (n, n)

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A`` is not positive definite.
    """
    c, info = _POTRF(A, lower=int(lower), clean=int(clean), overwrite_a=int(overwrite_a))
    if info > 0:
        raise np.linalg.LinAlgError(f"{info}-th leading minor of the array is not positive "
                                    f"definite")
    if info < 0:  # pragma: no cover - argument error
        raise ValueError(f"illegal value in argument {-info} of POTRF")
    return c


def cholesky_solve(c, B, *, lower):
    """``A^{-1} B`` from the Cholesky factor ``c`` of ``A`` (``dpotrs``, as ``cho_solve``).

    Parameters
    ----------
    c : ndarray of shape (n, n)
        Factor from :func:`cholesky`.
    B : ndarray of shape (n,) or (n, k)
    lower : bool
        Whether ``c`` is the lower factor.

    Returns
    -------
    x : ndarray of the shape of ``B``
    """
    x, info = _POTRS(c, B, lower=int(lower))
    if info != 0:  # pragma: no cover - argument error
        raise ValueError(f"illegal value in argument {-info} of POTRS")
    return x


def lower_triangular_solve(L, B):
    """``L^{-1} B`` for a lower triangular ``L`` (as ``solve_triangular(L, B, lower=True)``).

    Parameters
    ----------
    L : ndarray of shape (n, n)
    B : ndarray of shape (n,) or (n, k)

    Returns
    -------
    x : ndarray of the shape of ``B``
    """
    if L.flags.f_contiguous:
        x, info = _TRTRS(L, B, lower=1, trans=0, unitdiag=0)
    else:  # the transposed system, as LAPACK expects Fortran order
        x, info = _TRTRS(L.T, B, lower=0, trans=1, unitdiag=0)
    if info > 0:  # pragma: no cover - a Cholesky factor has a positive diagonal
        raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal {info - 1}")
    if info < 0:  # pragma: no cover - argument error
        raise ValueError(f"illegal value in argument {-info} of TRTRS")
    return x
