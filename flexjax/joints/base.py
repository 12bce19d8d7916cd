"""The joint interface: kinematic constraints between two bodies (or a body and ground)."""

import abc
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._custom_types import Scalar
from ..bodies.base import AbstractBody


def check_bodies(owner: str, body_i, body_j) -> None:
    """A joint's body indices: `body_i` an int >= 0, `body_j` one too or `None` (ground),
    and the two different."""
    if not isinstance(body_i, int) or body_i < 0:
        raise ValueError(f"{owner}: `body_i` must be a body index >= 0, got {body_i!r}.")
    if body_j is not None and (not isinstance(body_j, int) or body_j < 0):
        raise ValueError(f"{owner}: `body_j` must be a body index or None (ground), got {body_j!r}.")
    if body_i == body_j:
        raise ValueError(f"{owner}: a joint needs two different bodies, got {body_i} twice.")


def attachment(body, q, point):
    """World position of a joint point: on a body, or fixed in the world (ground)."""
    return point if body is None else body.position(q, point)


def body_axes(body, q, dim):
    """Axes of a body, or the world axes for ground (`body is None`)."""
    return jnp.eye(dim) if body is None else body.axes(q)


def planar_relative_sine(ai, aj, theta0):
    r"""$\sin(\theta_i - \theta_j - \theta_0)$ from the x-axes of two planar frames.

    Written with cross and dot products so it never wraps at $\pm\pi$ and stays smooth.
    """
    cross = aj[0] * ai[1] - aj[1] * ai[0]
    return cross * jnp.cos(theta0) - (aj @ ai) * jnp.sin(theta0)


class AbstractJoint(eqx.Module):
    r"""Constraint rows $\Phi_J(q_i, q_j, t) = 0$ between bodies `body_i` and `body_j`.

    `body_j is None` means ground. The system passes each joint the two body modules
    together with their coordinate slices: a joint needs a body's `position`/`axes`
    maps to locate its attachment points (STYLE.md's `constraint(q_i, q_j, t)` plus the
    bodies, so that joints stay independent of any particular body type).

    `attached_nodes` says which coordinates the rows read (static; used by
    `flexjax.solvers._structure` for the sparsity of the Newton matrix): per side, a node
    index of a body with an `ElementChain` coupling when the rows depend on that body
    through that node's coordinates only, else `None` (the default, always safe: any
    coordinate of the body).
    """

    body_i: eqx.AbstractVar[int]
    body_j: eqx.AbstractVar[int | None]
    nconstraints: eqx.AbstractVar[int]
    dim: eqx.AbstractVar[int | None]  # 2, 3, or None for any dimension
    attached_nodes: ClassVar[tuple[int | None, int | None]] = (None, None)

    @abc.abstractmethod
    def constraint(
        self,
        bi: AbstractBody,
        qi: Float[Array, " ni"],
        bj: AbstractBody | None,
        qj: Float[Array, " nj"],
        t: Scalar,
    ) -> Float[Array, " m"]:
        """Constraint residual, shape `(nconstraints,)`."""


class AbstractVelocityConstraint(eqx.Module):
    r"""Velocity-level (nonholonomic) constraint $\psi = A(q, t)\,\dot q - c(q, t) = 0$
    between `body_i` and `body_j` (`None`: ground); it must be affine in the velocities.

    Only the ODE path (`simulate_ode`) integrates such constraints: they enter the
    Udwadia-Kalaba/Baumgarte forms once differentiated in time.
    """

    body_i: eqx.AbstractVar[int]
    body_j: eqx.AbstractVar[int | None]
    nconstraints: eqx.AbstractVar[int]
    dim: eqx.AbstractVar[int | None]

    @abc.abstractmethod
    def velocity_constraint(self, bi, qi, vi, bj, qj, vj, t: Scalar) -> Float[Array, " m"]:
        """Residual $\\psi$, shape `(nconstraints,)`."""
