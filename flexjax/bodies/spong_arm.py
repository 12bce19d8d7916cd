r"""The Spong model of a flexible-joint flexible-link arm (seed 000 ref. 21, Fig. 1).

The motor rotor (inertia $J_m$, angle $\theta_m$) drives the link hub (angle $\theta$)
through a torsion spring $k$ and damper $c$; the link is a beam clamped to its hub
(`ModalHubBeam(root="clamped")`). Coordinates $q_b = [\theta_m, \theta, q_1, q_2]$: one
more than the FLFJ model (where the joint is the beam's elastic root constraint and the
hub *is* the rotor), which is the paper's point.

$T = \tfrac12 J_m\dot\theta_m^2 + T_{beam}(\theta, q_1, q_2)$,
$V = \tfrac12 k(\theta_m - \theta)^2 + V_{beam}$, joint damping torque
$c(\dot\theta_m - \dot\theta)$.
"""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np
from jaxtyping import Array, Float

from .._checks import check_shape, is_concrete
from .._custom_types import Scalar
from .base import AbstractBody
from .modal_beam import ModalHubBeam, _rot


class SpongArm(AbstractBody):
    r"""Rotor + torsion spring + clamped modal beam, $q_b = [\theta_m, \theta, q_1, q_2]$.

    `axes` are the **rotor** axes, so an `AppliedTorque` on this body drives the motor
    (as in the paper's PD law); `link_axes` gives the link hub frame.
    """

    rotor_inertia: Float[Array, ""]
    k: Float[Array, ""]
    c: Float[Array, ""]
    beam: ModalHubBeam
    ncoords: int = eqx.field(static=True)
    dim: ClassVar[int] = 2
    point_size: ClassVar[int] = 1
    nconstraints: ClassVar[int] = 0

    def __init__(self, rotor_inertia, k, beam: ModalHubBeam, c=0.0):
        r"""**Arguments:**

        - `rotor_inertia`: $J_m$, kg m², $> 0$.
        - `k`: joint torsion spring, N m/rad, $\ge 0$. `c`: joint damper, N m s/rad, $\ge 0$.
        - `beam`: a `ModalHubBeam` with `root="clamped"`; its `hub_inertia` is the link-side
          hub inertia. 0 is allowed but makes the truncated model stiff: the link hub can
          turn against a counter-deflection of the cantilever modes with almost no inertia
          (smallest mass-matrix eigenvalue ~4e-6 kg m² for the 2 mm steel rod of the
          experiments, 4 modes); use an implicit solver or a small link hub inertia.
        """
        if not isinstance(beam, ModalHubBeam) or beam.root != "clamped":
            raise ValueError("SpongArm: `beam` must be a ModalHubBeam with root='clamped'.")
        for name, val, strict in (("rotor_inertia", rotor_inertia, True), ("k", k, False), ("c", c, False)):
            arr = jnp.asarray(val, float)
            check_shape("SpongArm", name, arr, ())
            if is_concrete(arr) and (not np.isfinite(float(arr)) or float(arr) < 0 or (strict and float(arr) == 0)):
                raise ValueError(
                    f"SpongArm: `{name}` must be {'> 0' if strict else '>= 0'} and finite, got {float(arr)}."
                )
            setattr(self, name, arr)
        self.beam = beam
        self.ncoords = 1 + beam.ncoords

    def mass_matrix(self, q):
        return jax.scipy.linalg.block_diag(jnp.reshape(self.rotor_inertia, (1, 1)), self.beam.mass_matrix(q[1:]))

    def force(self, q, v, t):
        tau = self.k * (q[0] - q[1]) + self.c * (v[0] - v[1])  # joint torque on the link
        fb = self.beam.force(q[1:], v[1:], t)
        return jnp.concatenate([-tau[None], fb[:1] + tau, fb[1:]])

    def kinetic_energy(self, q: Float[Array, " n"], v: Float[Array, " n"]) -> Scalar:
        """Rotor plus beam kinetic energy."""
        return 0.5 * self.rotor_inertia * v[0] ** 2 + self.beam.kinetic_energy(q[1:], v[1:])

    def potential_energy(self, q):
        return 0.5 * self.k * (q[0] - q[1]) ** 2 + self.beam.potential_energy(q[1:])

    def frequencies(self) -> Float[Array, " n2"]:
        """Transverse frequencies (Hz) of the link with its hub held: the cantilever's."""
        return self.beam.frequencies()

    def constraints(self, q):
        return jnp.zeros((0,), q.dtype)

    def axes(self, q):
        """Rotor axes $\\Theta(\\theta_m)$."""
        return _rot(q[0])

    def link_axes(self, q: Float[Array, " n"]) -> Float[Array, "2 2"]:
        """Link hub axes $\\Theta(\\theta)$."""
        return _rot(q[1])

    def position(self, q, point):
        """World position of the beam point at axial coordinate `point[0]`."""
        return self.beam.position(q[1:], point)

    def total_mass(self):
        return self.beam.total_mass()

    def center_of_mass(self, q):
        return self.beam.center_of_mass(q[1:])
