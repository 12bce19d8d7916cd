r"""Nonholonomic (velocity-level) constraints: rolling without slipping, prescribed speeds."""

from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import check_shape
from .base import AbstractVelocityConstraint, check_bodies


class NoSlipConstraint(AbstractVelocityConstraint):
    r"""A body point may not move along a body-fixed direction (planar knife edge /
    wheel without lateral slip): $\psi = (A(q)\,n) \cdot \dot r_p = 0$.

    **Arguments:** `body`, `point` (body frame, the wheel contact / axle point),
    `direction` $n$ (body frame, the blocked direction, e.g. the axle `(0, 1)`).
    """

    body_i: int = eqx.field(static=True)
    point: Float[Array, " 2"]
    direction: Float[Array, " 2"]
    body_j: None = eqx.field(static=True)
    nconstraints: ClassVar[int] = 1
    dim: ClassVar[int] = 2

    def __init__(self, body, point, direction):
        check_bodies("NoSlipConstraint", body, None)
        self.body_i, self.body_j = body, None
        self.point = jnp.asarray(point, float)
        self.direction = jnp.asarray(direction, float)
        check_shape("NoSlipConstraint", "point", self.point, (2,))
        check_shape("NoSlipConstraint", "direction", self.direction, (2,))

    def velocity_constraint(self, bi, qi, vi, bj, qj, vj, t):
        r_dot = jax.jvp(lambda q: bi.position(q, self.point), (qi,), (vi,))[1]
        return jnp.atleast_1d((bi.axes(qi) @ self.direction) @ r_dot)


class VelocityDriver(AbstractVelocityConstraint):
    r"""Prescribed velocity-level quantity: $\psi = f(q_b, \dot q_b) - g(t) = 0$, with `f`
    linear in $\dot q_b$ (a speed, a wheel rate: a first-order "program" constraint)."""

    body_i: int = eqx.field(static=True)
    f: Callable
    g: Callable
    nconstraints: int = eqx.field(static=True)
    body_j: None = eqx.field(static=True)
    dim: ClassVar[None] = None

    def __init__(self, body, f, g, nconstraints: int = 1):
        check_bodies("VelocityDriver", body, None)
        if not (callable(f) and callable(g)):
            raise ValueError("VelocityDriver: `f` and `g` must be callables f(q_b, v_b), g(t).")
        self.body_i, self.f, self.g, self.nconstraints, self.body_j = body, f, g, nconstraints, None

    def velocity_constraint(self, bi, qi, vi, bj, qj, vj, t):
        return jnp.reshape(jnp.asarray(self.f(qi, vi)) - jnp.asarray(self.g(t)), (self.nconstraints,))
