r"""Two-link flexible arm with a clearance elbow under PID tracking (seed 002 §2-4).

Link 1 ($OA_i$, 0.4 m, 2 elements) is pinned to the ground at O; link 2 ($A_jP_j$,
1.6 m, 4 elements) hangs on it at the elbow A through a revolute joint that is either
ideal (`clearance=None`) or has radial clearance c (`ClearanceJoint`: bearing at the
tip of link 1, journal at the root of link 2). Both links are planar ANCF beams with
A = 2.5e-3 m², I = 5.208e-7 m⁴, ρ = 6000 kg/m³, E = 30 GPa by default (seed §4).

The tip P follows a circle traversed at $\omega(t) = -\tfrac{6\pi}{500}(t^2 - 10t)$
(eq. 26): the polar angle $\varphi(t) = \tfrac{6\pi}{500}(5t^2 - t^3/3)$ goes from 0 to
$2\pi$ in 10 s, starting and ending at rest. The paper does not give the circle;
flexjax uses the centre (1.55, 0) m and radius 0.25 m, so the tip stays 1.30-1.80 m
from O, inside the reachable annulus [1.2, 2.0] m with margin on both sides. The joint
references come from the inverse kinematics of the rigid arm (elbow-down branch):
$\theta_1$ the slope angle of link 1 at O, $\theta_2$ the slope angle of link 2 at its
root relative to link 1's slope at its tip (the paper's $\theta_4 = \theta_2 - \theta_3$,
eq. 21). PID gains (not in the text) are chosen so the ideal arm tracks within a
millimetre; the arm moves in a horizontal plane (space manipulator, no gravity).

Clearance joint defaults (not in the text either): journal radius 10 mm, steel on
steel ($E^* = 113.7$ GPa), restitution 0.9, friction $c_f = 0.1$ (seed §4),
Ambrósio $v_0 = 10^{-4}$, $v_1 = 10^{-3}$ m/s.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from .._structural import structural_jit
from ..bodies import AncfBeam2D
from ..control.pid import PIDJointTorque
from ..forces.clearance import ClearanceJoint
from ..joints import AncfPin, AncfRevolute
from ..solvers import GeneralizedAlpha, simulate
from ..system import System

LINK_LENGTHS = (0.4, 1.6)
N_ELEMENTS = (2, 4)
SECTION = dict(area=2.5e-3, second_moment=5.208e-7, rho=6000.0)
CIRCLE_CENTRE = (1.55, 0.0)
CIRCLE_RADIUS = 0.25
DURATION = 10.0
GAINS = dict(kp=(6000.0, 3000.0), ki=(6000.0, 3000.0), kd=(900.0, 450.0))


def path_angle(t):
    r"""Polar angle of the tip on the circle, $\varphi(t) = \int_0^t \omega$ (eq. 26)."""
    return 6 * jnp.pi / 500 * (5 * t**2 - t**3 / 3)


class TipCirclePath(eqx.Module):
    """Desired tip position on the circle at time t (m); centre and radius are leaves."""

    centre: Float[Array, " 2"] = eqx.field(converter=lambda x: jnp.asarray(x, float), default=CIRCLE_CENTRE)
    radius: Float[Array, ""] = eqx.field(converter=lambda x: jnp.asarray(x, float), default=CIRCLE_RADIUS)

    def __call__(self, t):
        phi = path_angle(t)
        return self.centre + self.radius * jnp.stack([jnp.cos(phi), jnp.sin(phi)])


def inverse_kinematics(tip, lengths=LINK_LENGTHS):
    r"""Joint angles $(\theta_1, \theta_2)$ (rad) of the rigid two-link arm reaching `tip`
    (elbow-down branch, $\theta_2 \ge 0$ is the relative elbow angle)."""
    l1, l2 = lengths
    cos2 = (tip @ tip - l1**2 - l2**2) / (2 * l1 * l2)
    theta2 = jnp.arccos(cos2)
    theta1 = jnp.arctan2(tip[1], tip[0]) - jnp.arctan2(l2 * jnp.sin(theta2), l1 + l2 * jnp.cos(theta2))
    return theta1, theta2


class JointReference(eqx.Module):
    """Reference angle of joint `joint` (0 or 1) from the inverse kinematics of `path`."""

    path: TipCirclePath
    joint: int = eqx.field(static=True)

    def __call__(self, t):
        return inverse_kinematics(self.path(t))[self.joint]


def check_workspace(path: TipCirclePath, lengths=LINK_LENGTHS, samples: int = 721):
    """Raise `ValueError` if the circle leaves the reachable annulus $[|l_1 - l_2|, l_1 + l_2]$."""
    phi = jnp.linspace(0.0, 2 * jnp.pi, samples)
    pts = path.centre[None, :] + path.radius * jnp.stack([jnp.cos(phi), jnp.sin(phi)], axis=1)
    r = jnp.sqrt(jnp.sum(pts**2, axis=1))
    lo, hi = abs(lengths[0] - lengths[1]), lengths[0] + lengths[1]
    if float(r.min()) <= lo or float(r.max()) >= hi:
        raise ValueError(
            f"clearance_arm: the tip circle spans {float(r.min()):.3f}-{float(r.max()):.3f} m from the base; "
            f"the arm reaches only ({lo}, {hi}) m."
        )


def clearance_arm(
    youngs=30e9,
    clearance=None,
    friction=0.1,
    *,
    path: TipCirclePath | None = None,
    gains=GAINS,
    journal_radius=0.01,
    restitution=0.9,
    n_elements=N_ELEMENTS,
    modulus=None,
) -> System:
    """The arm of seed §4 as a `System` (link 1 = body 0, link 2 = body 1).

    **Arguments:** `youngs` E of both links (Pa); `clearance` c (m) of the elbow, `None`
    for the ideal revolute joint; `friction` $c_f$; `path` (default the documented
    circle); `gains` dict of `(joint 1, joint 2)` pairs `kp`, `ki`, `kd`;
    `journal_radius`, `restitution`, `modulus` of the clearance joint; `n_elements`.

    Force elements: `[PID joint 1, PID joint 2]` and, with clearance, the
    `ClearanceJoint` last.
    """
    path = TipCirclePath() if path is None else path
    links = [
        AncfBeam2D(L, youngs=youngs, n_elements=n, **SECTION) for L, n in zip(LINK_LENGTHS, n_elements, strict=True)
    ]
    joints = [AncfPin(0, 0, None, (0.0, 0.0))]
    pid = [
        PIDJointTorque(0, 0, JointReference(path, 0), gains["kp"][0], gains["ki"][0], gains["kd"][0]),
        PIDJointTorque(
            1,
            0,
            JointReference(path, 1),
            gains["kp"][1],
            gains["ki"][1],
            gains["kd"][1],
            reaction_body=0,
            reaction_node=-1,
        ),
    ]
    if clearance is None:
        joints.append(AncfRevolute(0, -1, 1, 0))
        return System(links, joints, pid)
    elbow = ClearanceJoint(
        0,
        (LINK_LENGTHS[0],),
        1,
        (0.0,),
        journal_radius=journal_radius,
        clearance=clearance,
        friction=friction,
        restitution=restitution,
        modulus=modulus,
    )
    return System(links, joints, pid + [elbow])


@structural_jit  # one small program instead of one per array operation
def clearance_arm_state(system: System, path: TipCirclePath | None = None):
    """Initial state: both links straight at the inverse-kinematics angles of the
    path's start, at rest, the journal centred in the bearing."""
    path = TipCirclePath() if path is None else path
    theta1, theta2 = inverse_kinematics(path(jnp.zeros(())))
    l1, l2 = system.bodies
    q1 = l1.straight_coordinates(jnp.zeros(2), theta1)
    q2 = l2.straight_coordinates(l1.node_position(q1, -1), theta1 + theta2)
    q0 = jnp.concatenate([q1, q2])
    return q0, jnp.zeros_like(q0)


def tip_position(system: System, q: Float[Array, " nq"]) -> Float[Array, " 2"]:
    """World position of the tip P (m)."""
    return system.bodies[1].node_position(q[system.body_slice(1)], -1)


def joint_torques(system: System, q, v, t) -> Float[Array, " 2"]:
    """PID torques $(\\tau_1, \\tau_2)$ (N m) at one state."""
    out = []
    for k in (0, 1):
        f, idx = system.force_elements[k], system.force_bodies[k]
        parts = [system._part(x, i) for i in idx for x in (q, v)]
        out.append(f.torque(tuple(system.bodies[i] for i in idx), tuple(parts[0::2]), tuple(parts[1::2]), t))
    return jnp.stack(out)


def responses(system: System, traj, path: TipCirclePath | None = None):
    """Tip error (m, actual - desired), tip acceleration (m/s²) and joint torques (N m)
    along a `Trajectory` of `system`, each with a leading time axis. The torques use the
    PID integrals saved in `traj.force_state`."""
    path = TipCirclePath() if path is None else path
    tip = jax.vmap(lambda x: tip_position(system, x))(traj.q)
    error = tip - jax.vmap(path)(traj.t)
    accel = jax.vmap(lambda x, acc: jax.jvp(lambda y: tip_position(system, y), (x,), (acc,))[1])(traj.q, traj.a)
    torque = jax.vmap(lambda x, vv, tt, z: joint_torques(system.with_flat_force_states(z), x, vv, tt))(
        traj.q, traj.v, traj.t, traj.force_state
    )
    return error, accel, torque


def with_parameters(system: System, clearance=None, youngs=None) -> System:
    """`system` (from `clearance_arm` with a clearance joint) with the elbow clearance c
    (m) and/or both links' Young's modulus E (Pa) replaced (traceable: for `vmap`)."""
    if clearance is not None:
        system = eqx.tree_at(lambda s: s.force_elements[2].clearance, system, jnp.asarray(clearance, float))
    if youngs is not None:
        E = jnp.asarray(youngs, float)
        system = eqx.tree_at(lambda s: (s.bodies[0].youngs, s.bodies[1].youngs), system, (E, E))
    return system


def simulate_arm(system: System, t1=DURATION, dt=1e-4, *, save_every=10, rho_inf=0.8, throw=True, progress=False):
    """Run the arm from `clearance_arm_state` with generalized-α (ρ∞ = `rho_inf`)."""
    q0, v0 = clearance_arm_state(system)
    solver = GeneralizedAlpha(rho_inf=rho_inf)
    return simulate(
        system, q0, v0, t1, dt, solver=solver, save_every=save_every, consistent=False, throw=throw, progress=progress
    )


def penetration(system: System, q: Float[Array, " nq"]):
    """Elbow penetration $\\delta = |e| - c$ (m; negative: free flight)."""
    joint = system.force_elements[2]
    idx = system.force_bodies[2]
    return joint.penetration(tuple(system.bodies[i] for i in idx), tuple(system._part(q, i) for i in idx))
