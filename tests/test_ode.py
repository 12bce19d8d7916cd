"""The diffrax path: Baumgarte and Udwadia-Kalaba forms against generalized-α and
theory, drift with and without stabilization, redundant constraints, events."""

import diffrax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax import models


@pytest.fixture(scope="module")
def pendulum():
    system = models.pendulum()
    q0, v0 = models.pendulum_state(0.05)
    return system, q0, v0


@pytest.fixture(scope="module")
def ga_pendulum(pendulum):
    system, q0, v0 = pendulum
    # full Newton: multipliers exact to rounding (a kept Newton matrix leaves them within
    # the tolerance in position units, atol / (beta' h^2) ~ 1e-4 N here)
    return fj.simulate(
        system, q0, v0, 2.0, 5e-4, solver=fj.GeneralizedAlpha(rho_inf=0.9, newton="full"), save_every=100
    )


@pytest.mark.parametrize("form", [fj.Baumgarte(10.0, 10.0), fj.UdwadiaKalaba(10.0, 10.0)], ids=["baumgarte", "uk"])
def test_ode_forms_agree_with_generalized_alpha(pendulum, ga_pendulum, form):
    system, q0, v0 = pendulum
    tr = fj.simulate_ode(system, q0, v0, 2.0, form=form, ts=ga_pendulum.t, rtol=1e-11, atol=1e-12)
    # the GA error at h = 5e-4 is ~1.2e-7 here (O(h^2) phase error); the ODE solution is far tighter
    assert float(jnp.max(jnp.abs(tr.q - ga_pendulum.q))) < 3e-7
    assert float(jnp.max(tr.constraint_residual)) < 1e-10
    assert np.allclose(tr.lam[:, :3], ga_pendulum.lam[:, :3], atol=1e-5)
    e = np.asarray(tr.energy)
    assert np.max(np.abs(e - e[0])) < 1e-9


def test_baumgarte_stabilization_reduces_drift():
    # double pendulum, loose tolerances: the unstabilized index-1 form drifts
    system = models.double_pendulum()
    q0, v0 = models.double_pendulum_state(1.0, 2.0)
    kwargs = dict(rtol=1e-4, atol=1e-6, ts=jnp.linspace(0.0, 5.0, 51))
    free = fj.simulate_ode(system, q0, v0, 5.0, form=fj.Baumgarte(0.0, 0.0), **kwargs)
    stab = fj.simulate_ode(system, q0, v0, 5.0, form=fj.Baumgarte(20.0, 20.0), **kwargs)
    drift_free = float(jnp.max(free.constraint_residual))
    drift_stab = float(jnp.max(stab.constraint_residual))
    assert drift_free > 1e-6
    assert drift_stab < drift_free / 10


@pytest.fixture(scope="module")
def redundant():
    """Pendulum pinned twice at the same point: Phi_q has rank 3 < 4 rows."""
    bar = fj.RigidBar2D(1.0, 1.0)
    pin = fj.RevoluteJoint(0, [0.0, 0.0], None, [0.0, 0.0])
    system = fj.System([bar], [pin, pin], [fj.Gravity((0.0, -9.81))])
    q0, v0 = models.pendulum_state(0.05)
    return system, q0, v0


def test_udwadia_kalaba_handles_redundant_constraints(redundant, pendulum, ga_pendulum):
    system, q0, v0 = redundant
    assert np.linalg.matrix_rank(np.asarray(system.constraints_q(q0, 0.0))) == 3
    tr = fj.simulate_ode(
        system, q0, v0, 2.0, form=fj.UdwadiaKalaba(10.0, 10.0), ts=ga_pendulum.t, rtol=1e-11, atol=1e-12
    )
    assert float(jnp.max(jnp.abs(tr.q - ga_pendulum.q))) < 3e-7
    # the minimum-norm multipliers split the pin force between the two copies
    assert np.allclose(tr.lam[:, 1:3] + tr.lam[:, 3:5], ga_pendulum.lam[:, 1:3], atol=1e-5)


def test_augmented_form_fails_on_redundant_constraints(redundant):
    system, q0, v0 = redundant
    qdd, _ = fj.Baumgarte().acceleration(system, q0, v0, 0.0)
    assert not np.all(np.isfinite(qdd)) or np.max(np.abs(qdd)) > 1e6


def test_event_stops_at_the_quarter_period(pendulum):
    system, q0, v0 = pendulum
    tr = fj.simulate_ode(
        system,
        q0,
        v0,
        2.0,
        form=fj.UdwadiaKalaba(),
        rtol=1e-11,
        atol=1e-12,
        event=lambda t, q, v, s: q[2],  # tip passes under the pivot
    )
    T = float(models.pendulum_period()) * (1 + 0.05**2 / 16)
    assert float(tr.event_time) == pytest.approx(T / 4, rel=1e-5)
    finite = np.isfinite(np.asarray(tr.t))
    assert np.asarray(tr.t)[finite].max() <= float(tr.event_time)


def test_fixed_step_explicit_runge_kutta(pendulum, ga_pendulum):
    system, q0, v0 = pendulum
    form = fj.UdwadiaKalaba(5.0, 5.0)
    tr = fj.simulate_ode(system, q0, v0, 2.0, form=form, solver=diffrax.Dopri5(), dt0=1e-3, rtol=None, ts=ga_pendulum.t)
    assert float(jnp.max(jnp.abs(tr.q - ga_pendulum.q))) < 3e-7


def test_ode_bad_arguments(pendulum):
    system, q0, v0 = pendulum
    with pytest.raises(ValueError, match="dt0"):
        fj.simulate_ode(system, q0, v0, 1.0, rtol=None)
    with pytest.raises(ValueError, match="t1 > t0"):
        fj.simulate_ode(system, q0, v0, 0.0)
    with pytest.raises(ValueError, match="shape"):
        fj.Baumgarte(alpha=jnp.ones(2))
    with pytest.raises(ValueError, match="alpha.*>= 0"):
        fj.UdwadiaKalaba(alpha=-1.0)
    with pytest.raises(ValueError, match="beta.*>= 0"):
        fj.Baumgarte(1.0, -2.0)
