r"""Point-coincidence joints: planar revolute, ground pin, spherical, spatial revolute."""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import check_attachment_point, check_shape
from .base import AbstractJoint, attachment, body_axes, check_bodies


def _init_point_joint(joint, owner, body_i, point_i, body_j, point_j, dim):
    """Shared construction of point-coincidence joints (fields and checks)."""
    check_bodies(owner, body_i, body_j)
    joint.body_i, joint.body_j = body_i, body_j
    joint.point_i = check_attachment_point(owner, "point_i", point_i)
    joint.point_j = check_attachment_point(owner, "point_j", point_j)
    if body_j is None:
        check_shape(owner, "point_j (ground point)", joint.point_j, (dim,))


class RevoluteJoint(AbstractJoint):
    r"""Planar revolute joint: $r_i(p_i) - r_j(p_j) = 0$ (2 rows).

    With `body_j=None` the joint is a ground pin and `point_j` is a world point.
    """

    body_i: int = eqx.field(static=True)
    point_i: Float[Array, " p"]
    body_j: int | None = eqx.field(static=True)
    point_j: Float[Array, " p"]
    nconstraints: ClassVar[int] = 2
    dim: ClassVar[int] = 2

    def __init__(self, body_i, point_i, body_j, point_j):
        """**Arguments:** `body_i`, `point_i` (its body-frame point), `body_j` (index or
        `None` for ground), `point_j` (body-frame point, or world point on ground)."""
        _init_point_joint(self, "RevoluteJoint", body_i, point_i, body_j, point_j, 2)

    def constraint(self, bi, qi, bj, qj, t):
        return attachment(bi, qi, self.point_i) - attachment(bj, qj, self.point_j)


class SphericalJoint(AbstractJoint):
    r"""Spherical (ball) joint: $r_i(p_i) - r_j(p_j) = 0$ in 3D (3 rows).

    With `body_j=None`, `point_j` is a fixed world point.
    """

    body_i: int = eqx.field(static=True)
    point_i: Float[Array, " p"]
    body_j: int | None = eqx.field(static=True)
    point_j: Float[Array, " p"]
    nconstraints: ClassVar[int] = 3
    dim: ClassVar[int] = 3

    def __init__(self, body_i, point_i, body_j, point_j):
        """**Arguments:** as `RevoluteJoint`, in 3D."""
        _init_point_joint(self, "SphericalJoint", body_i, point_i, body_j, point_j, 3)

    def constraint(self, bi, qi, bj, qj, t):
        return attachment(bi, qi, self.point_i) - attachment(bj, qj, self.point_j)


class RevoluteJoint3D(AbstractJoint):
    r"""Spatial revolute (hinge): points coincide and the hinge axis $a$ (body-frame
    unit vector on each body) stays aligned: $r_i - r_j = 0$,
    $(A_j a_j) \cdot (A_i b_i) = (A_j a_j) \cdot (A_i c_i) = 0$ with $b_i, c_i \perp a_i$
    (5 rows)."""

    body_i: int = eqx.field(static=True)
    point_i: Float[Array, " 3"]
    axis_i: Float[Array, " 3"]
    body_j: int | None = eqx.field(static=True)
    point_j: Float[Array, " 3"]
    axis_j: Float[Array, " 3"]
    nconstraints: ClassVar[int] = 5
    dim: ClassVar[int] = 3

    def __init__(self, body_i, point_i, axis_i, body_j, point_j, axis_j):
        """**Arguments:** body indices, body-frame points and body-frame hinge axes
        (world axis for ground)."""
        check_bodies("RevoluteJoint3D", body_i, body_j)
        self.body_i, self.body_j = body_i, body_j
        self.point_i = check_attachment_point("RevoluteJoint3D", "point_i", point_i)
        self.point_j = check_attachment_point("RevoluteJoint3D", "point_j", point_j)
        self.axis_i = jnp.asarray(axis_i, float) / jnp.linalg.norm(jnp.asarray(axis_i, float))
        self.axis_j = jnp.asarray(axis_j, float) / jnp.linalg.norm(jnp.asarray(axis_j, float))
        for n in ("point_i", "point_j", "axis_i", "axis_j"):
            check_shape("RevoluteJoint3D", n, getattr(self, n), (3,))

    def constraint(self, bi, qi, bj, qj, t):
        # two unit vectors normal to axis_i, built without branching
        a = self.axis_i
        helper = jnp.where(jnp.abs(a[0]) < 0.9, jnp.array([1.0, 0, 0]), jnp.array([0, 1.0, 0]))
        b = jnp.cross(a, helper)
        b = b / jnp.linalg.norm(b)
        c = jnp.cross(a, b)
        ai = body_axes(bi, qi, 3)
        aj = body_axes(bj, qj, 3) @ self.axis_j
        return jnp.concatenate(
            [
                attachment(bi, qi, self.point_i) - attachment(bj, qj, self.point_j),
                jnp.stack([aj @ (ai @ b), aj @ (ai @ c)]),
            ]
        )
