r"""Output helpers: small modules `fn(t, q, v) -> pytree` for the `outputs=` argument of
`simulate` / `simulate_ode`, and `joint_reaction` for the constraint reactions of a
finished run.

Each helper copies what it needs from the system at construction (the body module and
its slice of `q`), holds no closures, and so compares equal (`eqx.tree_equal`) and
hashes equal to a helper built the same way: rebuilding one does not recompile a
simulation. Build it from the same system you simulate; inside a differentiated
function, build it there too, so that the body's parameters are the traced ones.
They also work on saved states: `jax.vmap(helper)(traj.t, traj.q, traj.v)`.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from ._checks import check_attachment_point, check_finite, check_shape
from .bodies.ancf2d import AncfBeam2D
from .bodies.ancf3d import AncfBeam3D
from .bodies.base import AbstractBody
from .bodies.modal_beam import ModalHubBeam
from .system import System
from .trajectory import Trajectory


def _body_of(owner: str, system, body) -> tuple[AbstractBody, int, int]:
    if not isinstance(system, System):
        raise ValueError(f"{owner}: `system` must be a System, got {type(system).__name__}.")
    nb = len(system.bodies)
    if isinstance(body, bool) or not isinstance(body, int) or not 0 <= body < nb:
        raise ValueError(f"{owner}: `body` must be a body index in 0..{nb - 1}, got {body!r}.")
    sl = system.body_slice(body)
    return system.bodies[body], sl.start, sl.stop


class BodyPoint(eqx.Module):
    r"""World position and velocity of a material point of one body.

    `BodyPoint(system, body, point)(t, q, v)` returns
    `{"position": r, "velocity": dr/dt}` with $r = r_b(q_b, p)$ the body's `position`
    and $\dot r = (\partial r / \partial q_b)\,\dot q_b$ (a forward-mode product).

    **Arguments:**

    - `system`: the `System` the states belong to.
    - `body`: body index.
    - `point`: body-frame point, in the body's own point convention (`RigidBar2D`:
      `(x, y)` in m; `AncfBeam2D`: `(s,)`, the arc length; `AncfBeam3D`: `(s, y, z)`;
      `ModalHubBeam`: `(x,)`; `PointMass`: ignored, pass `(0, 0)`).
    """

    body_module: AbstractBody
    point: Float[Array, " p"]
    start: int = eqx.field(static=True)
    stop: int = eqx.field(static=True)

    def __init__(self, system: System, body: int, point):
        self.body_module, self.start, self.stop = _body_of("BodyPoint", system, body)
        self.point = check_attachment_point("BodyPoint", "point", point)
        size = self.body_module.point_size
        if size is not None:
            check_shape("BodyPoint", "point", self.point, (size,))

    def __call__(self, t, q: Float[Array, " nq"], v: Float[Array, " nq"]) -> dict:
        q_b, v_b = q[self.start : self.stop], v[self.start : self.stop]
        r, r_dot = jax.jvp(lambda x: self.body_module.position(x, self.point), (q_b,), (v_b,))
        return {"position": r, "velocity": r_dot}


class BeamDeflection(eqx.Module):
    r"""Transverse deflection of a beam at arc coordinate `s`, in the beam's root frame.

    With $r(s)$ the centerline and $A = [a_1, a_2(, a_3)]$ the body axes at the root
    (the first node's frame of an ANCF beam, the hub frame of a `ModalHubBeam`), the
    deflection is $w = [a_2, a_3]^T (r(s) - r(0))$: a scalar for planar beams, two
    components for `AncfBeam3D`. Rigid-body motion drops out; for a cantilever or the
    FLFJ arm it is the tip deflection of the papers when `s` is the length.

    `BeamDeflection(system, body, s)(t, q, v)` returns $w$ (m).

    **Arguments:** `system`; `body` (index of an `AncfBeam2D`, `AncfBeam3D` or
    `ModalHubBeam`); `s` arc coordinate of the undeformed beam (m, a leaf).
    """

    body_module: AbstractBody
    s: Float[Array, ""]
    start: int = eqx.field(static=True)
    stop: int = eqx.field(static=True)

    def __init__(self, system: System, body: int, s):
        self.body_module, self.start, self.stop = _body_of("BeamDeflection", system, body)
        if not isinstance(self.body_module, (AncfBeam2D, AncfBeam3D, ModalHubBeam)):
            raise ValueError(
                f"BeamDeflection: `body` {body} is a {type(self.body_module).__name__}; "
                "expected an AncfBeam2D, AncfBeam3D or ModalHubBeam."
            )
        self.s = jnp.asarray(s, float)
        check_shape("BeamDeflection", "s", self.s, ())
        check_finite("BeamDeflection", "s", self.s)

    def _point(self, s):
        s = jnp.asarray(s, float)
        if self.body_module.dim == 3:
            return jnp.stack([s, jnp.zeros_like(s), jnp.zeros_like(s)])
        return s[None]

    def __call__(self, t, q: Float[Array, " nq"], v: Float[Array, " nq"]) -> Float[Array, "..."]:
        q_b = q[self.start : self.stop]
        b = self.body_module
        d = b.position(q_b, self._point(self.s)) - b.position(q_b, self._point(0.0))
        w = b.axes(q_b).T @ d
        return w[1] if b.dim == 2 else w[1:]


class Outputs(eqx.Module):
    """Several output functions as one: `Outputs(tip=BodyPoint(...), w=BeamDeflection(...))`
    returns `{"tip": ..., "w": ...}` from `(t, q, v)`; pass it as `outputs=`. Like the
    helpers it holds, two built the same way are equal pytrees.

    **Arguments:** keyword arguments, each a callable `fn(t, q, v) -> pytree` (the
    helpers of this module, or any `eqx.Module` with that call).
    """

    fns: dict

    def __init__(self, **fns):
        for name, fn in fns.items():
            if not callable(fn):
                raise ValueError(f"Outputs: `{name}` must be callable fn(t, q, v), got {type(fn).__name__}.")
        if not fns:
            raise ValueError("Outputs: give at least one named output function.")
        self.fns = dict(fns)

    def __call__(self, t, q, v) -> dict:
        return {name: fn(t, q, v) for name, fn in self.fns.items()}


class JointReaction(eqx.Module):
    r"""Reaction of one joint over a trajectory (`joint_reaction`).

    - `multipliers`: the joint's Lagrange multipliers $\lambda_j$, shape `(ns, m_j)`.
    - `generalized_force`: $-\Phi_{q,j}^T\lambda_j$, the generalized force the joint
      exerts on the system (same sign convention as $Q$), shape `(ns, nq)`; on a body
      whose coordinates include the joint point (natural coordinates, ANCF node
      positions) its entries there are the reaction force in N.
    """

    multipliers: Float[Array, "ns m"]
    generalized_force: Float[Array, "ns nq"]


def joint_rows(system: System, joint_index: int) -> slice:
    """Rows of joint `joint_index` in $\\Phi$ (bodies' internal rows come first)."""
    nj = len(system.joints)
    if isinstance(joint_index, bool) or not isinstance(joint_index, int) or not 0 <= joint_index < nj:
        raise ValueError(f"joint_reaction: `joint_index` must be in 0..{nj - 1}, got {joint_index!r}.")
    start = sum(b.nconstraints for b in system.bodies) + sum(j.nconstraints for j in system.joints[:joint_index])
    return slice(start, start + system.joints[joint_index].nconstraints)


def joint_reaction(system: System, trajectory: Trajectory, joint_index: int) -> JointReaction:
    r"""The reaction of joint `joint_index` at every saved instant of `trajectory`.

    The equations of motion $M\ddot q + \Phi_q^T\lambda = Q$ put the constraint forces
    on the left; the joint's share is $\Phi_{q,j}^T\lambda_j$ over its rows, evaluated at
    the saved $(q, t)$ with the saved `trajectory.lam`. A pendulum hanging at rest gets
    $m g$ upwards at its pin.

    **Arguments:** `system` (the simulated one); `trajectory` (from `simulate` or
    `simulate_ode`, with multipliers); `joint_index` (index into `system.joints`).

    **Returns:** a `JointReaction`. **Raises:** `ValueError` for a bad index or a
    trajectory whose multipliers do not match the system's constraint rows.
    """
    if not isinstance(system, System):
        raise ValueError(f"joint_reaction: `system` must be a System, got {type(system).__name__}.")
    rows = joint_rows(system, joint_index)
    lam = trajectory.lam
    if jnp.ndim(lam) != 2 or jnp.shape(lam)[1] < system.nconstraints:
        raise ValueError(
            f"joint_reaction: `trajectory.lam` has shape {jnp.shape(lam)}; the system has "
            f"{system.nconstraints} constraint rows."
        )
    lam_j = lam[:, rows]

    def one(q, t, l_j):
        Phi_q = system.constraints_q(q, t)[rows]
        return -Phi_q.T @ l_j

    force = jax.vmap(one)(trajectory.q, trajectory.t, lam_j)
    return JointReaction(lam_j, force)
