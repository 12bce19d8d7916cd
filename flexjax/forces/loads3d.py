r"""Spatial loads: a point moment on any 3D body and a distributed load on a 3D beam.

**Moment.** A moment $M$ (N m) does the virtual work $\delta W = M\cdot\delta\varphi$ with
$\delta\varphi$ the virtual rotation of the frame it acts on. For a frame $F$ (columns
$f_i$) that is a rotation $R$, $\delta R = [\delta\varphi]_\times R$ and
$\delta\varphi = \tfrac12\sum_i f_i \times \delta f_i$. On a deformable frame (the
gradients $F_k = [r_{k,x}\ r_{k,y}\ r_{k,z}]$ of an ANCF node) the same formula with the
dual vectors $g^i$ (the columns of $F^{-T}$),
$\delta\varphi = \tfrac12\sum_i g^i\times\delta f_i = \operatorname{axial}(\delta F\,F^{-1})$,
is the rotation part of the virtual displacement gradient (the spin of the material
at the node). It equals the rigid-body formula when the node is unstrained. The generalized
force is $Q = (\partial\varphi/\partial q)^T M$, obtained with `jax.vjp` through
$F(q)$: per column $\partial W/\partial f_i = \tfrac12 M\times g^i$.

A moment fixed in space is not conservative for finite 3D rotations (it has no
potential; Argyris 1982), so `potential_energy` is 0. A follower moment is given in
the body's frame and turns with it: $M = R(q) M_b$, $R$ the body's orthonormal axes
(for an ANCF node the Gram-Schmidt frame `node_axes`: $r_{,x}$ first).

**Distributed load.** A constant load $w$ per unit length of the undeformed beam,
fixed in space, has the potential $V = -w\cdot\int_0^L r\,ds = -L\,w\cdot r_c(q)$, $r_c$
the beam's centroid (linear in $q$, exact for the symmetric sections).
"""

from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import check_finite, check_shape
from ..bodies.ancf3d import AncfBeam3D
from .base import AbstractForce


def _check_index(owner, name, value, optional=False):
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{owner}: `{name}` must be a static int, got {value!r}.")


class AppliedMoment3D(AbstractForce):
    r"""Point moment `moment(t)` (N m, a 3-vector) on a 3D body: on node `node` of an
    `AncfBeam3D`, or on the axes of any other 3D body (`node=None`: a `RigidBody3D`,
    whose `axes` are its unit vectors). See the module docstring for the virtual work.

    **Arguments:**

    - `body`: index of the body (static int).
    - `moment`: callable `moment(t)` returning the moment (N m); an `eqx.Module` whose
      parameters are leaves makes them differentiable.
    - `node`: node of an `AncfBeam3D` (static int, negative from the tip); `None` for
      a rigid body.
    - `follower`: `False` (default): `moment(t)` is in world axes, fixed in space;
      `True`: in the body's (node's) axes, turning with them (static).
    """

    body: int = eqx.field(static=True)
    moment: Callable
    node: int | None = eqx.field(static=True)
    follower: bool = eqx.field(static=True)
    bodies: tuple[int, ...] = eqx.field(static=True)
    dim: ClassVar[int] = 3
    separable: ClassVar[bool] = True  # each body's force from that body alone

    def __init__(self, body, moment, node=None, follower=False):
        _check_index("AppliedMoment3D", "body", body)
        _check_index("AppliedMoment3D", "node", node, optional=True)
        if not callable(moment):
            raise ValueError("AppliedMoment3D: `moment` must be a callable moment(t) returning a 3-vector.")
        if not isinstance(follower, bool):
            raise ValueError(f"AppliedMoment3D: `follower` must be a bool, got {follower!r}.")
        self.body, self.moment, self.node, self.follower = body, moment, node, follower
        self.bodies = (body,)

    def _frames(self, body, q):
        """The frame the moment acts through ($F$) and the orthonormal axes (follower)."""
        if isinstance(body, AncfBeam3D):
            if self.node is None:
                raise ValueError("AppliedMoment3D: on an AncfBeam3D give the `node` that carries the moment.")
            return body.node_gradients(q, self.node), body.node_axes(q, self.node)
        if self.node is not None:
            raise ValueError(f"AppliedMoment3D: `node` applies to an AncfBeam3D only; body is {type(body).__name__}.")
        axes = body.axes(q)
        return axes, axes

    def force(self, bodies, qs, vs, t):
        body, q = bodies[0], qs[0]
        F, F_vjp = jax.vjp(lambda qq: self._frames(body, qq)[0], q)
        M = jnp.asarray(self.moment(t), q.dtype)
        if self.follower:
            M = self._frames(body, q)[1] @ M
        dual = jnp.linalg.inv(F).T  # columns g^i: g^i . f_j = delta_ij
        return F_vjp(0.5 * jnp.cross(M[None, :], dual.T).T)

    def potential_energy(self, bodies, qs, t):
        return jnp.zeros(())


class DistributedLoad3D(AbstractForce):
    r"""Constant load `load` $w$ (N per metre of undeformed length, world frame, fixed
    in space) along the whole of the `AncfBeam3D` `body`; conservative,
    $V = -L\,w\cdot r_c(q)$. A load $\rho A g$ reproduces `Gravity` on that beam.

    **Arguments:** `body` (index of an `AncfBeam3D`), `load` (3-vector, N/m, a leaf).
    """

    body: int = eqx.field(static=True)
    load: Float[Array, " 3"]
    bodies: tuple[int, ...] = eqx.field(static=True)
    dim: ClassVar[int] = 3
    separable: ClassVar[bool] = True  # each body's force from that body alone

    def __init__(self, body, load):
        _check_index("DistributedLoad3D", "body", body)
        self.body, self.bodies = body, (body,)
        self.load = jnp.asarray(load, float)
        check_shape("DistributedLoad3D", "load", self.load, (3,))
        check_finite("DistributedLoad3D", "load", self.load)

    def _potential(self, beam, q):
        if not isinstance(beam, AncfBeam3D):
            raise ValueError(f"DistributedLoad3D: acts on an AncfBeam3D, got {type(beam).__name__}.")
        return -beam.length * (self.load @ beam.center_of_mass(q))

    def force(self, bodies, qs, vs, t):
        return (-jax.grad(lambda q: self._potential(bodies[0], q))(qs[0]),)

    def potential_energy(self, bodies, qs, t):
        return self._potential(bodies[0], qs[0])
