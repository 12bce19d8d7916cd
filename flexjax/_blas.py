"""One thread for the BLAS under XLA's CPU LAPACK kernels, unless the user chose.

On CPU, `jnp.linalg.solve`, `inv` and `lstsq` call LAPACK from the OpenBLAS that scipy
ships, which starts its own threads for matrices of a few dozen rows. Inside a compiled
Newton loop those threads compete with XLA's and with any other load; on a 2-core
machine a kept-matrix run of the flexible slider-crank (26 coordinates) took 0.6–1.5 s
instead of 0.06–0.2 s, and a 262 x 262 solve 140 ms instead of 1.6 ms (docs/performance.md).
`OPENBLAS_NUM_THREADS` is read when that library is loaded (the first LAPACK call), so
it is set here when the user has set none of the usual variables; if the library is
already loaded, its thread count is set through its own function. A user who sets
`OPENBLAS_NUM_THREADS` (or `OMP_NUM_THREADS`) keeps that choice.
"""

import ctypes
import os
import sys

_USER_CHOICE = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "GOTO_NUM_THREADS")


def _loaded_scipy_openblas():
    """Paths of scipy's OpenBLAS libraries mapped into this process (Linux)."""
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        return []
    return sorted(
        {line.split()[-1] for line in maps.splitlines() if "scipy.libs" in line and "openblas" in line.split()[-1]}
    )


def single_threaded_blas() -> None:
    """Make scipy's OpenBLAS single-threaded unless the user chose a thread count."""
    if any(name in os.environ for name in _USER_CHOICE):
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    if "scipy" not in sys.modules:
        return  # loaded later, with the variable set
    for path in _loaded_scipy_openblas():
        try:
            lib = ctypes.CDLL(path)
            lib.scipy_openblas_set_num_threads(1)
        except (OSError, AttributeError):
            pass
