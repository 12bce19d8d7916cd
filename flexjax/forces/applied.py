r"""Applied loads given as functions of time: planar torques and point forces.

Generalized forces follow from virtual work: a torque $\tau$ on a planar body gives
$Q = \tau\, \partial\theta/\partial q$; a force $F$ at a body point gives
$Q = (\partial r / \partial q)^T F$.
"""

from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..bodies.base import planar_angle
from .base import AbstractForce


class AppliedTorque(AbstractForce):
    """Planar torque `torque(t)` (N m) on `body`; with `reaction_body`, the opposite
    torque acts on it (an actuator between two bodies). `torque` may be an `eqx.Module`
    whose parameters are leaves."""

    body: int = eqx.field(static=True)
    torque: Callable
    reaction_body: int | None = eqx.field(static=True)
    bodies: tuple[int, ...] = eqx.field(static=True)
    dim: ClassVar[int] = 2  # planar torque
    separable: ClassVar[bool] = True  # each body's force from that body alone

    def __init__(self, body, torque, reaction_body=None):
        if not callable(torque):
            raise ValueError("AppliedTorque: `torque` must be a callable torque(t).")
        self.body, self.torque, self.reaction_body = body, torque, reaction_body
        self.bodies = (body,) if reaction_body is None else (body, reaction_body)

    def force(self, bodies, qs, vs, t):
        tau = self.torque(t)
        dtheta = [jax.grad(lambda q, b=b: planar_angle(b.axes(q)))(q) for b, q in zip(bodies, qs, strict=True)]
        signs = (1.0, -1.0)
        return tuple(s * tau * d for s, d in zip(signs, dtheta, strict=False))

    def potential_energy(self, bodies, qs, t):
        return jnp.zeros(())


class PointForce(AbstractForce):
    """Force `force(t)` (N, world frame) applied at the body-frame point `point` of `body`."""

    body: int = eqx.field(static=True)
    point: Float[Array, " p"]
    force_fn: Callable
    bodies: tuple[int, ...] = eqx.field(static=True)
    dim: ClassVar[None] = None
    separable: ClassVar[bool] = True  # each body's force from that body alone

    def __init__(self, body, point, force):
        if not callable(force):
            raise ValueError("PointForce: `force` must be a callable force(t).")
        self.body, self.point, self.force_fn = body, jnp.asarray(point, float), force
        self.bodies = (body,)

    def force(self, bodies, qs, vs, t):
        _, vjp = jax.vjp(lambda q: bodies[0].position(q, self.point), qs[0])
        return vjp(jnp.asarray(self.force_fn(t), float))

    def potential_energy(self, bodies, qs, t):
        return jnp.zeros(())
