r"""A spinning pendulum rod: large 3D rotation of a spatial ANCF beam.

A 1 m rod (Ø 20 mm, E = 50 MPa, ρ = 1000 kg/m³) on a spherical joint at one end
(`AncfSpherical3D` at node 0), under gravity $-9.81\hat z$, released horizontally along
+x while spinning rigidly about the vertical.
"""

import jax.numpy as jnp

from .._structural import structural_jit
from ..bodies import AncfBeam3D, CircularSection
from ..forces import Gravity
from ..joints import AncfSpherical3D
from ..system import System

LENGTH, DENSITY, YOUNGS, RADIUS = 1.0, 1000.0, 5e7, 0.01  # m, kg/m^3, Pa, m
G = 9.81  # m/s^2


def spinning_rod(n: int = 8, poisson: float = 0.3) -> tuple[AncfBeam3D, System]:
    """The rod with `n` elements and Poisson ratio `poisson`.

    **Returns:** `(beam, system)`.
    """
    beam = AncfBeam3D(LENGTH, DENSITY, YOUNGS, CircularSection(RADIUS), n, poisson=poisson)
    return beam, System([beam], [AncfSpherical3D(0, 0)], [Gravity((0.0, 0.0, -G))])


@structural_jit  # one small program instead of one per array operation
def spinning_rod_state(beam: AncfBeam3D, spin: float = 4.0):
    r"""Start of the run: straight along +x, rigid rotation at `spin` (rad/s) about $\hat z$.

    **Returns:** `(q0, v0)`.
    """
    q0 = beam.straight_coordinates()
    v0 = jnp.cross(jnp.array([0.0, 0.0, spin])[None], q0.reshape(-1, 3)).reshape(-1)  # rigid spin
    return q0, v0
