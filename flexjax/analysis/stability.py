r"""Baumgarte stability regions of one-step integrators (seed 003, SPEC "Analyses").

With Baumgarte stabilization each constraint error $e$ obeys the drift equation
$\ddot e + 2\alpha\dot e + \beta^2 e = 0$, whose eigenvalues are the roots of
$\lambda^2 + 2\alpha\lambda + \beta^2 = 0$,

$$\lambda_\pm = -\alpha \pm \sqrt{\alpha^2 - \beta^2}$$

(a complex pair when $\beta > \alpha$). A one-step method applied to a linear ODE
$\dot y = J y$ with step $h$ gives $y_{n+1} = R(hJ)\,y_n$, $R$ its stability function;
the integrated drift therefore stays bounded exactly when $|R(h\lambda_\pm)| \le 1$.
A pair $(\alpha, \beta)$ that satisfies this for both roots is *admissible* for the
method and the step. Because the roots scale linearly with $(\alpha, \beta)$, the
admissible region at step $h$ is the region at $h = 1$ divided by $h$.

An explicit Runge-Kutta method with Butcher tableau $(A, b, c)$ has the polynomial
stability function $R(z) = 1 + z b^T (I - zA)^{-1}\mathbb 1 = \sum_{k=0}^{s} z^k\, b^T A^{k-1}\mathbb 1$
($A$ strictly lower triangular, so $A^s = 0$). `ExplicitRungeKutta` stores the tableau
and evaluates $R$ from these coefficients; `RK4`, `EULER`, `HEUN` are built in and
`from_diffrax` reads the tableau of a diffrax explicit RK solver.

The region functions (`is_admissible`, `drift_amplification`, `region_grid`) are
vectorised `jax.numpy` code (jit/vmap/grad-friendly); the boundary, axis limits, the
recommendation and the deadbeat pairs are Python-level searches that return floats.
See docs/stability.md for the definitions and the numbers.
"""

import math
import pathlib
from typing import NamedTuple

import diffrax
import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Bool, Complex, Float, Num, Real

from .._checks import is_concrete

# Round-off allowance in |R| <= 1 (R(0) = 1 exactly; points next to the origin may land
# a few ulps above 1).
_ADMISSIBLE_TOL = 16 * np.finfo(np.float64).eps
# A polynomial coefficient whose magnitude is below this times the sum of the magnitudes
# of the terms that formed it is round-off, i.e. zero.
_ZERO_TOL = 1024 * np.finfo(np.float64).eps
_SCAN = 4096  # points in the coarse scans that bracket a crossing before bisection
_BISECT = 200  # bisection iterations (stop early at machine precision)


# --------------------------------------------------------------------------- methods


def _tableau_array(x):
    # The tableau is a fixed property of the method, like diffrax's `ButcherTableau`
    # (numpy arrays): keep concrete values in numpy so that the built-in constants
    # touch no JAX device at import and the checks below can read the values.
    return np.asarray(x, dtype=np.float64) if is_concrete(x) else jnp.asarray(x)


class ExplicitRungeKutta(eqx.Module):
    r"""An explicit Runge-Kutta method, represented by its stability function.

    $R(z) = 1 + z b^T (I - zA)^{-1}\mathbb 1 = \sum_{k=0}^{s} \gamma_k z^k$ with
    $\gamma_0 = 1$, $\gamma_k = b^T A^{k-1}\mathbb 1$: the amplification of one step of
    the method on $\dot y = \lambda y$ with $z = h\lambda$.
    """

    a: Float[np.ndarray, "s s"] = eqx.field(converter=_tableau_array)
    b: Float[np.ndarray, " s"] = eqx.field(converter=_tableau_array)
    c: Float[np.ndarray, " s"] = eqx.field(converter=_tableau_array)
    name: str = eqx.field(static=True, default="explicit RK")

    def __check_init__(self):
        a, b, c = self.a, self.b, self.c
        if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] == 0:
            raise ValueError(f"ExplicitRungeKutta: `a` must be a square s x s matrix with s >= 1, got shape {a.shape}.")
        s = a.shape[0]
        for field, x in (("b", b), ("c", c)):
            if x.shape != (s,):
                raise ValueError(
                    f"ExplicitRungeKutta: `{field}` must have length s = {s} (the size of `a`), got shape {x.shape}."
                )
        if is_concrete(a) and is_concrete(b) and is_concrete(c):
            if not (np.isfinite(a).all() and np.isfinite(b).all() and np.isfinite(c).all()):
                raise ValueError("ExplicitRungeKutta: the tableau contains NaN or inf.")
            upper = np.argwhere(np.triu(a) != 0)
            if upper.size:
                i, j = upper[0]
                raise ValueError(
                    f"ExplicitRungeKutta: `a` must be strictly lower triangular (an explicit method), "
                    f"got a[{i}, {j}] = {a[i, j]}; implicit methods are not supported."
                )

    @property
    def stages(self) -> int:
        """Number of stages $s$."""
        return self.a.shape[0]

    def coefficients(self) -> Float[Array, " degree_plus_one"]:
        r"""Coefficients $\gamma_0 \dots \gamma_s$ of $R(z) = \sum_k \gamma_k z^k$, lowest first."""
        a, b = jnp.asarray(self.a), jnp.asarray(self.b)
        v = jnp.ones_like(b)
        out = [jnp.ones((), b.dtype)]
        for _ in range(self.stages):  # static loop: gamma_k = b . A^(k-1) 1
            out.append(b @ v)
            v = a @ v
        return jnp.stack(out)

    def stability_function(self, z: Num[ArrayLike, "*shape"]) -> Complex[Array, "*shape"]:
        r"""$R(z)$ for complex `z` of any shape (Horner's scheme on the coefficients)."""
        z = jnp.asarray(z) + 0j
        gamma = self.coefficients()
        out = jnp.zeros_like(z) + gamma[-1]
        for k in range(self.stages - 1, -1, -1):
            out = out * z + gamma[k]
        return out

    def linear_order(self) -> int:
        r"""Largest $p$ with $\gamma_k = 1/k!$ for all $k \le p$: $R(z) - e^z = O(z^{p+1})$.

        This is the order on linear problems: at least the classical order (equal to it
        for the built-in and diffrax methods: Euler 1, Heun 2, Bosh3 3, RK4 4,
        Tsit5/Dopri5 5, Dopri8 8).
        """
        gamma = np.asarray(self.coefficients())
        ref = _coefficient_magnitudes(self)
        p = 0
        for k in range(1, gamma.size):
            if abs(gamma[k] - 1 / math.factorial(k)) > _ZERO_TOL * max(ref[k], 1 / math.factorial(k)):
                break
            p = k
        return p


ExplicitRungeKutta.__init__.__doc__ = r"""**Arguments:**

- `a`: the $s \times s$ Runge-Kutta matrix, strictly lower triangular.
- `b`: the $s$ weights.
- `c`: the $s$ nodes (stored for completeness; $R$ does not depend on them).
- `name`: label used in plots and messages.

**Raises:** `ValueError` for a tableau of the wrong shape, a non-explicit `a` or
non-finite entries.
"""

EULER = ExplicitRungeKutta([[0.0]], [1.0], [0.0], name="Euler")
HEUN = ExplicitRungeKutta([[0.0, 0.0], [1.0, 0.0]], [0.5, 0.5], [0.0, 1.0], name="Heun")
RK4 = ExplicitRungeKutta(
    [[0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 1, 0]],
    [1 / 6, 1 / 3, 1 / 3, 1 / 6],
    [0, 0.5, 0.5, 1],
    name="RK4",
)


def from_diffrax(solver: diffrax.AbstractSolver) -> ExplicitRungeKutta:
    r"""The `ExplicitRungeKutta` of a diffrax explicit solver.

    Reads `solver.tableau` (`diffrax.ButcherTableau`: `a_lower` rows 2..s, `b_sol`, `c`
    for stages 2..s) of any `diffrax.AbstractERK` (Tsit5, Dopri5, Dopri8, Bosh3, Heun,
    Midpoint, Ralston); `diffrax.Euler` (not an ERK in diffrax) maps to `EULER`.

    **Raises:** `TypeError` for other solvers (implicit or not Runge-Kutta).
    """
    if isinstance(solver, diffrax.Euler):
        return EULER
    if not isinstance(solver, diffrax.AbstractERK):
        raise TypeError(
            f"from_diffrax: {type(solver).__name__} is not an explicit Runge-Kutta solver "
            "(diffrax.AbstractERK or diffrax.Euler); build an ExplicitRungeKutta from its tableau instead."
        )
    tab = solver.tableau
    s = len(tab.b_sol)
    a = np.zeros((s, s))
    for i, row in enumerate(tab.a_lower, start=1):
        a[i, : len(row)] = row
    c = np.concatenate([[tab.c1], tab.c])
    return ExplicitRungeKutta(a, tab.b_sol, c, name=type(solver).__name__)


def _coefficient_magnitudes(method: ExplicitRungeKutta) -> np.ndarray:
    # |b|^T |A|^(k-1) 1 bounds the terms that sum to gamma_k: the scale of its round-off
    a, b = np.abs(np.asarray(method.a)), np.abs(np.asarray(method.b))
    v, out = np.ones_like(b), [1.0]
    for _ in range(method.stages):
        out.append(b @ v)
        v = a @ v
    return np.array(out)


# ------------------------------------------------------------------- drift equation


def _check_inputs(owner: str, h=None, **nonnegative) -> None:
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


def drift_roots(
    alpha: Real[ArrayLike, "*#shape"], beta: Real[ArrayLike, "*#shape"]
) -> tuple[Complex[Array, "..."], Complex[Array, "..."]]:
    r"""Roots $\lambda_\pm = -\alpha \pm \sqrt{\alpha^2 - \beta^2}$ of $\lambda^2 + 2\alpha\lambda + \beta^2 = 0$.

    **Returns:** `(lam_plus, lam_minus)` (complex; a conjugate pair when $\beta > \alpha$).
    The square root is guarded so that gradients stay finite at critical damping.
    """
    alpha, beta = jnp.asarray(alpha, float), jnp.asarray(beta, float)
    d = (alpha - beta) * (alpha + beta)  # exactly 0 at alpha == beta (alpha**2 - beta**2 may fuse to an FMA)
    nonzero = d != 0
    root = jnp.where(nonzero, jnp.sqrt(jnp.where(nonzero, jnp.abs(d), 1.0)), 0.0)
    sq = jnp.where(d >= 0, root + 0j, 1j * root)
    return -alpha + sq, -alpha - sq


def decay_rate(alpha: Real[ArrayLike, "*#shape"], beta: Real[ArrayLike, "*#shape"]) -> Float[Array, "..."]:
    r"""Continuous drift decay rate $\sigma = -\max \operatorname{Re}\lambda_\pm$ (1/s).

    $\sigma = \alpha - \sqrt{\alpha^2 - \beta^2}$ for real roots, $\alpha$ for complex
    ones; for a given $\beta$ it is largest ($= \beta$) at critical damping $\alpha = \beta$.
    """
    _check_inputs("decay_rate", alpha=alpha, beta=beta)
    lam_plus, _ = drift_roots(alpha, beta)
    return -lam_plus.real


def drift_amplification(
    method: ExplicitRungeKutta,
    alpha: Real[ArrayLike, "*#shape"],
    beta: Real[ArrayLike, "*#shape"],
    h,
    *,
    nonholonomic: bool = False,
) -> Float[Array, "..."]:
    r"""Discrete decay factor $\rho = \max_\pm |R(h\lambda_\pm)|$ per step.

    The spectral radius of one step of `method` on the drift equation: the drift shrinks
    by about $\rho$ per step ($\rho \le 1$ iff admissible). Differentiable in
    `alpha`, `beta`, `h` (e.g. for a penalty $\max(\rho - 1, 0)$ when tuning). With
    `nonholonomic=True` the root $-2\alpha$ of the first-order drift
    $\dot\psi + 2\alpha\psi = 0$ of velocity-level rows is included too.
    """
    _check_inputs("drift_amplification", h=h, alpha=alpha, beta=beta)
    alpha, beta, h = jnp.asarray(alpha, float), jnp.asarray(beta, float), jnp.asarray(h, float)
    rho = _amplification(method, alpha, beta, h)
    if nonholonomic:
        rho = jnp.maximum(rho, jnp.abs(method.stability_function(-2.0 * alpha * h)))
    return rho


@eqx.filter_jit  # one compiled kernel instead of dozens of eager complex ops per call
def _amplification(method, alpha, beta, h):
    lam_plus, lam_minus = drift_roots(alpha, beta)
    r_plus = jnp.abs(method.stability_function(h * lam_plus))
    r_minus = jnp.abs(method.stability_function(h * lam_minus))
    return jnp.maximum(r_plus, r_minus)


def is_admissible(
    method: ExplicitRungeKutta, alpha: Real[ArrayLike, "*#shape"], beta: Real[ArrayLike, "*#shape"], h
) -> Bool[Array, "..."]:
    r"""Whether $(\alpha, \beta)$ is admissible: $|R(h\lambda_\pm)| \le 1$ for both roots.

    **Arguments:** `method`; `alpha`, `beta` (1/s, non-negative, broadcast together);
    `h` (s, positive). A tolerance of a few ulps absorbs round-off at $R(0) = 1$.

    **Raises:** `ValueError` for a concrete $h \le 0$ or negative $\alpha$, $\beta$.
    """
    _check_inputs("is_admissible", h=h, alpha=alpha, beta=beta)
    rho = _amplification(method, jnp.asarray(alpha, float), jnp.asarray(beta, float), jnp.asarray(h, float))
    return rho <= 1 + _ADMISSIBLE_TOL


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
    _check_inputs("region_grid", h=h)
    if n < 2:
        raise ValueError(f"region_grid: n must be at least 2, got {n}.")
    r = region_radius(method) / h
    alpha_max = r if alpha_max is None else alpha_max
    beta_max = r if beta_max is None else beta_max
    _check_inputs("region_grid", alpha_max=alpha_max, beta_max=beta_max)
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
    _check_inputs("region_boundary", h=h, alpha=alpha)
    alpha = np.atleast_1d(np.asarray(alpha, float))
    scan = np.linspace(0.0, 1.01 * region_radius(method) / h, _SCAN)
    admissible_z = _numpy_admissible(method)

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


def _numpy_admissible(method: ExplicitRungeKutta):
    """`admissible(z)`: |R(z)| <= 1 in numpy (for the Python-level searches: no dispatch)."""
    gamma = _trimmed(method)
    return lambda z: np.abs(_polyval(gamma, np.asarray(z) + 0j)) <= 1 + _ADMISSIBLE_TOL


def _bisect(pred, good: float, bad: float) -> float:
    """Bisection between a point where `pred` holds and one where it fails; returns the good end."""
    for _ in range(_BISECT):
        mid = 0.5 * (good + bad)
        if mid in (good, bad):
            break
        good, bad = (mid, bad) if pred(mid) else (good, mid)
    return good


# ------------------------------------------------------------------ region geometry


def _polyval(coeffs: np.ndarray, t):
    t = np.asarray(t)
    out = np.zeros(t.shape, np.result_type(t, coeffs, float)) + coeffs[-1]
    for ck in coeffs[-2::-1]:
        out = out * t + ck
    return out


def region_radius(method: ExplicitRungeKutta) -> float:
    r"""A radius $r$ with $|R(z)| > 1$ for all $|z| > r$: the stability region lies in $|z| \le r$.

    Smallest $r \ge 1$ with $|\gamma_d| r^d > 1 + \sum_{k<d} |\gamma_k| r^k$, $d$ the
    degree of $R$.
    """
    gamma = _trimmed(method)
    if gamma.size == 1:
        raise ValueError(f"region_radius: {method.name} has R(z) = 1 (b sums to zero); not a consistent method.")
    lead, rest = abs(gamma[-1]), np.abs(gamma[:-1])
    outside = lambda r: lead * r ** (gamma.size - 1) > 1 + _polyval(rest, r)
    hi = 1.0
    while not outside(hi):
        hi *= 2
    lo = hi / 2 if hi > 1 else 0.0
    return _bisect(outside, hi, lo) if hi > 1 else 1.0


def _trimmed(method: ExplicitRungeKutta) -> np.ndarray:
    # drop highest coefficients that are zero up to round-off (e.g. FSAL stages with b = 0)
    gamma, ref = np.asarray(method.coefficients()), _coefficient_magnitudes(method)
    d = gamma.size
    while d > 1 and abs(gamma[d - 1]) <= _ZERO_TOL * ref[d - 1]:
        d -= 1
    return gamma[:d]


def _first_crossing(g: np.ndarray, ref: np.ndarray, t_max: float, inside) -> float:
    """First t > 0 where the polynomial g (lowest coefficient first) turns positive.

    Low-order coefficients that are round-off (|g_k| <= tol * ref_k) are dropped and the
    polynomial divided by the power of t they leave, so the sign next to 0 is exact.
    The scan uses g; the final bisection uses `inside(t)` (|R| <= 1 evaluated directly)
    so that the returned point is admissible by the same test as `is_admissible`.
    Returns 0 when g is positive right after 0.
    """
    k0 = 0
    while k0 < g.size and abs(g[k0]) <= _ZERO_TOL * ref[k0]:
        k0 += 1
    g = g[k0:]
    if g[0] > 0:
        return 0.0
    t = np.linspace(0.0, t_max, _SCAN)
    pos = np.flatnonzero(_polyval(g, t) > 0)
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


def _axis_limit(method: ExplicitRungeKutta, unit: complex) -> float:
    gamma = _trimmed(method)
    g, ref = _abs_squared_minus_one(gamma, unit)
    inside = _numpy_admissible(method)
    return _first_crossing(g, ref, 1.01 * region_radius(method), lambda t: inside(unit * t))


def real_axis_limit(method: ExplicitRungeKutta) -> float:
    r"""Left end $x_r < 0$ of the real interval $[x_r, 0]$ of the stability region.

    The first $x < 0$ where $|R(x)|$ exceeds 1 (RK4: $-2.785293563$, Euler: $-2$).
    """
    return -_axis_limit(method, -1.0 + 0j)


def imaginary_axis_limit(method: ExplicitRungeKutta) -> float:
    r"""Largest $y_i \ge 0$ with $|R(iy)| \le 1$ on all of $[0, y_i]$.

    RK4: $2\sqrt 2$; 0 for methods whose region misses the imaginary axis near 0
    (Euler, Heun). Computed from the exact polynomial $|R(iy)|^2 - 1$, so the sign
    of its lowest term (order $y^{p+1}$ or higher) decides next to 0, not round-off.
    """
    return _axis_limit(method, 1j)


def leftmost_point(method: ExplicitRungeKutta) -> complex:
    r"""The point $z$ of the stability region ($\operatorname{Im} z \ge 0$) with the smallest real part.

    The largest drift decay rate any admissible pair can have is $-\operatorname{Re} z / h$.
    For each height $y$ the leftmost admissible $x$ on the line $\operatorname{Im} z = y$
    is bracketed by a scan (1024 points) and bisected; the best of 257 heights over the
    region's bounding box is refined three times on 65 heights around it. Ties with the
    real axis (within 1e-12 relative) go to the real-axis limit, i.e. critical damping.
    Cached per stability polynomial.
    """
    key = (_trimmed(method).tobytes(),)
    if key not in _LEFTMOST_CACHE:  # depends on R only; plots and recommend reuse it
        _LEFTMOST_CACHE[key] = _leftmost_point(method)
    return _LEFTMOST_CACHE[key]


_LEFTMOST_CACHE: dict[tuple, complex] = {}


def _leftmost_point(method: ExplicitRungeKutta) -> complex:
    r = 1.01 * region_radius(method)
    xs = np.linspace(-r, 0.0, 1024)
    admissible = _numpy_admissible(method)

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
    x_axis = real_axis_limit(method)
    return complex(x_axis, 0.0) if x_axis <= best.real + 1e-12 * abs(x_axis) else best


# --------------------------------------------------------------------- recommendation


class Recommendation(NamedTuple):
    r"""A recommended Baumgarte pair and its numbers.

    - `alpha`, `beta`: the pair (1/s).
    - `decay_rate`: continuous drift decay rate $\sigma = -\max\operatorname{Re}\lambda_\pm$ (1/s).
    - `amplification`: discrete decay factor $\rho = \max|R(h\lambda_\pm)|$ per step at `h`.
    - `discrete_decay_rate`: $-\ln\rho / h$ (1/s), the decay rate the integrated drift
      actually has (for constraints linear in $q$, exactly).
    - `h`, `margin`: the step and margin it was computed for.
    """

    alpha: float
    beta: float
    decay_rate: float
    amplification: float
    discrete_decay_rate: float
    h: float
    margin: float


def recommend(method: ExplicitRungeKutta, h: float, margin: float = 0.2) -> Recommendation:
    r"""The pair with the fastest continuous drift decay that is admissible with a margin.

    Criterion: maximise $\sigma(\alpha, \beta) = -\max\operatorname{Re}\lambda_\pm$ subject to
    $(\alpha, \beta)/(1 - m)$ being admissible at step $h$ (equivalently: $(\alpha, \beta)$
    admissible at the step $h/(1 - m)$; the roots $h\lambda_\pm$ may grow by the factor
    $1/(1-m)$ before leaving the region). Real roots never win (the critical pair
    $\alpha = \beta$ with the same $\beta$ decays faster and is admissible whenever the
    real pair is), so the optimum puts $h\lambda/(1-m)$ at the `leftmost_point` $z^*$ of
    the region: $\alpha = -(1-m)\operatorname{Re} z^*/h$,
    $\beta = (1-m)|z^*|/h$ — critical damping $\alpha = \beta$ when $z^*$ is the
    real-axis limit (RK4). The discrete factor $\rho$ at $h$ and the rate
    $-\ln\rho/h$ the integrated drift really decays with are returned alongside; near
    the boundary that rate is well below $\sigma$ (RK4, $m = 0.2$: 8.3 vs 22.3 1/s at
    $h = 0.1$), which is why the margin matters. `deadbeat_pairs` gives the optimum of
    the discrete criterion ($\rho = 0$) instead.

    **Arguments:** `method`, `h` (s), `margin` $m \in [0, 1)$.
    """
    _check_inputs("recommend", h=h)
    if not (0 <= margin < 1):
        raise ValueError(f"recommend: margin must lie in [0, 1), got {margin}.")
    z = leftmost_point(method)
    # 1e-12: keep the margin test on the admissible side after rounding of the scaling
    scale = (1 - margin) / h * (1 - 1e-12)
    alpha = -z.real * scale
    # beta from |z|, but never below alpha (round-off on the real axis)
    beta = max(abs(z) * scale, alpha)
    rho = float(drift_amplification(method, alpha, beta, h))
    return Recommendation(
        alpha=float(alpha),
        beta=float(beta),
        decay_rate=float(decay_rate(alpha, beta)),
        amplification=rho,
        discrete_decay_rate=-math.log(rho) / h if rho > 0 else math.inf,
        h=float(h),
        margin=float(margin),
    )


def deadbeat_pairs(method: ExplicitRungeKutta, h: float) -> list[tuple[float, float]]:
    r"""Pairs whose drift roots $h\lambda_\pm$ sit on zeros of $R$: the drift vanishes in one step.

    A zero $z_0 = x + iy$ of $R$ with $x < 0$, $y \ge 0$ gives $\lambda_\pm = (x \pm iy)/h$,
    i.e. $\alpha = -x/h$, $\beta = |z_0|/h$ (a real zero gives critical damping). This is
    the optimum of the *discrete* criterion ($\rho = 0$), exact for the linear drift
    equation; with nonlinear constraints the drift map is only close to it, and the
    pair may leave little margin (check `is_admissible` at `h / (1 - margin)`).

    **Returns:** `[(alpha, beta), ...]` sorted by increasing $\beta$.
    """
    _check_inputs("deadbeat_pairs", h=h)
    zeros = np.roots(_trimmed(method)[::-1])
    pairs = {(float(-z.real / h), float(abs(z) / h)) for z in zeros if z.real < 0 and z.imag >= -1e-12 * abs(z)}
    return sorted(pairs, key=lambda p: p[1])


# ------------------------------------------------------------------------------ plots


def _pair_markers(ax, method, h, pairs, to_xy):
    """Mark labelled pairs: filled circle when admissible, cross when not."""
    for k, (label, (alpha, beta)) in enumerate((pairs or {}).items()):
        ok = bool(is_admissible(method, alpha, beta, h))
        for x, y in to_xy(alpha, beta):
            ax.plot(x, y, "o" if ok else "x", color="tab:green" if ok else "tab:red", ms=7, mew=2)
        # labels alternate above and below their marker so neighbours on one line stay readable
        ax.annotate(
            label, to_xy(alpha, beta)[0], xytext=(4, 5 if k % 2 == 0 else -12), textcoords="offset points", fontsize=8
        )


def plot_region(
    method: ExplicitRungeKutta,
    h: float,
    path,
    *,
    margin: float = 0.2,
    pairs: dict[str, tuple[float, float]] | None = None,
    alpha_max: float | None = None,
    beta_max: float | None = None,
    n: int = 401,
    title: str = "",
):
    r"""PNG of the admissible $(\alpha, \beta)$ region of `method` at step `h`.

    Shades the admissible pairs and, darker, those admissible with the `margin` of
    `recommend`; draws the bisected boundary, the critical-damping line $\alpha = \beta$,
    the recommended pair (star) and any `pairs` (label -> (alpha, beta); circle if
    admissible, cross if not). Default limits: 1.15 times the extent of the region.

    **Returns:** the path.
    """
    from ..plotting import _pyplot

    plt = _pyplot()
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rec = recommend(method, h, margin)
    a_extent = -leftmost_point(method).real / h
    alphas = np.linspace(0.0, a_extent, 400)
    bnd = region_boundary(method, h, alphas)
    alpha_max = 1.15 * a_extent if alpha_max is None else alpha_max
    beta_max = 1.15 * np.nanmax(bnd.beta_upper) if beta_max is None else beta_max
    grid = region_grid(method, h, alpha_max, beta_max, n)
    inner = is_admissible(method, grid.alpha[:, None], grid.beta[None, :], h / (1 - margin))
    level = np.asarray(grid.admissible, float) + np.asarray(inner, float)

    fig, ax = plt.subplots(figsize=(9, 5))
    ax.contourf(grid.alpha, grid.beta, level.T, levels=[0.5, 1.5, 2.5], colors=["#c6dbef", "#6baed6"])
    ax.plot(bnd.alpha, bnd.beta_upper, "k-", lw=1.2, label="boundary")
    ax.plot(bnd.alpha, bnd.beta_lower, "k-", lw=1.2)
    top = min(alpha_max, beta_max)
    ax.plot([0, top], [0, top], "k--", lw=0.8, label=r"critical damping $\alpha = \beta$")
    ax.plot(
        rec.alpha,
        rec.beta,
        "*",
        color="tab:orange",
        ms=14,
        mec="k",
        label=f"recommended ({rec.alpha:.3g}, {rec.beta:.3g}), margin {margin:g}",
    )
    _pair_markers(ax, method, h, pairs, lambda a, b: [(a, b)])
    ax.fill_between([], [], color="#c6dbef", label="admissible")
    ax.fill_between([], [], color="#6baed6", label=f"admissible at h/(1-{margin:g})")
    ax.set_xlim(0, alpha_max)
    ax.set_ylim(0, beta_max)
    ax.set_xlabel(r"$\alpha$ [1/s]")
    ax.set_ylabel(r"$\beta$ [1/s]")
    ax.set_title(title or rf"{method.name}, h = {h:g} s: admissible $(\alpha, \beta)$")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_stability_region(
    methods: ExplicitRungeKutta | tuple[ExplicitRungeKutta, ...] | list[ExplicitRungeKutta],
    path,
    *,
    h: float | None = None,
    pairs: dict[str, tuple[float, float]] | None = None,
    title: str = "",
):
    r"""PNG of the stability region $|R(z)| \le 1$ in the complex plane.

    The first method is filled, every method gets its boundary contour. With `h`, each
    pair in `pairs` (label -> (alpha, beta)) is marked at its drift roots $h\lambda_\pm$
    (circle if admissible for the first method, cross if not).

    **Returns:** the path.
    """
    from ..plotting import _pyplot

    methods = (methods,) if isinstance(methods, ExplicitRungeKutta) else tuple(methods)
    plt = _pyplot()
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # extent: the bounding box of all regions, from a grid over the radius bound
    r = 1.01 * max(region_radius(m) for m in methods)
    xs, ys = np.linspace(-r, r, 801), np.linspace(-r, r, 801)
    Z = xs[None, :] + 1j * ys[:, None]
    mods = [np.abs(_polyval(_trimmed(m), Z)) for m in methods]
    inside = np.any([m <= 1 for m in mods], axis=0)
    pad = 0.1 * r
    x0, x1 = xs[inside.any(axis=0)].min() - pad, xs[inside.any(axis=0)].max() + pad
    y1 = ys[inside.any(axis=1)].max() + pad
    if pairs and h is not None:
        for alpha, beta in pairs.values():
            for lam in drift_roots(alpha, beta):
                z = complex(h * lam)
                x0, x1, y1 = min(x0, z.real - pad), max(x1, z.real + pad), max(y1, abs(z.imag) + pad)

    fig, ax = plt.subplots(figsize=(6.5, 5.5))
    xs, ys = np.linspace(x0, x1, 801), np.linspace(-y1, y1, 801)
    Z = xs[None, :] + 1j * ys[:, None]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, m in enumerate(methods):
        mod = np.abs(_polyval(_trimmed(m), Z))
        if k == 0:
            ax.contourf(xs, ys, mod, levels=[0, 1], colors=["#c6dbef"])
        ax.contour(xs, ys, mod, levels=[1], colors=[colors[k % len(colors)]], linewidths=1.5)
        ax.plot([], [], color=colors[k % len(colors)], label=m.name)
    ax.axhline(0, color="k", lw=0.6)
    ax.axvline(0, color="k", lw=0.6)
    if h is not None:
        to_xy = lambda a, b: [(complex(h * lam).real, complex(h * lam).imag) for lam in drift_roots(a, b)]
        _pair_markers(ax, methods[0], h, pairs, to_xy)
    ax.set_aspect("equal")
    ax.set_xlim(x0, x1)
    ax.set_ylim(-y1, y1)
    ax.set_xlabel(r"Re $z$")
    ax.set_ylabel(r"Im $z$")
    ax.set_title(title or r"stability region $|R(z)| \leq 1$" + (rf", marks: $h\lambda_\pm$, h = {h:g} s" if h else ""))
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
