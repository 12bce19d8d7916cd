r"""A spatial ANCF beam clamped at its root and loaded at the tip and along its length:
the load cases of the closed-form checks ($PL/EA$, $PL^3/3EI$, $qL^4/8EI$, $TL/GJ$) and
of the tip moment $M = EI\theta/L$ that rolls the beam into an arc of radius $L/\theta$.
"""

import jax.numpy as jnp

from ..bodies import AncfBeam3D
from ..control.references import Constant
from ..forces import AppliedMoment3D, DistributedLoad3D, PointForce
from ..joints import AncfClamp3D
from ..system import System


def ancf3d_cantilever(beam: AncfBeam3D, force=None, moment=None, load=None) -> System:
    """`beam` clamped at node 0 (`AncfClamp3D`), with the loads that are given.

    **Arguments:**

    - `beam`: the `AncfBeam3D`, straight along +x from the origin.
    - `force`: tip force (N), shape (3,), at $x = L$ (`PointForce`).
    - `moment`: tip moment (N m), shape (3,), at the last node (`AppliedMoment3D`).
    - `load`: uniform load per length (N/m), shape (3,) (`DistributedLoad3D`).

    Force and moment are leaves of `Constant` signals, so a sweep of loads reuses one
    compiled solve.

    **Returns:** the `System`; its straight state is `beam.straight_coordinates()`.
    """
    forces = []
    if force is not None:
        forces.append(PointForce(0, jnp.array([beam.length, 0.0, 0.0]), Constant(force)))
    if moment is not None:
        forces.append(AppliedMoment3D(0, Constant(moment), node=-1))
    if load is not None:
        forces.append(DistributedLoad3D(0, load))
    return System([beam], [AncfClamp3D(0, 0)], forces)
