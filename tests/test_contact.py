"""Unilateral frictional contact (seed 004): impact, stick, slip, switching by events.

Small models only (a particle, a rigid pendulum) so that each compiles once per module.
"""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import flexjax as fj
from flexjax.bodies.ancf2d import AncfBeam2D
from flexjax.contact import (
    IMPACT,
    SEPARATION,
    SLIP_NEGATIVE,
    SLIP_POSITIVE,
    STICK,
    PointSurfaceContact,
    first_contact,
    simulate_contact,
)

G, MU = 9.81, 0.3
THETA0 = 0.125 * np.pi
NORMAL = (2.0, 3.0)  # the seed 004 surface 2x + 3y = 0 through the pivot


@pytest.fixture(scope="module")
def particle():
    return fj.System([fj.PointMass(1.0)], [], [fj.Gravity((0.0, -G))])


def floor(mu=MU, e=0.0, angle=0.0):
    """The line through the origin at `angle` (rad) with its normal on the upper side."""
    return PointSurfaceContact(0, (0.0, 0.0), (0.0, 0.0), (-np.sin(angle), np.cos(angle)), mu=mu, restitution=e)


@pytest.fixture(scope="module")
def rod():
    """Rigid uniform rod (1 kg, 1 m) pinned at the origin; its tip meets 2x + 3y = 0."""
    system = fj.System(
        [fj.RigidBar2D(1.0, 1.0)], [fj.RevoluteJoint(0, [0.0, 0.0], None, [0.0, 0.0])], [fj.Gravity((0.0, -G))]
    )
    contact = PointSurfaceContact(0, (1.0, 0.0), (0.0, 0.0), NORMAL, mu=MU)

    def state(theta0):
        q0 = jnp.stack([0.0, 0.0, jnp.cos(theta0), jnp.sin(theta0)])
        return q0, jnp.zeros(4)

    def contact_time(theta0):
        q0, v0 = state(theta0)
        return first_contact(system, contact, q0, v0, 1.0, adjoint=diffrax.ForwardMode())[0]

    # one compilation: contact times and their derivatives for a batch of release angles
    angles = jnp.array([0.3, THETA0, 0.5])
    times, slopes = jax.jit(jax.vmap(lambda a: jax.jvp(contact_time, (a,), (jnp.ones_like(a),))))(angles)
    return contact_time, angles, times, slopes


def rigid_contact_time(theta0):
    """High-accuracy ODE of the rigid pendulum, angle from the x-axis:
    theta'' = -(3 g / 2 L) cos(theta); contact at theta = -atan(2/3)."""
    ev = lambda t, y: y[0] + np.arctan(2.0 / 3.0)
    ev.terminal = True
    sol = solve_ivp(
        lambda t, y: [y[1], -1.5 * G * np.cos(y[0])],
        (0, 2),
        [theta0, 0.0],
        method="DOP853",
        events=ev,
        rtol=1e-13,
        atol=1e-13,
    )
    return float(sol.t_events[0][0])


def test_rigid_rod_first_contact_time(rod):
    _, angles, times, _ = rod
    t_c = float(times[1])
    assert abs(t_c - rigid_contact_time(THETA0)) < 1e-6
    assert abs(t_c - 0.3735638) < 1e-6  # rigid value; the seed's flexible first force peak is 0.373791 s
    # vmap: every angle of the batch matches its own reference
    assert np.allclose(times, [rigid_contact_time(float(a)) for a in angles], atol=1e-7)


def test_first_contact_time_derivative_vs_finite_differences(rod):
    _, angles, _, slopes = rod
    h = 1e-5
    for a, slope in zip(np.asarray(angles), np.asarray(slopes), strict=True):
        fd = (rigid_contact_time(a + h) - rigid_contact_time(a - h)) / (2 * h)
        assert slope == pytest.approx(fd, rel=1e-5)


@pytest.mark.parametrize("angle", [0.2, 0.4])
def test_block_on_incline(particle, angle):
    sol = simulate_contact(particle, floor(angle=angle), jnp.zeros(2), jnp.zeros(2), 0.5)
    n, expected_n = sol.lam_n[-1], G * np.cos(angle)
    assert n == pytest.approx(expected_n, rel=1e-9)
    if np.tan(angle) < MU:  # sticks: at rest, friction = the downhill weight component
        assert sol.switches[0].after == STICK and len(sol.switches) == 1
        assert np.max(np.abs(sol.q)) < 1e-9
        assert abs(sol.lam_t[-1]) == pytest.approx(G * np.sin(angle), rel=1e-9)
    else:  # slides down with a = g (sin - mu cos), friction = mu N
        assert sol.switches[0].after in (SLIP_POSITIVE, SLIP_POSITIVE + 1)
        a = G * (np.sin(angle) - MU * np.cos(angle))
        slid = np.abs(sol.g_t - sol.g_t[0])
        assert np.allclose(slid, 0.5 * a * sol.t**2, rtol=1e-7, atol=1e-12)
        assert abs(sol.lam_t[-1]) == pytest.approx(MU * expected_n, rel=1e-9)


@pytest.fixture(scope="module")
def oblique_ball(particle):
    """A particle dropped from 1 m with 5 m/s sideways onto a floor, e = 0.5, mu = 0.3:
    sliding impacts, a Zeno series of bounces ended by `rebound_velocity`, slip on the
    floor, and stick once the slip velocity reverses."""
    return simulate_contact(particle, floor(e=0.5), jnp.array([0.0, 1.0]), jnp.array([5.0, 0.0]), 2.0)


def test_bouncing_ball_restitution(particle, oblique_ball):
    impacts = oblique_ball.impacts
    assert len(impacts) > 10
    v_n = np.sqrt(2 * G * 1.0)
    first = impacts[0]
    assert first.time == pytest.approx(np.sqrt(2 / G), rel=1e-10)
    # the normal impulse (1 + e) m v_n; sliding impact: the tangential one is mu times it
    assert first.p_n == pytest.approx(1.5 * v_n, rel=1e-9)
    assert abs(first.p_t) == pytest.approx(MU * first.p_n, rel=1e-9)
    # energy lost: (1 - e^2) of the normal kinetic energy plus the friction work
    vt_before, vt_after = 5.0, 5.0 - MU * first.p_n
    lost = 0.5 * (1 - 0.25) * v_n**2 + 0.5 * (vt_before**2 - vt_after**2)
    assert first.energy_before - first.energy_after == pytest.approx(lost, rel=1e-8)


def test_energy_never_rises_across_switches(oblique_ball):
    phases = [s.after for s in oblique_ball.switches]
    assert IMPACT in phases and STICK in phases and SLIP_NEGATIVE in phases  # slides along -tangent
    for s in oblique_ball.switches:
        assert s.energy_after <= s.energy_before + 1e-12
    e = oblique_ball.energy
    assert np.max(np.diff(e)) < 1e-8  # smooth phases conserve or dissipate
    assert np.max(oblique_ball.residual[oblique_ball.phase != SEPARATION]) < 1e-9
    assert np.min(oblique_ball.lam_n[oblique_ball.phase != SEPARATION]) > -1e-9


def test_slip_to_stick_event_vs_fine_fixed_step(particle):
    # a particle sliding on a level floor at 1 m/s stops when v = 0: t* = v0 / (mu g)
    t_star = 1.0 / (MU * G)
    kw = dict(t1=0.6)
    ev = simulate_contact(particle, floor(), jnp.zeros(2), jnp.array([1.0, 0.0]), **kw)
    dt = 1e-5
    fixed = simulate_contact(
        particle,
        floor(),
        jnp.zeros(2),
        jnp.array([1.0, 0.0]),
        rtol=None,
        dt0=dt,
        root_find=False,
        max_steps=1 << 16,
        **kw,
    )
    t_ev = [s.time for s in ev.switches if s.cause == "reversal"]
    t_fx = [s.time for s in fixed.switches if s.cause == "reversal"]
    assert len(t_ev) == len(t_fx) == 1
    assert t_ev[0] == pytest.approx(t_star, abs=1e-9)
    assert abs(t_fx[0] - t_ev[0]) <= dt
    assert ev.switches[-1].after == STICK and fixed.switches[-1].after == STICK
    assert ev.n_steps < 100 < fixed.n_steps


def test_bad_input_raises(particle):
    with pytest.raises(ValueError, match="non-zero"):
        PointSurfaceContact(0, (0.0, 0.0), (0.0, 0.0), (0.0, 0.0))
    with pytest.raises(ValueError, match="mu"):
        PointSurfaceContact(0, (0.0, 0.0), (0.0, 0.0), (0.0, 1.0), mu=-0.1)
    with pytest.raises(ValueError, match="restitution"):
        PointSurfaceContact(0, (0.0, 0.0), (0.0, 0.0), (0.0, 1.0), restitution=1.5)
    beam = AncfBeam2D(1.0, 2700.0, 1e-4, 1e-9, 7e10, 2)
    system = fj.System([beam], [], [])
    q0 = beam.straight_coordinates(start=(0.0, 1.0))
    outside = PointSurfaceContact(0, (1.5,), (0.0, 0.0), (0.0, 1.0))
    with pytest.raises(ValueError, match="outside"):
        simulate_contact(system, outside, q0, jnp.zeros_like(q0), 0.1)
    with pytest.raises(ValueError, match="PointMass"):
        simulate_contact(
            particle,
            PointSurfaceContact(0, (0.1, 0.0), (0.0, 0.0), (0.0, 1.0)),
            jnp.array([0.0, 1.0]),
            jnp.zeros(2),
            0.1,
        )
    with pytest.raises(ValueError, match="body 3"):
        simulate_contact(
            particle,
            PointSurfaceContact(3, (0.0, 0.0), (0.0, 0.0), (0.0, 1.0)),
            jnp.array([0.0, 1.0]),
            jnp.zeros(2),
            0.1,
        )
    with pytest.raises(ValueError, match="inside the surface"):
        simulate_contact(particle, floor(), jnp.array([0.0, -0.1]), jnp.zeros(2), 0.1)
