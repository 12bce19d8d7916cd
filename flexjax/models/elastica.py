r"""The large-deflection cantilever (the elastica) with planar ANCF beams.

A straight beam clamped at the origin along +x carries a non-following (vertical) tip
load $P$, $\alpha = P L^2/EI$; the beam is a 1 m steel strip of 1 cm square section
($EA L^2/EI = 1.2\cdot10^5$). `solve_elastica` finds the static equilibria of the ANCF
model (Newton with load steps); `elastica_reference` is the exact extensible elastica of
the same continuum model, $EI\theta'' = P(1+\varepsilon)\cos\theta$,
$\varepsilon = -P\sin\theta/EA$, $\theta(0) = 0$, $\theta'(L) = 0$.
"""

import jax
import jax.numpy as jnp
import numpy as np

from ..bodies import AncfBeam2D
from ..control.references import Constant
from ..forces import PointForce
from ..joints import AncfClamp
from ..solvers import solve_static
from ..system import System

LENGTH, RHO, YOUNGS = 1.0, 7800.0, 2.1e11  # m, kg/m^3, Pa
SIDE = 0.01  # m, square cross-section
AREA, SECOND_MOMENT = SIDE**2, SIDE**4 / 12
LOAD_STEPS = 10


def elastica_reference(alpha: float, ea_ratio: float = np.inf, nsteps: int = 1000):
    r"""Exact (extensible) elastica of the cantilever, in units L = EI = 1.

    Shooting on $\theta'(0)$ by repeated 32-way bracketing of $\theta'(1) = 0$, with
    classic RK4 on `nsteps` steps (vectorised over the candidates).

    **Arguments:** `alpha` $= PL^2/EI$; `ea_ratio` $= EA L^2/EI$ (`inf`: inextensible).

    **Returns:** `(deflection, shortening, s, x, y)`: tip deflection / L, axial
    shortening / L and the deformed centre line at `nsteps + 1` arc-length points.
    """

    def rhs(y):
        th, k = y[0], y[1]
        stretch = 1.0 - alpha * np.sin(th) / ea_ratio
        return np.stack([k, alpha * stretch * np.cos(th), stretch * np.cos(th), stretch * np.sin(th)])

    def integrate(k0, path=False):
        y = np.stack([np.zeros_like(k0), k0, np.zeros_like(k0), np.zeros_like(k0)])
        h, out = 1.0 / nsteps, [y]
        for _ in range(nsteps):
            k1 = rhs(y)
            k2 = rhs(y + 0.5 * h * k1)
            k3 = rhs(y + 0.5 * h * k2)
            k4 = rhs(y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            if path:
                out.append(y)
        return np.stack(out) if path else y

    lo, hi = -1.0001 * alpha, 0.0  # theta'(0) = -P x_tip / EI lies in (-alpha, 0)
    for _ in range(9):  # bracket width alpha / 32**9 ~ 3e-14 alpha
        ks = np.linspace(lo, hi, 33)
        end = integrate(ks)[1]
        i = int(np.nonzero(np.sign(end[:-1]) != np.sign(end[1:]))[0][0])
        lo, hi = ks[i], ks[i + 1]
    path = integrate(np.array([0.5 * (lo + hi)]), path=True)[:, :, 0]
    x, y = path[:, 2], path[:, 3]
    return -y[-1], 1.0 - x[-1], np.linspace(0.0, 1.0, nsteps + 1), x, y


def solve_elastica(n: int, alphas, strain: str = "stretch", load_steps: int = LOAD_STEPS):
    r"""Static equilibria of the ANCF cantilever with `n` elements under the tip loads
    $P = \alpha EI/L^2$, `alpha` in `alphas`, each ramped from zero in `load_steps` steps.

    **Arguments:** `strain`: the strain measure of `AncfBeam2D` (`"stretch"` or
    `"green_lagrange"`).

    **Returns:** `(tips, shapes)`: per load, the tip position (m) and the deformed centre
    line at 101 points.
    """
    beam = AncfBeam2D(LENGTH, RHO, AREA, SECOND_MOMENT, YOUNGS, n, strain=strain)
    q0 = beam.straight_coordinates()
    ei = YOUNGS * SECOND_MOMENT
    s = jnp.linspace(0.0, LENGTH, 101)
    tips, shapes = [], []
    for alpha in alphas:
        # the load is a leaf of `Constant`, so each load reuses the compiled solver
        load = Constant(jnp.array([0.0, -alpha * ei / LENGTH**2]))
        system = System([beam], [AncfClamp(0, 0)], [PointForce(0, jnp.array([LENGTH]), load)])
        q = solve_static(system, q0, load_steps).q
        tips.append(np.asarray(beam.node_position(q, -1)))
        shapes.append(np.asarray(jax.vmap(lambda si, q=q: beam.position(q, si[None]))(s)))
    return tips, shapes
