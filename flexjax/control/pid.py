r"""PID joint control (seed 002 §2, eq. 21-24) as a stateful force element.

A joint angle $\theta$ is measured between two bodies: the slope angle at a node of
an `AncfBeam2D` or the orientation of a rigid body's axes, relative to a second body
(or the world). With the error $e = \theta_{ref}(t) - \theta$ the torque is

$$\tau = K_p e + K_i \int e\,dt + K_d \dot e,$$

and it does the virtual work $\tau\,\delta\theta$ (eq. 21-23), i.e. the generalized
force $Q = \tau\,\partial\theta/\partial q$ on both bodies (equal and opposite).
The integral is the element's discrete state, advanced once per solver step with the
rectangle rule $I_{n+1} = I_n + h\,e(q_n, t_n)$, as a digital controller sampled at the
step does.
"""

from collections.abc import Callable
from typing import ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._checks import check_shape
from ..forces.ancf import _angle
from ..forces.base import AbstractStatefulForce


class PIDJointTorque(AbstractStatefulForce):
    r"""PID torque on the joint angle between `body` and `reaction_body`.

    **Arguments:**

    - `body`, `node`: the driven body and, on an `AncfBeam2D`, the node whose slope
      angle is the joint angle (`node=None` for a rigid body's axes).
    - `reference`: $\theta_{ref}(t)$ (rad), any callable or `eqx.Module` (its leaves
      are differentiable); $\dot\theta_{ref}$ comes from forward-mode autodiff.
    - `kp` (N m/rad), `ki` (N m/(rad s)), `kd` (N m s/rad): gains, leaves.
    - `reaction_body`, `reaction_node`: the body the motor sits on (`None`: the world);
      the angle is then relative, wrapped to $(-\pi, \pi]$.
    - `integral`: initial value of $\int e\,dt$ (rad s), the state.
    """

    body: int = eqx.field(static=True)
    node: int | None = eqx.field(static=True)
    reference: Callable
    kp: Float[Array, ""]
    ki: Float[Array, ""]
    kd: Float[Array, ""]
    reaction_body: int | None = eqx.field(static=True)
    reaction_node: int | None = eqx.field(static=True)
    state: Float[Array, ""]
    bodies: tuple[int, ...] = eqx.field(static=True)
    dim: ClassVar[int] = 2

    def __init__(self, body, node, reference, kp, ki, kd, reaction_body=None, reaction_node=None, integral=0.0):
        if not callable(reference):
            raise ValueError("PIDJointTorque: `reference` must be a callable angle(t).")
        if reaction_body == body:
            raise ValueError(f"PIDJointTorque: the reaction body must differ from the body, got {body} twice.")
        if reaction_body is None and reaction_node is not None:
            raise ValueError("PIDJointTorque: `reaction_node` needs a `reaction_body`.")
        self.body, self.node, self.reference = body, node, reference
        self.reaction_body, self.reaction_node = reaction_body, reaction_node
        for name, value in (("kp", kp), ("ki", ki), ("kd", kd), ("state", integral)):
            x = jnp.asarray(value, float)
            check_shape("PIDJointTorque", name if name != "state" else "integral", x, ())
            setattr(self, name, x)
        self.bodies = (body,) if reaction_body is None else (body, reaction_body)

    def angle(self, bodies, qs):
        r"""Joint angle $\theta$ (rad): absolute, or relative to the reaction body."""
        theta = _angle(bodies[0], qs[0], self.node)
        if self.reaction_body is None:
            return theta
        d = theta - _angle(bodies[1], qs[1], self.reaction_node)
        return jnp.arctan2(jnp.sin(d), jnp.cos(d))

    def error(self, bodies, qs, vs, t):
        r"""$(e, \dot e)$ with $e = \theta_{ref}(t) - \theta$."""
        theta, theta_dot = jax.jvp(lambda *q: self.angle(bodies, q), tuple(qs), tuple(vs))
        ref, ref_dot = jax.jvp(self.reference, (jnp.asarray(t, float),), (jnp.ones(()),))
        return ref - theta, ref_dot - theta_dot

    def torque(self, bodies, qs, vs, t):
        """Motor torque $\\tau$ (N m) at state $(q, \\dot q, t)$."""
        e, e_dot = self.error(bodies, qs, vs, t)
        return self.kp * e + self.ki * self.state + self.kd * e_dot

    def force(self, bodies, qs, vs, t):
        tau = self.torque(bodies, qs, vs, t)
        grads = jax.grad(lambda *q: self.angle(bodies, q), argnums=tuple(range(len(qs))))(*qs)
        return tuple(tau * g for g in grads)

    def potential_energy(self, bodies, qs, t):
        return jnp.zeros(())

    def advance_state(self, bodies, qs, vs, t, h):
        e, _ = self.error(bodies, qs, vs, t)
        return self.state + h * e
