r"""The very flexible pendulum (Berzeri & Shabana 2000) with planar ANCF beams.

A beam (stretch measure; L = 1.2 m, A = 0.0018 m², I = 1.215e-8 m⁴, ρ = 5540 kg/m³,
E = 0.7 MPa) is pinned at the origin (`AncfPin` at node 0) and released from rest,
straight along +x, under gravity g = 9.81 m/s². `simulate_flexible_pendulum` runs it
with generalized-α, ρ∞ = 1 (no numerical damping), plain index-3 form: the pin rows are
linear in the ANCF coordinates, so the pinned coordinates are fixed exactly and the weak
instability of the index-3 trapezoidal rule on nonlinear constraints does not arise.
"""

import jax.numpy as jnp

from ..bodies import AncfBeam2D
from ..forces import Gravity
from ..joints import AncfPin
from ..solvers import GeneralizedAlpha, simulate
from ..system import System

LENGTH, AREA, SECOND_MOMENT, RHO, YOUNGS, G = 1.2, 0.0018, 1.215e-8, 5540.0, 0.7e6, 9.81
T_END = 1.0  # s
SAVE_DT = 0.01  # s between saved states
RHO_INF = 1.0


def flexible_pendulum(n: int) -> tuple[AncfBeam2D, System]:
    """The very flexible pendulum with `n` elements.

    **Returns:** `(beam, system)`: the `AncfBeam2D` and the pinned system under gravity.
    """
    beam = AncfBeam2D(LENGTH, RHO, AREA, SECOND_MOMENT, YOUNGS, n)
    return beam, System([beam], [AncfPin(0, 0)], [Gravity((0.0, -G))])


def simulate_flexible_pendulum(n: int, h: float, progress: bool = False):
    """Release `flexible_pendulum(n)` from rest, straight along +x, and run it to `T_END`
    with step `h` (s), saving every `SAVE_DT`.

    **Returns:** `(beam, trajectory)`.
    """
    beam, system = flexible_pendulum(n)
    q0 = beam.straight_coordinates()
    save_every = max(1, round(SAVE_DT / h))
    solver = GeneralizedAlpha(rho_inf=RHO_INF)
    traj = simulate(system, q0, jnp.zeros_like(q0), T_END, h, solver=solver, save_every=save_every, progress=progress)
    return beam, traj
