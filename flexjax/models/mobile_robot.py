r"""Differential-drive mobile robot with rolling-without-slipping (seed 003, §4).

Reading of the seed: the robot is a planar rigid body (mass $m$, inertia $I$ about the
axle midpoint, which is taken as the centre of mass) with coordinates
$q = (x, y, \theta)$ of the axle midpoint and heading. The wheels cannot slip sideways:
$\psi = -\dot x \sin\theta + \dot y \cos\theta = 0$ (nonholonomic). The robot is
"driven along" the ellipse $x = 3\sin t$, $y = -4\cos t$ through program constraints on
a point $P$ a distance $d$ ahead of the axle, $r_P(q) - g(t) = 0$ — the seed's error
definitions ($x - 3\sin t$, $y + 4\cos t$) are errors of the driven point. Driving the
axle midpoint itself would leave the heading acceleration unconstrained and the
acceleration-level equations inconsistent; the look-ahead point (the usual
differential-drive output, $d > 0$) makes $A$ square and regular:
$\det A = d$. The Udwadia-Kalaba equation then gives the wheel forces that realise the
motion; no actuator model is needed.
"""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from ..bodies import RigidBody2D
from ..joints import DrivingConstraint, NoSlipConstraint
from ..system import System


class EllipsePath(eqx.Module):
    r"""$g(t) = (a_x \sin\omega t,\ -a_y \cos\omega t)$ (m); parameters are leaves."""

    ax: Float[Array, ""] = eqx.field(converter=jnp.asarray, default=3.0)
    ay: Float[Array, ""] = eqx.field(converter=jnp.asarray, default=4.0)
    omega: Float[Array, ""] = eqx.field(converter=jnp.asarray, default=1.0)

    def __call__(self, t):
        return jnp.stack([self.ax * jnp.sin(self.omega * t), -self.ay * jnp.cos(self.omega * t)])


class LookAheadPoint(eqx.Module):
    """World position of the body point `(d, 0)` of a `RigidBody2D` (x, y, theta)."""

    d: Float[Array, ""] = eqx.field(converter=jnp.asarray)

    def __call__(self, q):
        return q[0:2] + self.d * jnp.stack([jnp.cos(q[2]), jnp.sin(q[2])])


def mobile_robot(mass=10.0, inertia=0.5, lookahead=0.2, path=None) -> System:
    """Robot body 0 (`RigidBody2D`), no-slip wheel axle, driven look-ahead point.

    **Arguments:** `mass` (kg), `inertia` (kg m²), `lookahead` d (m, > 0), `path`
    (callable g(t) -> 2-vector, default `EllipsePath()`).

    Constraint rows: `constraints` = the two program rows of the driven point;
    `nonholonomic` = the lateral no-slip row.
    """
    path = EllipsePath() if path is None else path
    body = RigidBody2D(mass, inertia)
    drive = DrivingConstraint(0, LookAheadPoint(lookahead), path, nconstraints=2)
    no_slip = NoSlipConstraint(0, [0.0, 0.0], [0.0, 1.0])
    return System([body], [drive], [], [no_slip])


def mobile_robot_state(lookahead=0.2, path=None):
    """Consistent state at t = 0 for the default ellipse: driven point at (0, -a_y)
    moving along +x at speed a_x*omega, heading 0, no rotation."""
    path = EllipsePath() if path is None else path
    q0 = jnp.stack([-lookahead * jnp.ones(()), -path.ay, jnp.zeros(())])
    v0 = jnp.stack([path.ax * path.omega, jnp.zeros(()), jnp.zeros(())])
    return q0, v0


def path_error(q, t, lookahead=0.2, path=None):
    """Driven-point error `(x_P - 3 sin t, y_P + 4 cos t)` along a trajectory (m)."""
    path = EllipsePath() if path is None else path
    p = q[:, 0:2] + lookahead * jnp.stack([jnp.cos(q[:, 2]), jnp.sin(q[:, 2])], axis=1)
    return p - jnp.transpose(path(t))
