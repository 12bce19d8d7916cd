r"""Explicit Runge-Kutta methods, represented by their Butcher tableau and stability function.

`EULER_TABLEAU`, `HEUN_TABLEAU`, `RK4_TABLEAU` are built in (named `*_TABLEAU` so that they
are not mistaken for the solvers, e.g. `flexjax.RK4`); `from_diffrax` reads the tableau of
a diffrax explicit RK solver.
"""

import math

import diffrax
import equinox as eqx
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, ArrayLike, Complex, Float, Num

from ..._checks import is_concrete
from ._polynomial import ZERO_TOL, coefficient_magnitudes


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
        ref = coefficient_magnitudes(self)
        p = 0
        for k in range(1, gamma.size):
            if abs(gamma[k] - 1 / math.factorial(k)) > ZERO_TOL * max(ref[k], 1 / math.factorial(k)):
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

EULER_TABLEAU = ExplicitRungeKutta([[0.0]], [1.0], [0.0], name="Euler")
HEUN_TABLEAU = ExplicitRungeKutta([[0.0, 0.0], [1.0, 0.0]], [0.5, 0.5], [0.0, 1.0], name="Heun")
RK4_TABLEAU = ExplicitRungeKutta(
    [[0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 1, 0]],
    [1 / 6, 1 / 3, 1 / 3, 1 / 6],
    [0, 0.5, 0.5, 1],
    name="RK4",
)


def from_diffrax(solver: diffrax.AbstractSolver) -> ExplicitRungeKutta:
    r"""The `ExplicitRungeKutta` of a diffrax explicit solver.

    Reads `solver.tableau` (`diffrax.ButcherTableau`: `a_lower` rows 2..s, `b_sol`, `c`
    for stages 2..s) of any `diffrax.AbstractERK` (Tsit5, Dopri5, Dopri8, Bosh3, Heun,
    Midpoint, Ralston); `diffrax.Euler` (not an ERK in diffrax) maps to `EULER_TABLEAU`.

    **Raises:** `TypeError` for other solvers (implicit or not Runge-Kutta).
    """
    if isinstance(solver, diffrax.Euler):
        return EULER_TABLEAU
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
