r"""Classic rigid multibody benchmarks built from NCF bodies: pendulum, double
pendulum, slider-crank. Each builder returns a `System`; `*_state` functions return a
consistent initial state `(q0, v0)`.
"""

import jax.numpy as jnp

from .._structural import structural_jit
from ..bodies import RigidBar2D, RigidBody2D
from ..control.references import ConstantRate
from ..forces import Gravity
from ..joints import AngleDriver, DrivingConstraint, RevoluteJoint
from ..system import System


def pendulum(mass=1.0, length=1.0, g=9.81) -> System:
    r"""Uniform bar of `mass` and `length` pinned at its end $r_i$ to the origin.

    Small-amplitude period $T = 2\pi\sqrt{I_O/(m g l/2)} = 2\pi\sqrt{2l/(3g)}$.
    """
    bar = RigidBar2D(mass, length)
    return System([bar], [RevoluteJoint(0, [0.0, 0.0], None, [0.0, 0.0])], [Gravity((0.0, -g))])


@structural_jit  # one small program instead of one per array operation
def pendulum_state(theta0, length=1.0):
    """Pendulum at rest at angle `theta0` (rad) from the downward vertical."""
    q0 = jnp.array([0.0, 0.0, length * jnp.sin(theta0), -length * jnp.cos(theta0)])
    return q0, jnp.zeros(4)


def pendulum_period(mass=1.0, length=1.0, g=9.81):
    """Small-amplitude period of `pendulum` (s)."""
    return 2 * jnp.pi * jnp.sqrt(2 * length / (3 * g))


def double_pendulum(masses=(1.0, 1.0), lengths=(1.0, 1.0), g=9.81) -> System:
    """Two uniform bars in a chain, the first pinned to the origin."""
    b1, b2 = RigidBar2D(masses[0], lengths[0]), RigidBar2D(masses[1], lengths[1])
    joints = [
        RevoluteJoint(0, [0.0, 0.0], None, [0.0, 0.0]),
        RevoluteJoint(0, [lengths[0], 0.0], 1, [0.0, 0.0]),
    ]
    return System([b1, b2], joints, [Gravity((0.0, -g))])


@structural_jit  # one small program instead of one per array operation
def double_pendulum_state(theta1, theta2, lengths=(1.0, 1.0)):
    """Double pendulum at rest, bar angles from the downward vertical (rad)."""
    p1 = lengths[0] * jnp.array([jnp.sin(theta1), -jnp.cos(theta1)])
    p2 = p1 + lengths[1] * jnp.array([jnp.sin(theta2), -jnp.cos(theta2)])
    return jnp.concatenate([jnp.zeros(2), p1, p1, p2]), jnp.zeros(8)


def _zero2(t):
    return jnp.zeros(2)


def _slider_y_phi(q):
    return q[1:3]


def slider_crank(crank=0.2, rod=0.6, omega=2 * jnp.pi, masses=(1.0, 2.0, 0.5), g=9.81) -> System:
    r"""Slider-crank: crank pinned at the origin and driven at constant speed `omega`
    (rad/s) from angle 0, connecting rod, slider (centroidal body) on the x-axis.

    Bodies: 0 crank (`RigidBar2D`), 1 rod (`RigidBar2D`), 2 slider (`RigidBody2D`).
    Closed-form slider position: `slider_position_exact`.
    """
    bodies = [RigidBar2D(masses[0], crank), RigidBar2D(masses[1], rod), RigidBody2D(masses[2], 1e-3)]
    joints = [
        RevoluteJoint(0, [0.0, 0.0], None, [0.0, 0.0]),
        RevoluteJoint(0, [crank, 0.0], 1, [0.0, 0.0]),
        RevoluteJoint(1, [rod, 0.0], 2, [0.0, 0.0]),
        DrivingConstraint(2, _slider_y_phi, _zero2, nconstraints=2),  # prismatic guide along x
        AngleDriver(0, None, ConstantRate(0.0, omega)),
    ]
    return System(bodies, joints, [Gravity((0.0, -g))])


def slider_position_exact(theta, crank=0.2, rod=0.6):
    r"""$x_s = r\cos\theta + \sqrt{l^2 - r^2\sin^2\theta}$."""
    return crank * jnp.cos(theta) + jnp.sqrt(rod**2 - (crank * jnp.sin(theta)) ** 2)


@structural_jit  # one small program instead of one per array operation
def slider_crank_state(crank=0.2, rod=0.6, omega=2 * jnp.pi):
    """Consistent state at t = 0 (crank angle 0, speed `omega`)."""
    xs = crank + rod
    q0 = jnp.array([0.0, 0.0, crank, 0.0, crank, 0.0, xs, 0.0, xs, 0.0, 0.0])
    # at theta = 0 the crank tip moves straight up at r*omega; the slider is momentarily at rest
    vt = crank * omega
    v0 = jnp.array([0.0, 0.0, 0.0, vt, 0.0, vt, 0.0, 0.0, 0.0, 0.0, 0.0])
    return q0, v0
