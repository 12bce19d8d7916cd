r"""Uniform gravity: $V = -\sum_b m_b\, g \cdot r_{c,b}(q_b)$, $Q_b = -\partial V / \partial q_b$."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import check_finite
from .base import AbstractForce


class Gravity(AbstractForce):
    """Uniform gravitational field.

    **Arguments:** `g` acceleration vector (m/s², e.g. `(0, -9.81)`); `bodies` the body
    indices it acts on (default `None`: all bodies). The vector length must match the
    bodies' dimension.
    """

    g: Float[Array, " d"]
    bodies: tuple[int, ...] | None = eqx.field(static=True)
    dim: int = eqx.field(static=True)
    separable: ClassVar[bool] = True  # each body's force from that body alone
    per_body: ClassVar[bool] = True  # and by the same law on every body

    def __init__(self, g=(0.0, -9.81), bodies=None):
        self.g = jnp.asarray(g, float)
        if self.g.ndim != 1 or self.g.shape[0] not in (2, 3):
            raise ValueError(f"Gravity: `g` must be a 2- or 3-vector, got shape {self.g.shape}.")
        check_finite("Gravity", "g", self.g)
        self.bodies = None if bodies is None else tuple(bodies)
        self.dim = int(self.g.shape[0])

    def body_potential(self, body, q, t=0.0):
        return -body.total_mass() * (self.g @ body.center_of_mass(q))

    def body_force(self, body, q, v, t):
        return -jax.grad(lambda qq: self.body_potential(body, qq, t))(q)

    def force(self, bodies, qs, vs, t):
        return tuple(self.body_force(b, q, v, t) for b, q, v in zip(bodies, qs, vs, strict=True))

    def potential_energy(self, bodies, qs, t):
        return sum((self.body_potential(b, q, t) for b, q in zip(bodies, qs, strict=True)), jnp.zeros(()))
