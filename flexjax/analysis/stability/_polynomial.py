"""The stability polynomial in numpy, for the Python-level searches (no JAX dispatch),
and the input checks shared by the public functions."""

from typing import TYPE_CHECKING

import numpy as np

from ..._checks import is_concrete

if TYPE_CHECKING:
    from .tableaus import ExplicitRungeKutta

# Round-off allowance in |R| <= 1 (R(0) = 1 exactly; points next to the origin may land
# a few ulps above 1).
ADMISSIBLE_TOL = 16 * np.finfo(np.float64).eps
# A polynomial coefficient whose magnitude is below this times the sum of the magnitudes
# of the terms that formed it is round-off, i.e. zero.
ZERO_TOL = 1024 * np.finfo(np.float64).eps


def coefficient_magnitudes(method: "ExplicitRungeKutta") -> np.ndarray:
    r"""$|b|^T |A|^{k-1} \mathbb 1$ for $k = 0 \dots s$ (1 for $k = 0$).

    It bounds the terms that sum to $\gamma_k$: the scale of its round-off.
    """
    a, b = np.abs(np.asarray(method.a)), np.abs(np.asarray(method.b))
    v, out = np.ones_like(b), [1.0]
    for _ in range(method.stages):
        out.append(b @ v)
        v = a @ v
    return np.array(out)


def trimmed_coefficients(method: "ExplicitRungeKutta") -> np.ndarray:
    """The coefficients of $R$, lowest first, without the highest ones that are zero up to
    round-off (e.g. FSAL stages with $b = 0$)."""
    gamma, ref = np.asarray(method.coefficients()), coefficient_magnitudes(method)
    d = gamma.size
    while d > 1 and abs(gamma[d - 1]) <= ZERO_TOL * ref[d - 1]:
        d -= 1
    return gamma[:d]


def polyval(coeffs: np.ndarray, t):
    """The polynomial with `coeffs` (lowest first) at `t` (Horner's scheme, numpy)."""
    t = np.asarray(t)
    out = np.zeros(t.shape, np.result_type(t, coeffs, float)) + coeffs[-1]
    for ck in coeffs[-2::-1]:
        out = out * t + ck
    return out


def numpy_admissible(gamma: np.ndarray):
    """`admissible(z)`: |R(z)| <= 1 in numpy, `gamma` the (trimmed) coefficients of R."""
    return lambda z: np.abs(polyval(gamma, np.asarray(z) + 0j)) <= 1 + ADMISSIBLE_TOL


def check_inputs(owner: str, h=None, **nonnegative) -> None:
    """`ValueError` for a concrete h <= 0 or a concrete negative alpha/beta."""
    if h is not None and is_concrete(h):
        hv = np.asarray(h)
        if not np.all(np.isfinite(hv)) or np.any(hv <= 0):
            raise ValueError(f"{owner}: the step h must be positive and finite, got {hv}.")
    for name, x in nonnegative.items():
        if is_concrete(x):
            xv = np.asarray(x)
            if not np.all(np.isfinite(xv)) or np.any(xv < 0):
                raise ValueError(
                    f"{owner}: `{name}` must be non-negative and finite (1/s), got {xv}; "
                    "negative Baumgarte parameters make the drift equation itself unstable."
                )
