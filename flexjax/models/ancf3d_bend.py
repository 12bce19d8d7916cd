r"""The 45° bend of Bathe & Bolourchi (1979) with spatial ANCF beams.

A circular arc of radius R = 100 and angle 45° in the x-y plane, starting at the origin
with tangent x (centre (0, R, 0)), unit square section, E = 1e7, ν = 0, fully clamped at
the root, loaded at the tip along z. It is modelled as a polygon of straight beams
(`ancf3d_bend`); `BEND_REFERENCE` holds the tips of Simo & Vu-Quoc (1986) at
P = 300, 450, 600.
"""

import jax
import jax.numpy as jnp
import numpy as np

from ..bodies import AncfBeam3D, RectangularSection
from ..bodies.sections import AbstractSection
from ..control.references import Constant
from ..forces import PointForce
from ..joints import AncfClamp3D, AncfRigidConnection3D
from ..results import RESULTS
from ..solvers import solve_static
from ..system import System

# Simo & Vu-Quoc (1986), 45° bend, tip (x, y, z) at P = 300, 450, 600
BEND_REFERENCE = {300: (58.84, 22.33, 40.08), 450: (52.32, 18.62, 48.39), 600: (47.23, 15.79, 53.37)}
BEND_RADIUS, BEND_YOUNGS = 100.0, 1e7


class UnwarpedSquare(AbstractSection):
    r"""Square section whose torsion constant is the polar moment $I_y + I_z = a^4/6$ (no
    warping) instead of St-Venant's $0.1406\,a^4$, as a section of another code may be
    specified.

    **Arguments:** `side` $a$ (m).
    """

    side: jax.Array

    def __init__(self, side):
        self.side = jnp.asarray(side, float)

    def _square(self):
        return RectangularSection(self.side, self.side)

    def area(self):
        return self._square().area()

    def second_moments(self):
        return self._square().second_moments()

    def quadrature(self, order):
        return self._square().quadrature(order)

    def torsion_constant(self):
        return jnp.sum(self.second_moments())

    def shear_factor(self, nu):
        return self._square().shear_factor(nu)


def _rz(a):
    """Rotation by `a` (rad) about z."""
    c, s = np.cos(a), np.sin(a)
    return jnp.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def ancf3d_bend(segments, elements, section=None):
    """The 45° bend as a polygon of `segments` straight `AncfBeam3D` chords of `elements`
    elements each, joined by `AncfRigidConnection3D` at the corners, root fully clamped.

    **Arguments:** `section`: default the unit square (St-Venant J = 0.1406).

    **Returns:** `(system_of, q0, tip_of)`: `system_of(P)` the system with the tip load
    `P` along z (a leaf), `q0` the unloaded coordinates and `tip_of(q)` the tip position.
    """
    d = (np.pi / 4) / segments
    chord = 2 * BEND_RADIUS * np.sin(d / 2)
    section = RectangularSection(1.0, 1.0) if section is None else section
    beam = AncfBeam3D(chord, 1.0, BEND_YOUNGS, section, elements, poisson=0.0)
    joints = [AncfClamp3D(0, 0, rotation=_rz(d / 2), full=True)]  # the first chord's frame
    q0 = []
    for k in range(segments):
        start = jnp.array([BEND_RADIUS * np.sin(k * d), BEND_RADIUS * (1 - np.cos(k * d)), 0.0])
        q0.append(beam.straight_coordinates(start, _rz(k * d + d / 2)))
        if k:
            joints.append(AncfRigidConnection3D(k, 0, k - 1, -1, rotation=_rz(d)))
    bodies = [beam] * segments

    def system_of(P):
        force = PointForce(segments - 1, jnp.array([chord, 0.0, 0.0]), Constant(jnp.stack([0.0, 0.0, P])))
        return System(bodies, joints, [force])

    tip = lambda q: q[12 * (elements + 1) * (segments - 1) + 12 * elements :][:3]
    return system_of, jnp.concatenate(q0), tip


def ancf3d_bend_tips(segments, elements, section=None):
    """Tip positions of `ancf3d_bend(segments, elements, section)` under P = 300, 450, 600
    (each ramped from zero in 20 / 8 / 8 load steps).

    **Returns:** `{P: tip}`, tips as numpy arrays. **Raises:** `RuntimeError` when
    Newton fails.
    """
    system_of, q0, tip = ancf3d_bend(segments, elements, section)
    out = {}
    for P, steps in ((300, 20), (450, 8), (600, 8)):
        sol = solve_static(system_of(jnp.asarray(float(P))), q0, steps)
        if not bool(sol.result == RESULTS.successful):
            raise RuntimeError(f"45° bend: Newton failed at P = {P}")
        out[P] = np.asarray(tip(sol.q))
    return out
