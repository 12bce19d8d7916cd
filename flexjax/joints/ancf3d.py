r"""Joints at the nodes of spatial ANCF beams (`AncfBeam3D`): spherical, revolute, clamp,
and the rigid node-to-node connection of two beams.

A node is a static int index (negative counts from the tip). The other side is ground
(`body_j=None`: `point_j` is a world point, its axes the world axes), any 3D body
(`point_j` a body-frame point, located with its `position`/`axes`, e.g. an NCF
`RigidBody3D`), or, with `node_j`, a node of another `AncfBeam3D`. Node $k$ has the
position $r_k$ and the gradient matrix $F_k = [r_{k,x}\ r_{k,y}\ r_{k,z}]$, which maps
material directions of the section frame to the world (seed eq. 7).

A single `AncfBeam3D` already holds a whole meshed beam (adjacent elements share their
12 nodal coordinates), so meshing needs no joint; `AncfRigidConnection3D` joins separate
beams (a frame corner, a beam continued by another with other properties).

**Assembly.** Joints do not see coordinates when they are built, so they cannot check
that the connected points coincide. Check `System.constraints(q0, t0)` (it is zero at a
consistent assembly) or call `System.consistent_state`, which projects `q0` and raises
`InconsistentInitialConditions` when the joints cannot be closed.
"""

from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import check_shape
from ..bodies.ancf3d import AncfBeam3D
from .base import AbstractJoint, check_bodies


def _check_node(owner, name, node):
    if isinstance(node, bool) or not isinstance(node, int):
        raise ValueError(f"{owner}: `{name}` must be a static int node index, got {node!r}.")


def _beam(owner, body, which):
    if not isinstance(body, AncfBeam3D):
        raise ValueError(f"{owner}: body {which} must be an AncfBeam3D, got {type(body).__name__}.")
    return body


def _init_other_side(joint, owner, body_i, node, body_j, point_j, node_j):
    """Shared fields and checks: the beam node on side i and the attachment on side j."""
    check_bodies(owner, body_i, body_j)
    _check_node(owner, "node", node)
    if node_j is not None:
        _check_node(owner, "node_j", node_j)
        if body_j is None:
            raise ValueError(f"{owner}: `node_j` needs a beam `body_j`; ground has no nodes.")
        if point_j is not None:
            raise ValueError(f"{owner}: give either `node_j` (a beam node) or `point_j` (a body point), not both.")
    joint.body_i, joint.node, joint.body_j, joint.node_j = body_i, node, body_j, node_j
    joint.point_j = jnp.zeros(3) if point_j is None else jnp.asarray(point_j, float)
    if body_j is None or node_j is not None:
        check_shape(owner, "point_j", joint.point_j, (3,))


def _other_side(owner, joint, bj, qj):
    """World position and direction map (3x3) of side j: a beam node ($r$, $F$), a body
    point (position, axes) or ground (the point, the identity)."""
    if joint.node_j is not None:
        beam = _beam(owner, bj, "j")
        return beam.node_position(qj, joint.node_j), beam.node_gradients(qj, joint.node_j)
    if bj is None:
        return joint.point_j, jnp.eye(3, dtype=joint.point_j.dtype)
    return bj.position(qj, joint.point_j), bj.axes(qj)


def _normals(a):
    """Two unit vectors normal to the unit vector `a`, built without branching."""
    helper = jnp.where(jnp.abs(a[0]) < 0.9, jnp.array([1.0, 0.0, 0.0]), jnp.array([0.0, 1.0, 0.0]))
    b = jnp.cross(a, helper)
    b = b / jnp.linalg.norm(b)
    return b, jnp.cross(a, b)


def _rotation(owner, rotation):
    R = jnp.eye(3) if rotation is None else jnp.asarray(rotation, float)
    check_shape(owner, "rotation", R, (3, 3))
    return R


class AncfSpherical3D(AbstractJoint):
    r"""Spherical joint (3D pin): node `node` of beam `body_i` coincides with a point,
    $r_k - r_j = 0$ (3 rows); the multipliers are the joint force (N).

    **Arguments:** `body_i` (index of an `AncfBeam3D`), `node`, `body_j` (index or `None`
    for ground), `point_j` (body-frame point of `body_j`, or a world point on ground;
    default the origin) or `node_j` (a node of the beam `body_j`).
    """

    body_i: int = eqx.field(static=True)
    node: int = eqx.field(static=True)
    body_j: int | None = eqx.field(static=True)
    node_j: int | None = eqx.field(static=True)
    point_j: Float[Array, " p"]
    nconstraints: ClassVar[int] = 3
    dim: ClassVar[int] = 3

    def __init__(self, body_i, node, body_j=None, point_j=None, node_j=None):
        _init_other_side(self, "AncfSpherical3D", body_i, node, body_j, point_j, node_j)

    @property
    def attached_nodes(self) -> tuple[int | None, int | None]:
        """The rows read node `node` of beam i and, on side j, node `node_j` of a beam
        (`None`: a body point through `position`/`axes`, or ground)."""
        return (self.node, self.node_j)

    def constraint(self, bi, qi, bj, qj, t):
        ri = _beam("AncfSpherical3D", bi, "i").node_position(qi, self.node)
        return ri - _other_side("AncfSpherical3D", self, bj, qj)[0]


class AncfRevolute3D(AbstractJoint):
    r"""Revolute joint (hinge) at node `node`: the node coincides with a point and the
    hinge axis stays aligned (5 rows, as `RevoluteJoint3D`):
    $r_k - r_j = 0$, $(A_j a_j)\cdot(F_k b) = (A_j a_j)\cdot(F_k c) = 0$,
    with `axis` $a$ a unit material direction of the node's section frame, $b, c \perp a$,
    and $A_j a_j$ the axis on side j ($A_j$: the body axes, the identity on ground, or
    $F$ of node `node_j`).

    **Arguments:** `body_i`, `node`, `axis` (3-vector in the beam's material frame,
    e.g. `(0, 0, 1)` for bending about the section's z axis), `body_j`, `point_j` or
    `node_j` (as `AncfSpherical3D`), `axis_j` (3-vector in the frame of side j;
    default `axis`).
    """

    body_i: int = eqx.field(static=True)
    node: int = eqx.field(static=True)
    body_j: int | None = eqx.field(static=True)
    node_j: int | None = eqx.field(static=True)
    point_j: Float[Array, " p"]
    axis: Float[Array, " 3"]
    axis_j: Float[Array, " 3"]
    nconstraints: ClassVar[int] = 5
    dim: ClassVar[int] = 3

    def __init__(self, body_i, node, axis, body_j=None, point_j=None, axis_j=None, node_j=None):
        _init_other_side(self, "AncfRevolute3D", body_i, node, body_j, point_j, node_j)
        for name, a in (("axis", axis), ("axis_j", axis if axis_j is None else axis_j)):
            a = jnp.asarray(a, float)
            check_shape("AncfRevolute3D", name, a, (3,))
            setattr(self, name, a / jnp.linalg.norm(a))

    @property
    def attached_nodes(self) -> tuple[int | None, int | None]:
        """The rows read node `node` of beam i and, on side j, node `node_j` of a beam
        (`None`: a body point through `position`/`axes`, or ground)."""
        return (self.node, self.node_j)

    def constraint(self, bi, qi, bj, qj, t):
        beam = _beam("AncfRevolute3D", bi, "i")
        rj, Aj = _other_side("AncfRevolute3D", self, bj, qj)
        Fi = beam.node_gradients(qi, self.node)
        b, c = _normals(self.axis)
        aj = Aj @ self.axis_j
        return jnp.concatenate([beam.node_position(qi, self.node) - rj, jnp.stack([aj @ (Fi @ b), aj @ (Fi @ c)])])


class AncfClamp3D(AbstractJoint):
    r"""Clamps node `node` of a beam to ground or to a body (9 rows, 12 with `full`):
    $r_k - r_j(p_j) = 0$, $r_{k,y} - A_j R_0 e_y = 0$, $r_{k,z} - A_j R_0 e_z = 0$, and
    with `full=True` also $r_{k,x} - A_j R_0 e_x = 0$.

    The whole end section is held, $r(0, y, z) = r_k + y\,r_{k,y} + z\,r_{k,z}$, as by a
    rigid wall; by default the axial gradient $r_{k,x}$ stays free, so axial stretch and
    shear at the wall follow from the continuum. `full=True` holds all 12 nodal
    coordinates (every gradient at its reference value: no strain at the wall node, the
    usual fixed support of a beam model); the axial strain is then forced to zero at the
    wall, so an axial load sees an $O(l)$ local stiffening (quantified in docs/ancf3d.md).
    `rotation` $R_0$ has the beam's section axes (x, y, z) as columns
    in the frame of `body_j` (the world on ground); default the identity. On a body with
    natural coordinates (`RigidBody3D`) the rows are linear in $q$.

    **Arguments:** `body_i`, `node`, `body_j` (`None`: ground), `point_j` (m),
    `rotation` (3x3, a leaf), `full` (static bool, default `False`).
    """

    body_i: int = eqx.field(static=True)
    node: int = eqx.field(static=True)
    body_j: int | None = eqx.field(static=True)
    node_j: None = eqx.field(static=True)
    point_j: Float[Array, " p"]
    rotation: Float[Array, "3 3"]
    full: bool = eqx.field(static=True)
    nconstraints: int = eqx.field(static=True)
    dim: ClassVar[int] = 3

    def __init__(self, body_i, node, body_j=None, point_j=None, rotation=None, full=False):
        _init_other_side(self, "AncfClamp3D", body_i, node, body_j, point_j, None)
        self.rotation = _rotation("AncfClamp3D", rotation)
        if not isinstance(full, bool):
            raise ValueError(f"AncfClamp3D: `full` must be a bool, got {full!r}.")
        self.full, self.nconstraints = full, 12 if full else 9

    @property
    def attached_nodes(self) -> tuple[int | None, int | None]:
        """The rows read node `node` of beam i and, on side j, node `node_j` of a beam
        (`None`: a body point through `position`/`axes`, or ground)."""
        return (self.node, self.node_j)

    def constraint(self, bi, qi, bj, qj, t):
        beam = _beam("AncfClamp3D", bi, "i")
        rj, Aj = _other_side("AncfClamp3D", self, bj, qj)
        Fi = beam.node_gradients(qi, self.node)
        first = 0 if self.full else 1  # the held gradient columns
        held = Aj @ self.rotation[:, first:]
        return jnp.concatenate([beam.node_position(qi, self.node) - rj, (Fi[:, first:] - held).T.reshape(-1)])


class AncfRigidConnection3D(AbstractJoint):
    r"""Rigid connection of node `node` of beam `body_i` to node `node_j` of beam
    `body_j` (12 rows, linear in $q$): $r_k - r_{k'} = 0$ and $F_k - F_{k'} R_0 = 0$.

    $R_0$ = `rotation` maps the material axes of beam i into those of beam j (columns:
    beam i's x, y, z axes in beam j's section frame); the identity continues beam j
    straight. All 12 nodal coordinates are tied, as between the elements of one beam.
    """

    body_i: int = eqx.field(static=True)
    node: int = eqx.field(static=True)
    body_j: int = eqx.field(static=True)
    node_j: int = eqx.field(static=True)
    point_j: Float[Array, " p"]
    rotation: Float[Array, "3 3"]
    nconstraints: ClassVar[int] = 12
    dim: ClassVar[int] = 3

    def __init__(self, body_i, node, body_j, node_j, rotation=None):
        if body_j is None or node_j is None:
            raise ValueError("AncfRigidConnection3D: joins two beam nodes; use AncfClamp3D for ground or a rigid body.")
        _init_other_side(self, "AncfRigidConnection3D", body_i, node, body_j, None, node_j)
        self.rotation = _rotation("AncfRigidConnection3D", rotation)

    @property
    def attached_nodes(self) -> tuple[int | None, int | None]:
        """The rows read node `node` of beam i and, on side j, node `node_j` of a beam
        (`None`: a body point through `position`/`axes`, or ground)."""
        return (self.node, self.node_j)

    def constraint(self, bi, qi, bj, qj, t):
        beam = _beam("AncfRigidConnection3D", bi, "i")
        rj, Fj = _other_side("AncfRigidConnection3D", self, bj, qj)
        Fi = beam.node_gradients(qi, self.node)
        return jnp.concatenate([beam.node_position(qi, self.node) - rj, (Fi - Fj @ self.rotation).T.reshape(-1)])
