r"""The flexible beam of seed 004 §3 that falls under gravity onto an inclined surface.

A uniform aluminium beam (ρ = 2766.7 kg/m³, E = 68.952 GPa, L = 1 m, I = 7.85e-9 m⁴,
A = 3.14e-4 m²) turns freely about a fixed pivot at the origin in a vertical plane
(gravity −9.81 m/s² along y), released at rest and undeformed from $\theta_0 = 0.125\pi$
(angle from the x-axis). Its tip $P$ meets the rigid line $2x + 3y = 0$ through the pivot
(outward normal $(2, 3)/\sqrt{13}$, the side the beam starts on), with Coulomb friction
μ = 0.3 and restitution 0 (seed §3). A rigid beam would reach the line at
$\theta = -\arctan(2/3)$; the flexible beam's tip touches it first, so the impact and the
stick-slip motion that follows come from its deformation.

Two discretizations of the same beam:

- `impact_beam`: the modal hub-beam (`ModalHubBeam`, seed 000's high-order rigid-flexible
  coupling with the axial shortening $w_c$, cantilever modes clamped to a massless hub
  on a free pivot, no axial modes), $q = [\theta, B_1, \dots, B_N]$ as in seed 004 eq. 5.
- `impact_beam_ancf`: planar ANCF elements (`AncfBeam2D`, stretch measure) pinned at node 0.
"""

import jax.numpy as jnp

from ..bodies.ancf2d import AncfBeam2D
from ..bodies.modal_beam import ModalHubBeam
from ..contact.geometry import PointSurfaceContact
from ..forces.gravity import Gravity
from ..joints.ancf import AncfPin
from ..system import System

RHO, YOUNGS, LENGTH, SECOND_MOMENT, AREA = 2766.7, 68.952e9, 1.0, 7.85e-9, 3.14e-4  # seed §3, SI
THETA0 = 0.125 * jnp.pi  # rad
MU = 0.3
G = 9.81  # m/s^2
SURFACE_NORMAL = (2.0, 3.0)  # the line 2x + 3y = 0 through the pivot


def _contact(mu, restitution):
    return PointSurfaceContact(0, (LENGTH,), (0.0, 0.0), SURFACE_NORMAL, mu=mu, restitution=restitution)


def impact_beam(
    n_modes: int = 4, *, wc: bool = True, kinetic: str = "paper", youngs=YOUNGS, mu=MU, restitution=0.0, g=G
) -> tuple[System, PointSurfaceContact]:
    r"""The seed §3 beam as a modal hub-beam and its tip contact.

    **Arguments:** `n_modes` transverse cantilever modes (static); `wc` keep the axial
    shortening (seed's high-order coupling); `kinetic` the `ModalHubBeam` kinetic energy;
    `youngs` (Pa), `mu`, `restitution`, `g` (m/s²).

    **Returns:** `(system, contact)`; coordinates $[\theta, B_1..B_N]$.
    """
    rho_a = RHO * AREA
    beam = ModalHubBeam(
        0.0,
        LENGTH,
        rho_a,
        youngs * AREA,
        youngs * SECOND_MOMENT,
        n_axial=0,
        n_transverse=n_modes,
        wc=wc,
        root="clamped",
        kinetic=kinetic,
    )
    return System([beam], [], [Gravity((0.0, -g))]), _contact(mu, restitution)


def impact_beam_state(n_modes: int = 4, theta0=THETA0):
    """Undeformed beam at rest at `theta0` (rad from the x-axis): `(q0, v0)`."""
    q0 = jnp.zeros(1 + n_modes).at[0].set(theta0)
    return q0, jnp.zeros(1 + n_modes)


def impact_beam_ancf(
    n_elements: int = 4, *, youngs=YOUNGS, mu=MU, restitution=0.0, g=G
) -> tuple[System, PointSurfaceContact]:
    """The seed §3 beam as `n_elements` planar ANCF elements pinned at node 0 to the origin."""
    beam = AncfBeam2D(LENGTH, RHO, AREA, SECOND_MOMENT, youngs, n_elements)
    return System([beam], [AncfPin(0, 0)], [Gravity((0.0, -g))]), _contact(mu, restitution)


def impact_beam_ancf_state(n_elements: int = 4, theta0=THETA0):
    """Straight, unstrained ANCF beam at rest at `theta0`: `(q0, v0)`."""
    q0 = AncfBeam2D(LENGTH, RHO, AREA, SECOND_MOMENT, YOUNGS, n_elements).straight_coordinates(angle=theta0)
    return q0, jnp.zeros_like(q0)
