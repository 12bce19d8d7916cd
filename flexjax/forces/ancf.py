r"""Loads on planar ANCF beams: a distributed load and a joint torque at a node.

Generalized forces follow from virtual work. A constant load $w$ per unit undeformed
length has the potential $V = -w\cdot\int_0^L r\,ds = -L\,w\cdot r_c(q)$ ($r_c$ the
centroid of the uniform beam, linear in $q$). A torque $\tau$ at node $k$ does the
virtual work $\tau\,\delta\theta_k$ with the slope angle
$\theta_k = \operatorname{atan2}(r'_{k,y}, r'_{k,x})$, so (seed eq. 22-23)
$Q = \tau\,[-r'_{k,y},\ r'_{k,x}]/|r_k'|^2$ on the slope coordinates of node $k$.
"""

from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import check_finite, check_shape
from ..bodies.ancf2d import AncfBeam2D
from ..bodies.base import planar_angle
from .base import AbstractForce


def _beam(owner, body):
    if not isinstance(body, AncfBeam2D):
        raise ValueError(f"{owner}: acts on an AncfBeam2D, got {type(body).__name__}.")
    return body


class DistributedLoad(AbstractForce):
    r"""Constant, non-following load `load` $w$ (N per metre of undeformed length,
    world frame) along the whole of beam `body`; conservative, $V = -L\,w\cdot r_c(q)$.

    A load $\rho A g$ reproduces `Gravity` on that beam.
    """

    body: int = eqx.field(static=True)
    load: Float[Array, " 2"]
    bodies: tuple[int, ...] = eqx.field(static=True)
    dim: ClassVar[int] = 2
    separable: ClassVar[bool] = True  # each body's force from that body alone

    def __init__(self, body, load):
        """**Arguments:** `body` (index of an `AncfBeam2D`), `load` (2-vector, N/m)."""
        self.body, self.bodies = body, (body,)
        self.load = jnp.asarray(load, float)
        check_shape("DistributedLoad", "load", self.load, (2,))
        check_finite("DistributedLoad", "load", self.load)

    def _potential(self, beam, q):
        beam = _beam("DistributedLoad", beam)
        return -beam.length * (self.load @ beam.center_of_mass(q))

    def force(self, bodies, qs, vs, t):
        return (-jax.grad(lambda q: self._potential(bodies[0], q))(qs[0]),)

    def potential_energy(self, bodies, qs, t):
        return self._potential(bodies[0], qs[0])


def _angle(body, q, node):
    """Slope angle of a beam node, or the orientation of a body's axes (`node=None`)."""
    if node is None:
        return planar_angle(body.axes(q))
    return _beam("AncfNodeTorque", body).node_angle(q, node)


class AncfNodeTorque(AbstractForce):
    r"""Torque `torque(t)` (N m) at node `node` of beam `body`, through the slope angle
    (seed eq. 21-23): $Q = \tau\,\partial\theta_k/\partial q$.

    With `reaction_body` the opposite torque acts on it (an actuator between two
    bodies, seed eq. 21: $\tau_2\delta\theta_2 - \tau_2\delta\theta_3$): at its node
    `reaction_node` when it is a beam, or on its axes (`reaction_node=None`, a rigid
    body). `torque` may be an `eqx.Module` whose parameters are leaves.
    """

    body: int = eqx.field(static=True)
    node: int = eqx.field(static=True)
    torque: Callable
    reaction_body: int | None = eqx.field(static=True)
    reaction_node: int | None = eqx.field(static=True)
    bodies: tuple[int, ...] = eqx.field(static=True)
    dim: ClassVar[int] = 2
    separable: ClassVar[bool] = True  # each body's force from that body alone

    def __init__(self, body, node, torque, reaction_body=None, reaction_node=None):
        if not callable(torque):
            raise ValueError("AncfNodeTorque: `torque` must be a callable torque(t).")
        for name, k in (("node", node), ("reaction_node", reaction_node)):
            if k is not None and (isinstance(k, bool) or not isinstance(k, int)):
                raise ValueError(f"AncfNodeTorque: `{name}` must be an int node index, got {k!r}.")
        if reaction_body is None and reaction_node is not None:
            raise ValueError("AncfNodeTorque: `reaction_node` needs a `reaction_body`.")
        if reaction_body == body:
            raise ValueError(f"AncfNodeTorque: the reaction body must differ from the body, got {body} twice.")
        self.body, self.node, self.torque = body, node, torque
        self.reaction_body, self.reaction_node = reaction_body, reaction_node
        self.bodies = (body,) if reaction_body is None else (body, reaction_body)

    def force(self, bodies, qs, vs, t):
        tau = self.torque(t)
        nodes = (self.node, self.reaction_node)
        signs = (1.0, -1.0)
        return tuple(
            s * tau * jax.grad(lambda q, b=b, k=k: _angle(b, q, k))(q)
            for s, b, q, k in zip(signs, bodies, qs, nodes, strict=False)
        )

    def potential_energy(self, bodies, qs, t):
        return jnp.zeros(())
