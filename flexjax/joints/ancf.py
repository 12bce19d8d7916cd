r"""Joints at the nodes of planar ANCF beams (`AncfBeam2D`): pin, clamp, beam-to-beam revolute.

A node is given by its index (static int, negative counts from the tip: `-1` is the
free end). The other side is ground (`body_j=None`, a world point), any planar body (a
body-frame point, located with its `position`/`axes`), or, for `AncfRevolute`, a node of
another beam. `RevoluteJoint(beam, (s,), ...)` with an arc-length point also works for
a pin anywhere along a beam; these classes name nodes instead.

The clamp fixes the node position and the slope *direction* (3 rows), not the slope
length: the axial stretch at the clamped node stays free, as in the continuum (fixing
$r' = (1, 0)$ outright would add a spurious axial constraint).
"""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..bodies.ancf2d import AncfBeam2D
from .base import AbstractJoint, attachment, body_axes, check_bodies, planar_relative_sine


def _check_node(owner, node):
    if isinstance(node, bool) or not isinstance(node, int):
        raise ValueError(f"{owner}: a node must be a static int index, got {node!r}.")


def _beam(owner, body, which):
    if not isinstance(body, AncfBeam2D):
        raise ValueError(f"{owner}: body {which} must be an AncfBeam2D, got {type(body).__name__}.")
    return body


def _unit(d):
    return d / jnp.sqrt(d @ d)


class AncfPin(AbstractJoint):
    r"""Pins node `node` of the beam `body` to a point: $r_k - r_j(p_j) = 0$ (2 rows).

    **Arguments:** `body` (index of an `AncfBeam2D`), `node` (static int), `body_j`
    (index, or `None` for ground), `point_j` (body-frame point of `body_j`, or a world
    point on ground; default the origin).
    """

    body_i: int = eqx.field(static=True)
    node: int = eqx.field(static=True)
    body_j: int | None = eqx.field(static=True)
    point_j: Float[Array, " p"]
    nconstraints: ClassVar[int] = 2
    dim: ClassVar[int] = 2

    def __init__(self, body, node, body_j=None, point_j=(0.0, 0.0)):
        check_bodies("AncfPin", body, body_j)
        _check_node("AncfPin", node)
        self.body_i, self.node, self.body_j = body, node, body_j
        self.point_j = jnp.asarray(point_j, float)
        if body_j is None and self.point_j.shape != (2,):
            raise ValueError(f"AncfPin: the ground point `point_j` must have shape (2,), got {self.point_j.shape}.")

    @property
    def attached_nodes(self) -> tuple[int | None, int | None]:
        """The rows read node `node` of the beam; the other side through its `position`/`axes`."""
        return (self.node, None)

    def constraint(self, bi, qi, bj, qj, t):
        ri = _beam("AncfPin", bi, "i").node_position(qi, self.node)
        return ri - attachment(bj, qj, self.point_j)


class AncfClamp(AbstractJoint):
    r"""Clamps node `node` of a beam: position and slope direction fixed (3 rows).

    $r_k - r_j(p_j) = 0$ and $\sin(\theta_k - \theta_j - \theta_0) = 0$, where
    $\theta_k$ is the slope angle of the node, $\theta_j$ the angle of the first axis of
    `body_j` (0 on ground) and $\theta_0$ = `angle`. The sine is written with
    $r_k'/|r_k'|$, so the multiplier of that row is the clamping moment (N m).

    **Arguments:** `body`, `node`, `body_j` (`None`: ground), `point_j` (m), `angle` (rad,
    a leaf; default 0: the slope along the x-axis of `body_j` or of the world).
    """

    body_i: int = eqx.field(static=True)
    node: int = eqx.field(static=True)
    body_j: int | None = eqx.field(static=True)
    point_j: Float[Array, " p"]
    angle: Float[Array, ""]
    nconstraints: ClassVar[int] = 3
    dim: ClassVar[int] = 2

    def __init__(self, body, node, body_j=None, point_j=(0.0, 0.0), angle=0.0):
        check_bodies("AncfClamp", body, body_j)
        _check_node("AncfClamp", node)
        self.body_i, self.node, self.body_j = body, node, body_j
        self.point_j = jnp.asarray(point_j, float)
        self.angle = jnp.asarray(angle, float)
        if body_j is None and self.point_j.shape != (2,):
            raise ValueError(f"AncfClamp: the ground point `point_j` must have shape (2,), got {self.point_j.shape}.")
        if self.angle.shape != ():
            raise ValueError(f"AncfClamp: `angle` must be a scalar, got shape {self.angle.shape}.")

    @property
    def attached_nodes(self) -> tuple[int | None, int | None]:
        """The rows read node `node` of the beam; the other side through its `position`/`axes`."""
        return (self.node, None)

    def constraint(self, bi, qi, bj, qj, t):
        beam = _beam("AncfClamp", bi, "i")
        pos = beam.node_position(qi, self.node) - attachment(bj, qj, self.point_j)
        ti = _unit(beam.node_slope(qi, self.node))
        rot = planar_relative_sine(ti, body_axes(bj, qj, 2)[:, 0], self.angle)
        return jnp.concatenate([pos, jnp.atleast_1d(rot)])


class AncfRevolute(AbstractJoint):
    r"""Planar revolute joint between node `node_i` of beam `body_i` and node `node_j`
    of beam `body_j`: $r_{k_i} - r_{k_j} = 0$ (2 rows); the slopes stay independent.

    With `rigid=True` the slope directions are welded too (3 rows):
    $\sin(\theta_{k_i} - \theta_{k_j} - \theta_0) = 0$ with $\theta_0$ = `angle`.
    """

    body_i: int = eqx.field(static=True)
    node_i: int = eqx.field(static=True)
    body_j: int = eqx.field(static=True)
    node_j: int = eqx.field(static=True)
    angle: Float[Array, ""]
    rigid: bool = eqx.field(static=True)
    nconstraints: int = eqx.field(static=True)
    dim: ClassVar[int] = 2

    def __init__(self, body_i, node_i, body_j, node_j, *, rigid=False, angle=0.0):
        if body_j is None:
            raise ValueError("AncfRevolute: joins two beams; use AncfPin or AncfClamp for ground.")
        check_bodies("AncfRevolute", body_i, body_j)
        _check_node("AncfRevolute", node_i)
        _check_node("AncfRevolute", node_j)
        self.body_i, self.node_i, self.body_j, self.node_j = body_i, node_i, body_j, node_j
        self.rigid, self.angle = bool(rigid), jnp.asarray(angle, float)
        self.nconstraints = 3 if self.rigid else 2

    @property
    def attached_nodes(self) -> tuple[int | None, int | None]:
        """The rows read node `node_i` of beam i and node `node_j` of beam j."""
        return (self.node_i, self.node_j)

    def constraint(self, bi, qi, bj, qj, t):
        a, b = _beam("AncfRevolute", bi, "i"), _beam("AncfRevolute", bj, "j")
        pos = a.node_position(qi, self.node_i) - b.node_position(qj, self.node_j)
        if not self.rigid:
            return pos
        ti, tj = _unit(a.node_slope(qi, self.node_i)), _unit(b.node_slope(qj, self.node_j))
        return jnp.concatenate([pos, jnp.atleast_1d(planar_relative_sine(ti, tj, self.angle))])
