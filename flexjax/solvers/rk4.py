"""The classic fourth-order Runge-Kutta method as a diffrax solver (fixed steps)."""

from collections.abc import Callable
from typing import ClassVar

import diffrax
import numpy as np

_rk4_tableau = diffrax.ButcherTableau(
    a_lower=(np.array([0.5]), np.array([0.0, 0.5]), np.array([0.0, 0.0, 1.0])),
    b_sol=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]),
    # no embedded method: RK4 is meant for constant steps (diffrax.ConstantStepSize)
    b_error=np.zeros(4),
    c=np.array([0.5, 0.5, 1.0]),
)


class RK4(diffrax.AbstractERK):
    r"""Classic RK4 (the method of seed 003): stability function
    $R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24$. Use with a fixed step
    (`simulate_ode(..., dt0=h, rtol=None)`): it has no error estimate."""

    tableau: ClassVar[diffrax.ButcherTableau] = _rk4_tableau
    interpolation_cls: ClassVar[Callable[..., diffrax.ThirdOrderHermitePolynomialInterpolation]] = (
        diffrax.ThirdOrderHermitePolynomialInterpolation.from_k
    )

    def order(self, terms):
        return 4
