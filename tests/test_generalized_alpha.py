"""Generalized-α on rigid benchmarks: pendulum period vs theory, second-order
convergence against a tight diffrax reference, energy behaviour, index-3 constraint
residuals, slider-crank vs closed-form kinematics, and failure reporting."""

import diffrax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax import models

from .helpers import crossing_period


@pytest.fixture(scope="module")
def double_pendulum():
    system = models.double_pendulum()
    q0, v0 = models.double_pendulum_state(0.5, 1.0)
    return system, q0, v0


@pytest.fixture(scope="module")
def reference(double_pendulum):
    system, q0, v0 = double_pendulum
    ref = fj.simulate_ode(
        system,
        q0,
        v0,
        1.0,
        form=fj.UdwadiaKalaba(),
        solver=diffrax.Dopri8(),
        rtol=1e-13,
        atol=1e-13,
        ts=jnp.array([0.0, 1.0]),
    )
    return ref.q[-1]


def test_pendulum_small_amplitude_period():
    theta0 = 0.05
    system = models.pendulum()
    q0, v0 = models.pendulum_state(theta0)
    tr = fj.simulate(system, q0, v0, 5.0, 1e-3, solver=fj.GeneralizedAlpha(rho_inf=1.0), save_every=2)
    angle = np.arctan2(tr.q[:, 2], -tr.q[:, 3])
    T0 = float(models.pendulum_period())
    T = crossing_period(tr.t, angle)
    assert T == pytest.approx(T0, rel=3e-4)  # small-amplitude theory
    assert T == pytest.approx(T0 * (1 + theta0**2 / 16), rel=1e-5)  # first amplitude correction
    assert float(tr.constraint_residual.max()) < 1e-10


def test_second_order_convergence(double_pendulum, reference):
    system, q0, v0 = double_pendulum
    errors = []
    hs = (4e-3, 2e-3, 1e-3)
    for h in hs:
        tr = fj.simulate(system, q0, v0, 1.0, h, solver=fj.GeneralizedAlpha(rho_inf=0.8), save_every=round(1.0 / h))
        errors.append(float(jnp.max(jnp.abs(tr.q[-1] - reference))))
        assert float(tr.constraint_residual.max()) <= 1e-10
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all(np.abs(ratios - 4.0) < 0.1), ratios
    slope = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    assert abs(slope - fj.GeneralizedAlpha.order) < 0.3


@pytest.fixture(scope="module")
def swing():
    """Large-amplitude pendulum (1 rad), 20 s, runs keyed by (rho_inf, index2, h)."""
    system = models.pendulum()
    q0, v0 = models.pendulum_state(1.0)
    runs = {}
    for rho, index2, h in ((1.0, True, 2e-2), (1.0, True, 1e-2), (0.0, False, 2e-2), (0.9, False, 2e-2)):
        solver = fj.GeneralizedAlpha(rho_inf=rho, index2=index2)
        runs[rho, index2, h] = fj.simulate(system, q0, v0, 20.0, h, solver=solver, save_every=round(0.1 / h))
    return runs


def _energy_error(tr):
    e = np.asarray(tr.energy)
    return e - e[0]


def test_energy_bounded_without_numerical_damping(swing):
    # rho_inf = 1 (trapezoidal rule; index-2 stabilized, since the plain index-3 form
    # is weakly unstable at rho_inf = 1): the energy error is a discretization error,
    # second order in h, with no growth of the constraint violations
    d1, d2 = _energy_error(swing[1.0, True, 2e-2]), _energy_error(swing[1.0, True, 1e-2])
    e0 = abs(float(swing[1.0, True, 2e-2].energy[0]))
    assert np.max(np.abs(d1)) / e0 < 2e-3
    assert 3.5 < np.max(np.abs(d1)) / np.max(np.abs(d2)) < 4.5
    assert float(swing[1.0, True, 1e-2].velocity_residual.max()) < 1e-10


def test_energy_decays_with_numerical_damping(swing):
    d0 = _energy_error(swing[0.0, False, 2e-2])
    d_cons = _energy_error(swing[1.0, True, 2e-2])
    n = len(d0)
    # monotone loss, far beyond the oscillating error of the non-dissipative run
    assert -d0[-1] > 10 * np.max(np.abs(d_cons))
    assert 0 > d0[n // 2] > d0[-1]
    # rho_inf = 0.9 dissipates far less than rho_inf = 0
    assert abs(_energy_error(swing[0.9, False, 2e-2])[-1]) < 0.01 * abs(d0[-1])


def test_index3_constraint_residual_every_step(swing):
    for tr in swing.values():
        assert float(jnp.max(tr.constraint_residual)) <= 1e-10
        assert np.all(np.asarray(tr.newton_iterations[1:]) >= 1)


def test_slider_crank_matches_closed_form():
    system = models.slider_crank()
    q0, v0 = models.slider_crank_state()
    tr = fj.simulate(system, q0, v0, 1.0, 2e-3, save_every=5)
    x_exact = models.slider_position_exact(2 * np.pi * tr.t)
    assert float(jnp.max(jnp.abs(tr.q[:, 8] - x_exact))) < 1e-10
    assert float(jnp.max(tr.constraint_residual)) < 1e-10
    # slider velocity: derivative of the closed form, d/dt x(omega t)
    h = 1e-6
    v_exact = (
        models.slider_position_exact(2 * np.pi * (tr.t + h)) - models.slider_position_exact(2 * np.pi * (tr.t - h))
    ) / (2 * h)
    # index-3: velocities are second-order accurate, not exact (O(h^2) ~ 1e-5 here)
    assert float(jnp.max(jnp.abs(tr.v[:, 8] - v_exact))) < 1e-4


def test_newton_failure_names_step_time_and_residual(double_pendulum):
    system, q0, v0 = double_pendulum
    solver = fj.GeneralizedAlpha(rho_inf=0.8, max_iter=1)
    with pytest.raises(fj.SolverError, match=r"at step 1 \(t = 0\.05 s\): scaled residual"):
        fj.simulate(system, q0, v0, 0.5, 0.05, solver=solver)
    tr = fj.simulate(system, q0, v0, 0.5, 0.05, solver=solver, throw=False)
    assert bool(tr.result == fj.RESULTS.newton_failed) and int(tr.failed_step) == 1
    assert float(tr.failed_time) == pytest.approx(0.05)
    assert float(tr.failed_residual) > 1.0


def test_nonfinite_forces_are_reported():
    # the force turns NaN after t = 0.17 s: the step to t = 0.2 s must be reported
    bad = fj.System([fj.PointMass(1.0)], [], [fj.PointForce(0, [0.0], lambda t: jnp.array([jnp.sqrt(0.17 - t), 0.0]))])
    with pytest.raises(fj.SolverError, match=r"step 2 \(t = 0.2 s\)"):
        fj.simulate(bad, jnp.zeros(2), jnp.zeros(2), 0.3, 0.05, t0=0.1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(t1=1.0, dt=0.3), "integer number of steps"),
        (dict(t1=1.0, dt=-0.1), "positive"),
        (dict(t1=1.0, dt=0.1, save_every=3), "save_every"),
        (dict(t1=0.0, dt=0.1), "t1 > t0"),
    ],
)
def test_bad_simulate_arguments(double_pendulum, kwargs, match):
    system, q0, v0 = double_pendulum
    with pytest.raises(ValueError, match=match):
        fj.simulate(system, q0, v0, **kwargs)


def test_bad_state_and_solver_arguments(double_pendulum):
    system, q0, v0 = double_pendulum
    with pytest.raises(ValueError, match="shape"):
        fj.simulate(system, q0[:5], v0, 1.0, 0.1)
    with pytest.raises(ValueError, match="NaN"):
        fj.simulate(system, q0.at[0].set(jnp.inf), v0, 1.0, 0.1)
    with pytest.raises(ValueError, match="rho_inf"):
        fj.GeneralizedAlpha(rho_inf=1.5)
