"""Nonholonomic constraints, the Udwadia-Kalaba form and the mobile robot (seed 003)."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax import models
from flexjax.solvers import RK4

H = 0.1  # the seed's RK4 step
TS = jnp.linspace(0.0, 20.0, 201)


@pytest.fixture(scope="module")
def robot():
    system = models.mobile_robot()
    q0, v0 = models.mobile_robot_state()
    return system, q0, v0


def robot_run(system, q0, v0, alpha, beta):
    return fj.simulate_ode(
        system, q0, v0, 20.0, form=fj.UdwadiaKalaba(alpha, beta), solver=RK4(), dt0=H, rtol=None, ts=TS, throw=False
    )


def test_no_slip_constraint_blocks_lateral_motion_only():
    system = fj.System([fj.RigidBody2D(1.0, 0.1)], [], [], [fj.NoSlipConstraint(0, [0.0, 0.0], [0.0, 1.0])])
    q = jnp.array([1.0, 2.0, 0.3])
    forward = jnp.array([np.cos(0.3), np.sin(0.3), 0.7])
    lateral = jnp.array([-np.sin(0.3), np.cos(0.3), 0.0])
    assert abs(float(system.nonholonomic(q, forward, 0.0)[0])) < 1e-15
    assert float(system.nonholonomic(q, 2.0 * lateral, 0.0)[0]) == pytest.approx(2.0)


def test_acceleration_rows_are_time_derivatives(robot):
    # psi(q + v s + a s^2/2, v + a s, t + s): d/ds at 0 = A_nh a - b_nh
    system, q0, v0 = robot
    rng = np.random.default_rng(0)
    q, v, a = q0 + 0.1 * rng.standard_normal(3), v0 + rng.standard_normal(3), rng.standard_normal(3)
    t, h = 0.7, 1e-5
    psi = lambda s: system.nonholonomic(q + v * s + 0.5 * a * s**2, v + a * s, t + s)
    A, b = system.acceleration_constraints(q, v, t)
    assert np.allclose((psi(h) - psi(-h)) / (2 * h), A[2:] @ a - b[2:], atol=1e-8)


def test_uk_equals_augmented_form_and_satisfies_constraints(robot):
    system, q0, v0 = robot
    rng = np.random.default_rng(1)
    q, v = q0 + 0.05 * rng.standard_normal(3), v0 + 0.3 * rng.standard_normal(3)  # off the manifold
    uk, lam_uk = fj.UdwadiaKalaba(3.0, 4.0).acceleration(system, q, v, 0.4)
    aug, lam_aug = fj.Baumgarte(3.0, 4.0).acceleration(system, q, v, 0.4)
    assert np.allclose(uk, aug, rtol=1e-12, atol=1e-12)
    assert np.allclose(lam_uk, lam_aug, rtol=1e-10, atol=1e-10)
    A, b = system.acceleration_constraints(q, v, 0.4)
    # UK enforces the stabilized rows A qdd = b - 2 alpha [Phi'; psi] - beta^2 [Phi; 0]
    Phi, Phid, psi = system.constraints(q, 0.4), system.constraint_velocity(q, v, 0.4), system.nonholonomic(q, v, 0.4)
    target = b - jnp.concatenate([6.0 * Phid + 16.0 * Phi, 6.0 * psi])
    assert np.max(np.abs(A @ uk - target)) < 1e-12


def test_uk_equals_augmented_form_on_holonomic_slider_crank():
    system = models.slider_crank()
    q0, v0 = models.slider_crank_state()
    uk, _ = fj.UdwadiaKalaba(2.0, 2.0).acceleration(system, q0, v0, 0.0)
    aug, _ = fj.Baumgarte(2.0, 2.0).acceleration(system, q0, v0, 0.0)
    assert np.allclose(uk, aug, rtol=1e-11, atol=1e-11)


def test_consistent_state_projects_velocities_onto_nonholonomic_rows(robot):
    system, q0, v0 = robot
    q, v = system.consistent_state(q0, v0 + jnp.array([0.0, 0.3, 0.2]))
    assert float(jnp.max(jnp.abs(system.nonholonomic(q, v, 0.0)))) < 1e-12
    assert float(jnp.max(jnp.abs(system.constraint_velocity(q, v, 0.0)))) < 1e-12


@pytest.fixture(scope="module")
def robot_runs(robot):
    from flexjax.experiments.mobile_robot import choose_pairs

    system, q0, v0 = robot
    stable, _ = choose_pairs(H)  # from the RK4 stability region, 50 % margin
    return {"free": robot_run(system, q0, v0, 0.0, 0.0), "stable": robot_run(system, q0, v0, *stable)}


def test_stabilized_drift_at_least_100x_smaller(robot_runs):
    free = float(jnp.max(robot_runs["free"].constraint_residual))
    stab = float(jnp.max(robot_runs["stable"].constraint_residual))
    assert free > 1e-2  # the uncorrected run drifts off the ellipse
    assert stab < free / 100
    err = models.path_error(robot_runs["stable"].q, robot_runs["stable"].t)
    assert float(jnp.max(jnp.abs(err))) == pytest.approx(stab, rel=1e-12)


def test_drift_gradient_matches_finite_differences(robot):
    system, q0, v0 = robot

    def drift(alpha):
        tr = robot_run(system, q0, v0, alpha, 5.0)
        return jnp.mean(tr.constraint_residual**2)

    g = jax.grad(drift)(4.0)
    f = jax.jit(drift)
    fd = (f(4.0 + 1e-4) - f(4.0 - 1e-4)) / 2e-4
    assert float(g) == pytest.approx(float(fd), rel=1e-5)


def test_rk4_is_fourth_order():
    system = models.pendulum()
    q0, v0 = models.pendulum_state(0.5)
    ref = fj.simulate_ode(
        system,
        q0,
        v0,
        1.0,
        form=fj.UdwadiaKalaba(),
        solver=diffrax.Dopri8(),
        rtol=1e-13,
        atol=1e-13,
        ts=jnp.array([1.0]),
    )
    errs = [
        float(
            jnp.max(
                jnp.abs(
                    fj.simulate_ode(
                        system,
                        q0,
                        v0,
                        1.0,
                        form=fj.UdwadiaKalaba(),
                        solver=RK4(),
                        dt0=h,
                        rtol=None,
                        ts=jnp.array([1.0]),
                    ).q[-1]
                    - ref.q[-1]
                )
            )
        )
        for h in (0.04, 0.02)
    ]
    assert 13.0 < errs[0] / errs[1] < 19.0


def test_index3_solver_rejects_nonholonomic_systems(robot):
    system, q0, v0 = robot
    with pytest.raises(NotImplementedError, match="simulate_ode"):
        fj.simulate(system, q0, v0, 1.0, 0.1)
