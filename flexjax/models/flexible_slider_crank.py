r"""A flexible slider-crank: rigid crank driven at constant speed, planar ANCF connecting
rod, slider on the x-axis.

A model of the kind a user builds first with flexjax (it appears in no seed paper): the
crank (`RigidBar2D`) is pinned at the origin and driven at `omega` (rad/s) from angle 0;
the rod (`AncfBeam2D`, steel by default) is pinned at node 0 to the crank tip and at its
last node to the slider (`PointMass`), which a driving constraint keeps on $y = 0$.
Gravity acts along $-y$.

Coordinates: crank $[r_i, r_j]$ (4), rod $4(n+1)$, slider (2): 26 with 4 elements.
"""

import jax.numpy as jnp

from .._structural import structural_jit
from ..bodies import AncfBeam2D, PointMass, RigidBar2D
from ..control.references import ConstantRate
from ..forces import Gravity
from ..joints import AncfPin, AngleDriver, RevoluteJoint, coordinate_driver
from ..system import System


def flexible_slider_crank(
    crank=0.15,
    rod=0.5,
    omega=150.0,
    n_elements: int = 4,
    crank_mass=0.3,
    slider_mass=0.5,
    rho=7800.0,
    area=1e-4,
    second_moment=8.33e-10,
    youngs=2.1e11,
    g=9.81,
) -> System:
    r"""Build the flexible slider-crank.

    **Arguments:** `crank`, `rod` lengths (m); `omega` crank speed (rad/s);
    `n_elements` ANCF elements of the rod (static); `crank_mass`, `slider_mass` (kg);
    `rho`, `area`, `second_moment`, `youngs`: the rod's density (kg/m³), section (m², m⁴)
    and Young's modulus (Pa); `g` (m/s²).

    **Returns:** a `System` with bodies 0 crank, 1 rod, 2 slider.
    """
    bodies = [
        RigidBar2D(crank_mass, crank),
        AncfBeam2D(rod, rho, area, second_moment, youngs, n_elements),
        PointMass(slider_mass),
    ]
    joints = [
        RevoluteJoint(0, [0.0, 0.0], None, [0.0, 0.0]),
        AngleDriver(0, None, ConstantRate(0.0, omega)),
        AncfPin(1, 0, 0, (crank, 0.0)),
        AncfPin(1, -1, 2, (0.0, 0.0)),
        coordinate_driver(2, 1, ConstantRate(0.0, 0.0)),  # slider guide y = 0
    ]
    return System(bodies, joints, [Gravity((0.0, -g))])


@structural_jit  # one small program instead of one per array operation
def flexible_slider_crank_state(system: System):
    r"""Consistent start at crank angle 0 (top dead centre of the slider), rod straight
    and unstrained: the crank turns at its driven speed $\omega$, the rod turns about
    the slider at $-\omega r / l$, the slider is at rest."""
    crank, beam, omega = system.bodies[0].length, system.bodies[1], system.joints[1].g.rate
    up = omega * crank  # crank tip speed, along +y
    n = beam.n_elements
    s = jnp.arange(n + 1) / n
    nodes_v = jnp.stack([jnp.zeros(n + 1), up * (1 - s), jnp.zeros(n + 1), jnp.full(n + 1, -up / beam.length)], 1)
    q = jnp.concatenate(
        [
            jnp.stack([0.0, 0.0, crank, 0.0]),
            beam.straight_coordinates(jnp.stack([crank, 0.0])),
            jnp.stack([crank + beam.length, jnp.zeros_like(crank)]),
        ]
    )
    v = jnp.concatenate([jnp.stack([0.0, 0.0, 0.0, up]), nodes_v.reshape(-1), jnp.zeros(2)])
    return q, v
