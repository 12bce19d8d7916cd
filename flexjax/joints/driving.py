r"""Rheonomic driving constraints $f(q) - g(t) = 0$.

`g` is any differentiable callable of time; when it is an `eqx.Module` (for example
`flexjax.control.references.ConstantRate`) its parameters are pytree leaves, so
trajectories can be differentiated with respect to them and batched over them.
"""

from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp

from .base import AbstractJoint, body_axes, check_bodies, planar_relative_sine


class AngleDriver(AbstractJoint):
    r"""Drives the planar relative angle: $\sin(\theta_i - \theta_j - g(t)) = 0$.

    $\theta_j = 0$ for ground (`body_j=None`). The sine form never wraps, so a crank may
    turn any number of revolutions.
    """

    body_i: int = eqx.field(static=True)
    body_j: int | None = eqx.field(static=True)
    g: Callable
    nconstraints: ClassVar[int] = 1
    dim: ClassVar[int] = 2

    def __init__(self, body_i, body_j, g):
        """**Arguments:** `body_i`, `body_j` (or `None`), `g(t)` the prescribed angle (rad):
        any differentiable callable, including an `eqx.Module` with parameters (its array
        fields are pytree leaves, so trajectories can be differentiated and batched with
        respect to them), e.g. the drive profiles `SmoothStart`, `Cycloidal` and
        `Trapezoidal` of `flexjax.control`."""
        check_bodies("AngleDriver", body_i, body_j)
        if not callable(g):
            raise ValueError(f"AngleDriver: `g` must be callable g(t), got {type(g).__name__}.")
        self.body_i, self.body_j, self.g = body_i, body_j, g

    def constraint(self, bi, qi, bj, qj, t):
        ai, aj = body_axes(bi, qi, 2), body_axes(bj, qj, 2)
        return jnp.atleast_1d(planar_relative_sine(ai[:, 0], aj[:, 0], self.g(t)))


class DrivingConstraint(AbstractJoint):
    r"""General driving constraint on one body: $f(q_b) - g(t) = 0$.

    **Arguments:** `body` (index), `f(q_b)` and `g(t)` callables returning arrays of
    `nconstraints` entries (a scalar counts as one).
    """

    body_i: int = eqx.field(static=True)
    f: Callable
    g: Callable
    nconstraints: int = eqx.field(static=True)
    body_j: None = eqx.field(static=True)
    dim: ClassVar[None] = None  # works with planar and spatial bodies

    def __init__(self, body, f, g, nconstraints: int = 1):
        check_bodies("DrivingConstraint", body, None)
        if not (callable(f) and callable(g)):
            raise ValueError("DrivingConstraint: `f` and `g` must be callables f(q_b), g(t).")
        self.body_i, self.f, self.g = body, f, g
        self.nconstraints, self.body_j = nconstraints, None

    def constraint(self, bi, qi, bj, qj, t):
        return jnp.reshape(jnp.asarray(self.f(qi)) - jnp.asarray(self.g(t)), (self.nconstraints,))


def coordinate_driver(body: int, index: int, g: Callable) -> DrivingConstraint:
    """Drives one coordinate of a body: $q_b[index] - g(t) = 0$."""
    return DrivingConstraint(body, lambda q: q[index], g)
