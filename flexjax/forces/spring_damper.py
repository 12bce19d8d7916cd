r"""Point-to-point spring-damper: $F = -(k (l - l_0) + c\,\dot l)\, \partial l / \partial q$."""

from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import check_attachment_point, check_finite, check_shape, safe_norm
from .base import AbstractForce


class SpringDamper(AbstractForce):
    r"""Linear spring and damper between two body points (or a body and a world point).

    Potential $V = \tfrac12 k (l - l_0)^2$; the damper dissipates. The length uses a
    norm with a zero gradient at $l = 0$, so gradients stay finite.

    **Arguments:** `body_i`, `point_i`, `body_j` (`None` for a world anchor `point_j`),
    `point_j`, `stiffness` k (N/m), `damping` c (N s/m), `rest_length` $l_0$ (m).
    """

    body_i: int = eqx.field(static=True)
    point_i: Float[Array, " p"]
    body_j: int | None = eqx.field(static=True)
    point_j: Float[Array, " p"]
    stiffness: Float[Array, ""]
    damping: Float[Array, ""]
    rest_length: Float[Array, ""]
    bodies: tuple[int, ...] = eqx.field(static=True)
    dim: ClassVar[None] = None

    def __init__(self, body_i, point_i, body_j, point_j, stiffness, damping=0.0, rest_length=0.0):
        self.body_i, self.body_j = body_i, body_j
        self.point_i = check_attachment_point("SpringDamper", "point_i", point_i)
        self.point_j = check_attachment_point("SpringDamper", "point_j", point_j)
        self.stiffness = jnp.asarray(stiffness, float)
        self.damping = jnp.asarray(damping, float)
        self.rest_length = jnp.asarray(rest_length, float)
        for name in ("stiffness", "damping", "rest_length"):
            check_shape("SpringDamper", name, getattr(self, name), ())
            check_finite("SpringDamper", name, getattr(self, name))
        self.bodies = (body_i,) if body_j is None else (body_i, body_j)

    def _length(self, bodies, qs):
        ri = bodies[0].position(qs[0], self.point_i)
        rj = self.point_j if self.body_j is None else bodies[1].position(qs[1], self.point_j)
        return safe_norm(ri - rj)

    def force(self, bodies, qs, vs, t):
        length = lambda *q: self._length(bodies, q)
        l, ldot = jax.jvp(length, tuple(qs), tuple(vs))
        dl = jax.grad(length, argnums=tuple(range(len(qs))))(*qs)
        tension = self.stiffness * (l - self.rest_length) + self.damping * ldot
        return tuple(-tension * d for d in dl)

    def potential_energy(self, bodies, qs, t):
        return 0.5 * self.stiffness * (self._length(bodies, qs) - self.rest_length) ** 2
