r"""Fixed (welded) joint: relative position and orientation frozen."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import check_attachment_point, check_finite
from .base import AbstractJoint, attachment, body_axes, check_bodies, planar_relative_sine


class FixedJoint(AbstractJoint):
    r"""Welds two bodies (or a body to ground, `body_j=None`).

    Rows: $r_i(p_i) - r_j(p_j) = 0$ plus the orientation rows. Planar (3 rows):
    $\sin(\theta_i - \theta_j - \theta_0) = 0$. Spatial (6 rows): the skew part of
    $A_j^T A_i R_0^T$ vanishes, i.e. the relative rotation equals $R_0$ (valid for
    orientation errors below 90°, always the case near a consistent state).
    """

    body_i: int = eqx.field(static=True)
    point_i: Float[Array, " p"]
    body_j: int | None = eqx.field(static=True)
    point_j: Float[Array, " p"]
    relative_orientation: Float[Array, "..."]
    dim: int = eqx.field(static=True)
    nconstraints: int = eqx.field(static=True)

    def __init__(self, body_i, point_i, body_j, point_j, dim: int = 2, relative_orientation=None):
        """**Arguments:** body indices and body-frame points (world point for ground);
        `dim` 2 or 3; `relative_orientation`: planar angle $\\theta_0$ (rad) or 3x3
        rotation $R_0 = A_j^T A_i$; default aligned axes."""
        check_bodies("FixedJoint", body_i, body_j)
        if dim not in (2, 3):
            raise ValueError(f"FixedJoint: `dim` must be 2 or 3, got {dim}.")
        self.body_i, self.body_j, self.dim = body_i, body_j, dim
        self.point_i = check_attachment_point("FixedJoint", "point_i", point_i)
        self.point_j = check_attachment_point("FixedJoint", "point_j", point_j)
        if body_j is None and self.point_j.shape != (dim,):
            raise ValueError(
                f"FixedJoint: the ground point `point_j` must have shape ({dim},), got {self.point_j.shape}."
            )
        default = 0.0 if dim == 2 else jnp.eye(3)
        self.relative_orientation = jnp.asarray(
            default if relative_orientation is None else relative_orientation, float
        )
        want = () if dim == 2 else (3, 3)
        if self.relative_orientation.shape != want:
            raise ValueError(
                f"FixedJoint: `relative_orientation` must have shape {want} for dim={dim}, "
                f"got {self.relative_orientation.shape}."
            )
        check_finite("FixedJoint", "relative_orientation", self.relative_orientation)
        self.nconstraints = 3 if dim == 2 else 6

    def constraint(self, bi, qi, bj, qj, t):
        pos = attachment(bi, qi, self.point_i) - attachment(bj, qj, self.point_j)
        ai, aj = body_axes(bi, qi, self.dim), body_axes(bj, qj, self.dim)
        if self.dim == 2:
            rot = jnp.atleast_1d(planar_relative_sine(ai[:, 0], aj[:, 0], self.relative_orientation))
        else:
            r = aj.T @ ai @ self.relative_orientation.T
            rot = 0.5 * jnp.stack([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
        return jnp.concatenate([pos, rot])
