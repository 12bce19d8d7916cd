"""Revolute clearance joint (seed 002 eq. 1-14) and PID joint control: contact law
against its formulas, restitution against a 1-DOF reference integration, free flight
inside the clearance, the zero-clearance limit, gradients, batching, bad input."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import flexjax as fj
from flexjax.control.pid import PIDJointTorque
from flexjax.control.references import Ramp
from flexjax.forces.clearance import ClearanceJoint, effective_modulus
from flexjax.models.clearance_arm import JointReference, TipCirclePath, check_workspace, inverse_kinematics

from .helpers import central_difference

C, RJ, V_IN = 5e-4, 0.01, 0.3
E_STAR = float(effective_modulus(207e9, 0.3, 207e9, 0.3))
GA1 = fj.GeneralizedAlpha(rho_inf=1.0)


def ground_bearing(restitution=0.8, clearance=C, friction=0.0):
    """A 1 kg journal (point mass) in a bearing fixed to the ground at the origin."""
    joint = ClearanceJoint(
        None,
        (0.0, 0.0),
        0,
        (0.0, 0.0),
        journal_radius=RJ,
        clearance=clearance,
        restitution=restitution,
        friction=friction,
    )
    return fj.System([fj.PointMass(1.0)], force_elements=[joint])


def reference_restitution(ce, v_in=V_IN, c=C):
    r"""Exit/entry speed of $\ddot\delta = -(K_n\delta^{1.5} + D\dot\delta)$ (eq. 9-11), DOP853."""
    K = lambda d: np.pi * E_STAR / 8 * np.sqrt(2 * d) * (3 * c + 2 * d) / (c + d) ** 1.5

    def rhs(t, y):
        d, dd = y
        k = K(max(d, 0.0))
        damping = 0.75 * k * (1 - ce**2) * np.exp(2 * (1 - ce)) * max(d, 0.0) ** 1.5 / v_in
        return [dd, -max(k * max(d, 0.0) ** 1.5 + damping * dd, 0.0)]

    leave = lambda t, y: y[0] + 1e-12
    leave.terminal, leave.direction = True, -1
    sol = solve_ivp(rhs, [0, 1], [1e-13, v_in], method="DOP853", rtol=1e-12, atol=1e-18, events=leave)
    return -sol.y[1, -1] / v_in


@eqx.filter_jit
def rebound_velocity(system):
    """Journal starts 1 µm short of contact moving at 0.3 m/s; returns its velocity
    after the impact (0.4 ms, h = 2 µs: about 120 steps per contact)."""
    q0, v0 = jnp.array([0.0, -(C - 1e-6)]), jnp.array([0.0, -V_IN])
    tr = fj.simulate(system, q0, v0, t1=4e-4, dt=2e-6, solver=GA1, consistent=False, throw=False, save_every=200)
    return tr.v[-1, 1], tr.energy


@pytest.mark.parametrize("ce", [0.5, 0.8, 0.95])
def test_restitution_matches_one_dof_reference(ce):
    v_out, _ = rebound_velocity(ground_bearing(ce))
    e_sim = float(v_out) / V_IN
    e_ref = reference_restitution(ce)
    assert abs(e_sim - e_ref) < 2e-4
    # the hybrid model reproduces c_e to a few per cent (measured 0.4827, 0.7874, 0.9489)
    assert abs(e_sim - ce) < 0.03


def test_elastic_impact_conserves_energy():
    v_out, energy = rebound_velocity(ground_bearing(1.0))
    assert abs(float(v_out) - V_IN) < 1e-5 * V_IN
    assert abs(float(energy[-1] - energy[0])) < 5e-6 * float(energy[0])  # measured 1.2e-6


def test_contact_time_matches_integration():
    joint = ground_bearing(1.0).force_elements[0]
    T = float(joint.contact_time(1.0, V_IN))
    K = lambda d: np.pi * E_STAR / 8 * np.sqrt(2 * d) * (3 * C + 2 * d) / (C + d) ** 1.5
    leave = lambda t, y: y[0]
    leave.terminal, leave.direction = True, -1
    sol = solve_ivp(
        lambda t, y: [y[1], -K(max(y[0], 1e-300)) * max(y[0], 0.0) ** 1.5],
        [0, 1],
        [1e-14, V_IN],
        method="DOP853",
        rtol=1e-12,
        atol=1e-18,
        events=leave,
    )
    assert T == pytest.approx(sol.t[-1], rel=1e-4)


def test_force_zero_inside_clearance_and_law_in_contact():
    system = ground_bearing(0.8, friction=0.2)
    joint, body = system.force_elements[0], system.bodies
    rng = np.random.default_rng(0)
    for _ in range(5):  # anywhere strictly inside, any velocity: no force, no energy
        r = C * rng.uniform(0, 0.999) * np.array([np.cos(a := rng.uniform(0, 6.3)), np.sin(a)])
        Q = joint.force(body, (jnp.asarray(r),), (jnp.asarray(rng.normal(size=2)),), 0.0)[0]
        assert np.all(np.asarray(Q) == 0.0)
        assert float(joint.potential_energy(body, (jnp.asarray(r),), 0.0)) == 0.0
    # in contact: F_N = K_n delta^1.5 + D delta_dot (eq. 9-11), friction at full c_d (eq. 13-14)
    delta, n = 2e-6, np.array([0.6, -0.8])
    r, v = (C + delta) * n, 0.05 * n + 0.02 * np.array([0.8, 0.6])  # v_T = +0.02 > v1
    joint = eqx.tree_at(lambda j: j.state, joint, jnp.asarray(0.1))  # impact velocity 0.1 m/s
    K = np.pi * E_STAR / 8 * np.sqrt(2 * delta * (3 * C + 2 * delta) ** 2 / (C + delta) ** 3)
    F_n = K * delta**1.5 + 0.75 * K * (1 - 0.64) * np.exp(0.4) * delta**1.5 / 0.1 * 0.05
    Q = np.asarray(joint.force(body, (jnp.asarray(r),), (jnp.asarray(v),), 0.0)[0])
    expected = -F_n * n - 0.2 * F_n * np.array([0.8, 0.6])
    np.testing.assert_allclose(Q, expected, rtol=1e-12)


def pendulum_tip(clearance):
    """Bar (1 kg, 1 m) on a pin or a clearance joint at the origin, released at 0.3 rad
    under gravity; tip position after 0.5 s (h = 1e-4 s)."""
    bar = fj.RigidBar2D(1.0, 1.0)
    if clearance is None:
        system = fj.System([bar], [fj.RevoluteJoint(0, (0.0, 0.0), None, (0.0, 0.0))], [fj.Gravity((0.0, -9.81))])
    else:
        joint = ClearanceJoint(None, (0.0, 0.0), 0, (0.0, 0.0), journal_radius=RJ, clearance=clearance)
        system = fj.System([bar], [], [fj.Gravity((0.0, -9.81)), joint])
    q0 = jnp.array([0.0, 0.0, np.sin(0.3), -np.cos(0.3)])
    tr = fj.simulate(
        system, q0, jnp.zeros(4), t1=0.5, dt=1e-4, solver=fj.GeneralizedAlpha(rho_inf=0.8), save_every=5000
    )
    return np.asarray(tr.q[-1, 2:])


def test_zero_clearance_limit_is_ideal_pin():
    ideal = pendulum_tip(None)
    d4 = np.linalg.norm(pendulum_tip(1e-4) - ideal)
    d6 = np.linalg.norm(pendulum_tip(1e-6) - ideal)
    assert d6 < 2e-6 and d6 < d4 / 50  # measured 9.9e-5 and 1.3e-6 m: the offset scales with c


def test_gradient_of_rebound_wrt_restitution():
    system = ground_bearing(0.8)
    f = lambda ce: rebound_velocity(eqx.tree_at(lambda s: s.force_elements[0].restitution, system, ce))[0]
    g = jax.grad(f)(jnp.asarray(0.8))
    fd = central_difference(f, jnp.asarray(0.8), 1e-4)  # an array: one compile for both points
    assert float(g) == pytest.approx(float(fd), rel=1e-5)


def test_vmap_over_clearance_equals_loop():
    system = ground_bearing(0.8)
    with_c = lambda c: eqx.tree_at(lambda s: s.force_elements[0].clearance, system, c)
    cs = jnp.array([C, 1.2 * C])
    batched = jax.vmap(lambda c: rebound_velocity(with_c(c))[0])(cs)
    looped = [rebound_velocity(with_c(c))[0] for c in cs]
    np.testing.assert_allclose(np.asarray(batched), np.asarray(looped), rtol=1e-12)


def test_pid_on_rigid_rotor_matches_closed_loop_ode():
    r"""Rotor J on a ground pin, PID on its angle towards a ramp: compare with the
    linear closed loop $J\ddot\theta = K_p e + K_i\int e + K_d\dot e$ (scipy)."""
    J, kp, ki, kd = 1 / 3, 40.0, 30.0, 6.0
    ramp = Ramp(1.0, 1.0)
    pid = PIDJointTorque(0, None, ramp, kp, ki, kd)
    system = fj.System([fj.RigidBar2D(1.0, 1.0)], [fj.RevoluteJoint(0, (0.0, 0.0), None, (0.0, 0.0))], [pid])
    tr = fj.simulate(
        system,
        jnp.array([0.0, 0.0, 1.0, 0.0]),
        jnp.zeros(4),
        t1=2.0,
        dt=1e-3,
        solver=fj.GeneralizedAlpha(rho_inf=0.8),
        save_every=100,
    )
    theta = np.arctan2(np.asarray(tr.q[:, 3]), np.asarray(tr.q[:, 2]))
    ref = lambda t: min(max(t, 0.0), 1.0)
    rate = lambda t: 1.0 if 0 <= t < 1 else 0.0
    rhs = lambda t, y: [y[1], (kp * (ref(t) - y[0]) + ki * y[2] + kd * (rate(t) - y[1])) / J, ref(t) - y[0]]
    sol = solve_ivp(rhs, [0, 2], [0, 0, 0], t_eval=np.asarray(tr.t), rtol=1e-10, atol=1e-12, max_step=1e-3)
    assert np.max(np.abs(theta - sol.y[0])) < 2e-4  # O(h) from the sampled integral
    assert float(tr.force_state[-1, 0]) == pytest.approx(sol.y[2, -1], abs=1e-3)


def test_inverse_kinematics_reaches_the_path():
    path = TipCirclePath()
    for t in (0.0, 2.5, 5.0, 7.3):
        tip = path(jnp.asarray(t))
        th1, th2 = inverse_kinematics(tip)
        elbow = 0.4 * jnp.stack([jnp.cos(th1), jnp.sin(th1)])
        reached = elbow + 1.6 * jnp.stack([jnp.cos(th1 + th2), jnp.sin(th1 + th2)])
        np.testing.assert_allclose(np.asarray(reached), np.asarray(tip), atol=1e-12)
    assert float(JointReference(path, 1)(jnp.asarray(10.0))) == pytest.approx(float(JointReference(path, 1)(0.0)))
    with pytest.raises(ValueError, match="reaches only"):
        check_workspace(TipCirclePath((1.9, 0.0), 0.25))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(clearance=-1e-4), "clearance must be >= 0"),
        (dict(bearing_radius=0.009), "smaller than the journal radius"),
        (dict(clearance=1e-4, bearing_radius=0.02), "exactly one"),
        (dict(clearance=1e-4, restitution=0.0), "restitution"),
        (dict(clearance=1e-4, v0=1e-3, v1=1e-4), "v0 < v1"),
        (dict(clearance=1e-4, friction=-0.1), "friction"),
    ],
)
def test_bad_clearance_joint_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ClearanceJoint(None, (0.0, 0.0), 0, (0.0, 0.0), journal_radius=RJ, **kwargs)


def test_stateful_forces_rejected_by_ode_path():
    with pytest.raises(NotImplementedError, match="discrete state"):
        fj.simulate_ode(ground_bearing(), jnp.zeros(2), jnp.zeros(2), t1=0.1)
