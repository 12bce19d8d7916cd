r"""Geometry of the admissible $(\alpha, \beta)$ region and of the stability region $|R(z)| \le 1$.

`region_grid` is vectorised `jax.numpy` code; the boundary, the radius, the axis limits
and the leftmost point are Python-level searches (scan, then bisection) that return floats.
"""

import functools
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float

from ._polynomial import ZERO_TOL, check_inputs, numpy_admissible, polyval, trimmed_coefficients
from .drift import is_admissible
from .tableaus import ExplicitRungeKutta

_SCAN = 4096  # points in the coarse scans that bracket a crossing before bisection
_BISECT = 200  # bisection iterations (stop early at machine precision)


class RegionGrid(NamedTuple):
    """Admissible pairs on a grid: `admissible[i, j]` is the pair `(alpha[i], beta[j])`."""

    alpha: Float[Array, " na"]
    beta: Float[Array, " nb"]
    admissible: Bool[Array, "na nb"]


def region_grid(
    method: ExplicitRungeKutta, h: float, alpha_max: float | None = None, beta_max: float | None = None, n: int = 201
) -> RegionGrid:
    r"""Map admissible $(\alpha, \beta)$ on an `n` x `n` grid over $[0, \alpha_{max}] \times [0, \beta_{max}]$.

    Default limits: the radius $r$ of the stability region (`region_radius`) over $h$,
    which contains every admissible pair ($|h\lambda| \le r$).
    """
    check_inputs("region_grid", h=h)
    if n < 2:
        raise ValueError(f"region_grid: n must be at least 2, got {n}.")
    r = region_radius(method) / h
    alpha_max = r if alpha_max is None else alpha_max
    beta_max = r if beta_max is None else beta_max
    check_inputs("region_grid", alpha_max=alpha_max, beta_max=beta_max)
    alpha = jnp.linspace(0.0, alpha_max, n)
    beta = jnp.linspace(0.0, beta_max, n)
    return RegionGrid(alpha, beta, is_admissible(method, alpha[:, None], beta[None, :], h))


class RegionBoundary(NamedTuple):
    r"""For each `alpha`, the admissible $\beta$ lie in `[beta_lower, beta_upper]` (NaN: none)."""

    alpha: Float[np.ndarray, " na"]
    beta_lower: Float[np.ndarray, " na"]
    beta_upper: Float[np.ndarray, " na"]


def region_boundary(method: ExplicitRungeKutta, h: float, alpha) -> RegionBoundary:
    r"""Smallest and largest admissible $\beta$ for each $\alpha$ (bisection).

    For each $\alpha$ a scan of $\beta \in [0, 1.01\,r/h]$ (4096 points, $r$ =
    `region_radius`) brackets the first and last admissible $\beta$, then bisection
    refines both to machine precision. For the built-in and diffrax methods the
    admissible $\beta$ form one interval; a gap narrower than the scan spacing would not
    be seen (use `region_grid` to look). $\beta_{lower} > 0$ when $2h\alpha$ lies
    beyond the real-axis limit: the faster real root must be slowed by a larger $\beta$.
    """
    check_inputs("region_boundary", h=h, alpha=alpha)
    alpha = np.atleast_1d(np.asarray(alpha, float))
    scan = np.linspace(0.0, 1.01 * region_radius(method) / h, _SCAN)
    admissible_z = numpy_admissible(trimmed_coefficients(method))

    def ok(a, beta):  # vectorised admissibility of pairs (numpy)
        d = (a - beta) * (a + beta) + 0j
        return admissible_z(h * (-a + np.sqrt(d))) & admissible_z(h * (-a - np.sqrt(d)))

    grid = ok(alpha[:, None], scan[None, :])
    has = grid.any(axis=1)
    first = np.argmax(grid, axis=1)
    last = scan.size - 1 - np.argmax(grid[:, ::-1], axis=1)
    pred = lambda beta: ok(alpha, beta)
    # bracket [good, bad] for each alpha; index 0 needs no refinement (beta = 0 itself)
    lower = _bisect_vec(pred, scan[first], np.where(first > 0, scan[np.maximum(first - 1, 0)], scan[first]))
    upper = _bisect_vec(pred, scan[last], scan[np.minimum(last + 1, scan.size - 1)])
    return RegionBoundary(alpha, np.where(has, lower, np.nan), np.where(has, upper, np.nan))


def _bisect_vec(pred, good: np.ndarray, bad: np.ndarray) -> np.ndarray:
    """Elementwise bisection; `pred` maps an array of points to booleans."""
    good, bad = good.copy(), bad.copy()
    for _ in range(_BISECT):
        mid = 0.5 * (good + bad)
        if np.all((mid == good) | (mid == bad)):
            break
        p = pred(mid)
        good, bad = np.where(p, mid, good), np.where(p, bad, mid)
    return good


def _bisect(pred, good: float, bad: float) -> float:
    """Bisection between a point where `pred` holds and one where it fails; returns the good end."""
    for _ in range(_BISECT):
        mid = 0.5 * (good + bad)
        if mid in (good, bad):
            break
        good, bad = (mid, bad) if pred(mid) else (good, mid)
    return good


def _consistent_coefficients(method: ExplicitRungeKutta) -> np.ndarray:
    """The trimmed coefficients of R; `ValueError` when R is constant (no region to measure)."""
    gamma = trimmed_coefficients(method)
    if gamma.size == 1:
        raise ValueError(f"region_radius: {method.name} has R(z) = 1 (b sums to zero); not a consistent method.")
    return gamma


def region_radius(method: ExplicitRungeKutta) -> float:
    r"""A radius $r$ with $|R(z)| > 1$ for all $|z| > r$: the stability region lies in $|z| \le r$.

    Smallest $r \ge 1$ with $|\gamma_d| r^d > 1 + \sum_{k<d} |\gamma_k| r^k$, $d$ the
    degree of $R$.
    """
    return _radius(_consistent_coefficients(method))


def _radius(gamma: np.ndarray) -> float:
    lead, rest = abs(gamma[-1]), np.abs(gamma[:-1])
    outside = lambda r: lead * r ** (gamma.size - 1) > 1 + polyval(rest, r)
    hi = 1.0
    while not outside(hi):
        hi *= 2
    lo = hi / 2 if hi > 1 else 0.0
    return _bisect(outside, hi, lo) if hi > 1 else 1.0


def _first_crossing(g: np.ndarray, ref: np.ndarray, t_max: float, inside) -> float:
    """First t > 0 where the polynomial g (lowest coefficient first) turns positive.

    Low-order coefficients that are round-off (|g_k| <= tol * ref_k) are dropped and the
    polynomial divided by the power of t they leave, so the sign next to 0 is exact.
    The scan uses g; the final bisection uses `inside(t)` (|R| <= 1 evaluated directly)
    so that the returned point is admissible by the same test as `is_admissible`.
    Returns 0 when g is positive right after 0.
    """
    k0 = 0
    while k0 < g.size and abs(g[k0]) <= ZERO_TOL * ref[k0]:
        k0 += 1
    g = g[k0:]
    if g[0] > 0:
        return 0.0
    t = np.linspace(0.0, t_max, _SCAN)
    pos = np.flatnonzero(polyval(g, t) > 0)
    if pos.size == 0:
        raise RuntimeError("stability: no boundary crossing found below the region radius (report this).")
    i = pos[0]
    return _bisect(lambda x: bool(inside(x)), t[i - 1], t[i])


def _abs_squared_minus_one(gamma: np.ndarray, unit: complex):
    """Coefficients (in t) of |R(unit t)|^2 - 1 and of the magnitudes that formed them."""
    powers = unit ** np.arange(gamma.size)
    re, im = (gamma * powers).real, (gamma * powers).imag
    g = np.convolve(re, re) + np.convolve(im, im)
    g[0] -= 1.0
    ref = np.convolve(np.abs(re), np.abs(re)) + np.convolve(np.abs(im), np.abs(im))
    ref[0] += 1.0
    return g, ref


def _axis_limit(gamma: np.ndarray, unit: complex) -> float:
    g, ref = _abs_squared_minus_one(gamma, unit)
    inside = numpy_admissible(gamma)
    return _first_crossing(g, ref, 1.01 * _radius(gamma), lambda t: inside(unit * t))


def real_axis_limit(method: ExplicitRungeKutta) -> float:
    r"""Left end $x_r < 0$ of the real interval $[x_r, 0]$ of the stability region.

    The first $x < 0$ where $|R(x)|$ exceeds 1 (RK4: $-2.785293563$, Euler: $-2$).
    """
    return -_axis_limit(_consistent_coefficients(method), -1.0 + 0j)


def imaginary_axis_limit(method: ExplicitRungeKutta) -> float:
    r"""Largest $y_i \ge 0$ with $|R(iy)| \le 1$ on all of $[0, y_i]$.

    RK4: $2\sqrt 2$; 0 for methods whose region misses the imaginary axis near 0
    (Euler, Heun). Computed from the exact polynomial $|R(iy)|^2 - 1$, so the sign
    of its lowest term (order $y^{p+1}$ or higher) decides next to 0, not round-off.
    """
    return _axis_limit(_consistent_coefficients(method), 1j)


def leftmost_point(method: ExplicitRungeKutta) -> complex:
    r"""The point $z$ of the stability region ($\operatorname{Im} z \ge 0$) with the smallest real part.

    The largest drift decay rate any admissible pair can have is $-\operatorname{Re} z / h$.
    For each height $y$ the leftmost admissible $x$ on the line $\operatorname{Im} z = y$
    is bracketed by a scan (1024 points) and bisected; the best of 257 heights over the
    region's bounding box is refined three times on 65 heights around it. Ties with the
    real axis (within 1e-12 relative) go to the real-axis limit, i.e. critical damping.
    Cached per stability polynomial.
    """
    # The search depends on R only and plots and `recommend` ask again for the same
    # method: cache on the coefficients (a tuple of floats is hashable; the tableau,
    # holding arrays, is not, and `from_diffrax` builds a new one on every call).
    return _leftmost_point(tuple(_consistent_coefficients(method).tolist()))


@functools.lru_cache(maxsize=64)
def _leftmost_point(coefficients: tuple[float, ...]) -> complex:
    gamma = np.array(coefficients, dtype=np.float64)
    r = 1.01 * _radius(gamma)
    xs = np.linspace(-r, 0.0, 1024)
    admissible = numpy_admissible(gamma)

    def leftmost_x(ys):  # leftmost admissible x on each line Im z = y (inf: none)
        grid = admissible(xs[None, :] + 1j * ys[:, None])
        has, first = grid.any(axis=1), np.argmax(grid, axis=1)
        pred = lambda x: admissible(x + 1j * ys)
        x = _bisect_vec(pred, xs[first], xs[np.maximum(first - 1, 0)])
        return np.where(has, x, np.inf)

    ys = np.linspace(0.0, r, 257)
    for _ in range(4):  # coarse pass, then three zooms around the best height
        x_of_y = leftmost_x(ys)
        j = int(np.argmin(x_of_y))
        dy = ys[1] - ys[0]
        best = complex(x_of_y[j], ys[j])
        ys = np.linspace(max(0.0, ys[j] - 2 * dy), ys[j] + 2 * dy, 65)
    x_axis = -_axis_limit(gamma, -1.0 + 0j)
    return complex(x_axis, 0.0) if x_axis <= best.real + 1e-12 * abs(x_axis) else best
