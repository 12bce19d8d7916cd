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
vectorised `jax.numpy` code (jit/vmap/grad-friendly); the boundary, axis limits and the
recommendation are Python-level searches that return floats.
"""

import math
from typing import NamedTuple

import diffrax
import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Bool, Complex, Float

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
            raise ValueError(
                f"ExplicitRungeKutta: `a` must be a square s x s matrix with s >= 1, got shape {a.shape}."
            )
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

    def coefficients(self) -> Float[Array, " s+1"]:
        r"""Coefficients $\gamma_0 \dots \gamma_s$ of $R(z) = \sum_k \gamma_k z^k$, lowest first."""
        a, b = jnp.asarray(self.a), jnp.asarray(self.b)
        v = jnp.ones_like(b)
        out = [jnp.ones((), b.dtype)]
        for _ in range(self.stages):  # static loop: gamma_k = b . A^(k-1) 1
            out.append(b @ v)
            v = a @ v
        return jnp.stack(out)

    def stability_function(self, z: Complex[ArrayLike, "*shape"]) -> Complex[Array, "*shape"]:
        r"""$R(z)$ for complex `z` of any shape (Horner's scheme on the coefficients)."""
        z = jnp.asarray(z) + 0j
        gamma = self.coefficients()
        out = jnp.zeros_like(z) + gamma[-1]
        for k in range(self.stages - 1, -1, -1):
            out = out * z + gamma[k]
        return out

    def linear_order(self) -> int:
        r"""Largest $p$ with $\gamma_k = 1/k!$ for all $k \le p$: $R(z) - e^z = O(z^{p+1})$.

        This is the order on linear problems; it is at least the classical order and
        can exceed it (e.g. `EULER` 1, `RK4` 4, Dopri5 5).
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
    alpha: Float[ArrayLike, "*shape"], beta: Float[ArrayLike, "*shape"]
) -> tuple[Complex[Array, "*shape"], Complex[Array, "*shape"]]:
    r"""Roots $\lambda_\pm = -\alpha \pm \sqrt{\alpha^2 - \beta^2}$ of $\lambda^2 + 2\alpha\lambda + \beta^2 = 0$.

    **Returns:** `(lam_plus, lam_minus)` (complex; a conjugate pair when $\beta > \alpha$).
    The square root is guarded so that gradients stay finite at critical damping.
    """
    alpha, beta = jnp.asarray(alpha, float), jnp.asarray(beta, float)
    d = alpha**2 - beta**2
    nonzero = d != 0
    root = jnp.where(nonzero, jnp.sqrt(jnp.where(nonzero, jnp.abs(d), 1.0)), 0.0)
    sq = jnp.where(d >= 0, root + 0j, 1j * root)
    return -alpha + sq, -alpha - sq


def decay_rate(alpha: Float[ArrayLike, "*shape"], beta: Float[ArrayLike, "*shape"]) -> Float[Array, "*shape"]:
    r"""Continuous drift decay rate $\sigma = -\max \operatorname{Re}\lambda_\pm$ (1/s).

    $\sigma = \alpha - \sqrt{\alpha^2 - \beta^2}$ for real roots, $\alpha$ for complex
    ones; for a given $\beta$ it is largest ($= \beta$) at critical damping $\alpha = \beta$.
    """
    _check_inputs("decay_rate", alpha=alpha, beta=beta)
    lam_plus, _ = drift_roots(alpha, beta)
    return -lam_plus.real


def drift_amplification(
    method: ExplicitRungeKutta, alpha: Float[ArrayLike, "*shape"], beta: Float[ArrayLike, "*shape"], h
) -> Float[Array, "*shape"]:
    r"""Discrete decay factor $\rho = \max_\pm |R(h\lambda_\pm)|$ per step.

    The spectral radius of one step of `method` on the drift equation: the drift shrinks
    by about $\rho$ per step ($\rho \le 1$ iff admissible). Differentiable in
    `alpha`, `beta`, `h` (e.g. for a penalty $\max(\rho - 1, 0)$ when tuning).
    """
    _check_inputs("drift_amplification", h=h, alpha=alpha, beta=beta)
    lam_plus, lam_minus = drift_roots(alpha, beta)
    r_plus = jnp.abs(method.stability_function(h * lam_plus))
    r_minus = jnp.abs(method.stability_function(h * lam_minus))
    return jnp.maximum(r_plus, r_minus)


def is_admissible(
    method: ExplicitRungeKutta, alpha: Float[ArrayLike, "*shape"], beta: Float[ArrayLike, "*shape"], h
) -> Bool[Array, "*shape"]:
    r"""Whether $(\alpha, \beta)$ is admissible: $|R(h\lambda_\pm)| \le 1$ for both roots.

    **Arguments:** `method`; `alpha`, `beta` (1/s, non-negative, broadcast together);
    `h` (s, positive). A tolerance of a few ulps absorbs round-off at $R(0) = 1$.

    **Raises:** `ValueError` for a concrete $h \le 0$ or negative $\alpha$, $\beta$.
    """
    _check_inputs("is_admissible", h=h, alpha=alpha, beta=beta)
    return drift_amplification(method, alpha, beta, h) <= 1 + _ADMISSIBLE_TOL


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
    beta_max = 1.01 * region_radius(method) / h
    scan = np.linspace(0.0, beta_max, _SCAN)
    ok = np.asarray(is_admissible(method, alpha[:, None], scan[None, :], h))
    lower = np.full(alpha.shape, np.nan)
    upper = np.full(alpha.shape, np.nan)
    for i in range(alpha.size):
        idx = np.flatnonzero(ok[i])
        if idx.size == 0:
            continue
        pred = lambda beta: bool(is_admissible(method, alpha[i], beta, h))
        first, last = idx[0], idx[-1]
        lower[i] = 0.0 if first == 0 else _bisect(pred, scan[first], scan[first - 1])
        upper[i] = _bisect(pred, scan[last], scan[last + 1])
    return RegionBoundary(alpha, lower, upper)


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
    out = np.zeros_like(np.asarray(t, float)) + coeffs[-1]
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
    return _bisect(lambda r: not outside(r), hi, lo) if hi > 1 else 1.0


def _trimmed(method: ExplicitRungeKutta) -> np.ndarray:
    # drop highest coefficients that are zero up to round-off (e.g. FSAL stages with b = 0)
    gamma, ref = np.asarray(method.coefficients()), _coefficient_magnitudes(method)
    d = gamma.size
    while d > 1 and abs(gamma[d - 1]) <= _ZERO_TOL * ref[d - 1]:
        d -= 1
    return gamma[:d]


def _first_crossing(g: np.ndarray, ref: np.ndarray, t_max: float) -> float:
    """First t > 0 where the polynomial g (lowest coefficient first) turns positive.

    Low-order coefficients that are round-off (|g_k| <= tol * ref_k) are dropped and the
    polynomial divided by the power of t they leave, so the sign next to 0 is exact.
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
    return _bisect(lambda x: _polyval(g, x) <= 0, t[i - 1], t[i])


def _abs_squared_minus_one(gamma: np.ndarray, unit: complex):
    """Coefficients (in t) of |R(unit t)|^2 - 1 and of the magnitudes that formed them."""
    powers = unit ** np.arange(gamma.size)
    re, im = (gamma * powers).real, (gamma * powers).imag
    g = np.convolve(re, re) + np.convolve(im, im)
    g[0] -= 1.0
    ref = np.convolve(np.abs(re), np.abs(re)) + np.convolve(np.abs(im), np.abs(im))
    ref[0] += 1.0
    return g, ref


def real_axis_limit(method: ExplicitRungeKutta) -> float:
    r"""Left end $x_r < 0$ of the real interval $[x_r, 0]$ of the stability region.

    The first $x < 0$ where $|R(x)|$ exceeds 1 (RK4: $-2.785293563$, Euler: $-2$).
    """
    gamma = _trimmed(method)
    g, ref = _abs_squared_minus_one(gamma, -1.0 + 0j)
    return -_first_crossing(g, ref, 1.01 * region_radius(method))


def imaginary_axis_limit(method: ExplicitRungeKutta) -> float:
    r"""Largest $y_i \ge 0$ with $|R(iy)| \le 1$ on all of $[0, y_i]$.

    RK4: $2\sqrt 2$; 0 for methods whose region misses the imaginary axis near 0
    (Euler, Heun). Computed from the exact polynomial $|R(iy)|^2 - 1$, so the sign
    of its lowest term (order $y^{p+1}$ or higher) decides next to 0, not round-off.
    """
    gamma = _trimmed(method)
    g, ref = _abs_squared_minus_one(gamma, 1j)
    return _first_crossing(g, ref, 1.01 * region_radius(method))


def leftmost_point(method: ExplicitRungeKutta) -> complex:
    r"""The point $z$ of the stability region ($\operatorname{Im} z \ge 0$) with the smallest real part.

    The largest drift decay rate any admissible pair can have is $-\operatorname{Re} z / h$.
    For each height $y$ the leftmost admissible $x$ on the line $\operatorname{Im} z = y$
    is bracketed by a scan and bisected; the best of 513 heights over the region's
    bounding box is refined three times on 65 heights around it. Ties with the real
    axis (within 1e-12 relative) go to the real-axis limit, i.e. critical damping.
    """
    r = 1.01 * region_radius(method)
    xs = np.linspace(-r, 0.0, _SCAN)
    admissible = lambda z: np.abs(np.asarray(method.stability_function(z))) <= 1 + _ADMISSIBLE_TOL

    def leftmost_x(y):
        idx = np.flatnonzero(admissible(xs + 1j * y))
        if idx.size == 0:
            return np.inf
        if idx[0] == 0:
            return xs[0]
        return _bisect(lambda x: bool(admissible(x + 1j * y)), xs[idx[0]], xs[idx[0] - 1])

    ys = np.linspace(0.0, r, 513)
    for _ in range(4):  # coarse pass, then three zooms around the best height
        x_of_y = np.array([leftmost_x(y) for y in ys])
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
    - `h`, `margin`: the step and margin it was computed for.
    """

    alpha: float
    beta: float
    decay_rate: float
    amplification: float
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
    real-axis limit (RK4). The discrete factor $\rho$ at $h$ is returned alongside;
    $\sigma$ is the criterion because it does not reward pairs that rely on a zero of $R$.

    **Arguments:** `method`, `h` (s), `margin` $m \in [0, 1)$.
    """
    _check_inputs("recommend", h=h)
    if not (0 <= margin < 1):
        raise ValueError(f"recommend: margin must lie in [0, 1), got {margin}.")
    z = leftmost_point(method)
    scale = (1 - margin) / h
    alpha = -z.real * scale
    # beta from |z|, but never below alpha (round-off on the real axis)
    beta = max(abs(z) * scale, alpha)
    return Recommendation(
        alpha=float(alpha),
        beta=float(beta),
        decay_rate=float(decay_rate(alpha, beta)),
        amplification=float(drift_amplification(method, alpha, beta, h)),
        h=float(h),
        margin=float(margin),
    )
