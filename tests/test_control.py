"""Control exports and the drive profiles `SmoothStart`, `Cycloidal`, `Trapezoidal`."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax.bodies import RigidBar2D
from flexjax.control import (
    PD,
    Constant,
    CoordinateControl,
    Cycloidal,
    PIDJointTorque,
    Ramp,
    RestToRest,
    Shaper,
    SmoothStart,
    Trapezoidal,
    multimode_zvd,
    zvd,
)

NAMES = (
    "PD",
    "CoordinateControl",
    "PIDJointTorque",
    "Shaper",
    "zvd",
    "multimode_zvd",
    "Ramp",
    "RestToRest",
    "SmoothStart",
    "Cycloidal",
    "Trapezoidal",
)


def test_control_names_are_exported_from_the_package_and_the_top_level():
    import flexjax.control as control

    for name in NAMES:
        assert getattr(fj, name) is getattr(control, name), name
    assert callable(zvd) and callable(multimode_zvd) and PD and CoordinateControl and PIDJointTorque and Shaper and Ramp


def _rate(profile, t):
    return jax.grad(profile)(jnp.asarray(t, float))


def test_smooth_start_closed_form():
    w, T, t0, g0 = 3.0, 0.8, 0.2, 0.5
    g = SmoothStart(w, T, start=t0, initial=g0)
    assert float(g(0.0)) == pytest.approx(g0, abs=1e-15)
    assert float(g(t0 + T)) == pytest.approx(g0 + w * T / 2, rel=1e-14)
    assert float(g(t0 + T + 1.5)) == pytest.approx(g0 + w * T / 2 + 1.5 * w, rel=1e-14)
    # speed: cycloidal blend tau - sin(2 pi tau)/(2 pi), then constant
    tau = 0.3
    assert float(_rate(g, t0 + tau * T)) == pytest.approx(w * (tau - np.sin(2 * np.pi * tau) / (2 * np.pi)), rel=1e-12)
    assert float(_rate(g, t0 + 2 * T)) == pytest.approx(w, rel=1e-14)
    accel = jax.grad(lambda t: _rate(g, t))
    assert abs(float(accel(jnp.asarray(t0 + T - 1e-9)))) < 1e-6 * w / T  # smooth join


def test_cycloidal_closed_form():
    a, T, t0, g0 = 1.2, 2.0, 0.5, -0.3
    g = Cycloidal(a, T, start=t0, initial=g0)
    assert float(g(t0 - 1.0)) == pytest.approx(g0, abs=1e-15)
    assert float(g(t0 + T / 2)) == pytest.approx(g0 + a / 2, rel=1e-14)
    assert float(g(t0 + T + 1.0)) == pytest.approx(g0 + a, rel=1e-14)
    assert float(_rate(g, t0 + T / 2)) == pytest.approx(2 * a / T, rel=1e-14)  # peak speed
    # same curve as RestToRest when it starts from zero
    ts = jnp.linspace(-0.5, 3.0, 17)
    np.testing.assert_allclose(jax.vmap(Cycloidal(a, T, t0))(ts), jax.vmap(RestToRest(a, T, t0))(ts), atol=1e-15)


def test_trapezoidal_closed_form():
    a, T, f, t0 = 2.0, 4.0, 0.25, 1.0
    g = Trapezoidal(a, T, accel_fraction=f, start=t0)
    Ta, V = f * T, a / (T - f * T)
    assert float(g(t0 + Ta)) == pytest.approx(V * Ta / 2, rel=1e-14)
    assert float(g(t0 + T / 2)) == pytest.approx(a / 2, rel=1e-14)
    assert float(g(t0 + T)) == pytest.approx(a, rel=1e-14)
    assert float(_rate(g, t0 + T / 2)) == pytest.approx(V, rel=1e-14)
    assert float(_rate(g, t0 + Ta / 2)) == pytest.approx(V / 2, rel=1e-14)
    assert float(jax.grad(lambda t: _rate(g, t))(jnp.asarray(t0 + Ta / 2))) == pytest.approx(V / Ta, rel=1e-12)
    tri = Trapezoidal(a, T, accel_fraction=0.5)
    assert float(_rate(tri, T / 2 - 1e-12)) == pytest.approx(2 * a / T, rel=1e-9)  # triangular: peak 2a/T


@pytest.mark.parametrize(
    "make",
    [
        lambda p: SmoothStart(p[0], p[1], 0.1, 0.2),
        lambda p: Cycloidal(p[0], p[1], 0.1, 0.2),
        lambda p: Trapezoidal(p[0], p[1], 0.3, 0.1, 0.2),
    ],
    ids=["smooth_start", "cycloidal", "trapezoidal"],
)
def test_profile_gradients_match_central_differences_and_vmap_matches_loop(make):
    p0 = jnp.array([1.3, 0.9])
    f = lambda p: make(p)(0.65)
    grad = jax.grad(f)(p0)
    eps = 1e-6
    for k in range(2):
        e = jnp.zeros(2).at[k].set(eps)
        fd = (f(p0 + e) - f(p0 - e)) / (2 * eps)
        assert float(grad[k]) == pytest.approx(float(fd), rel=1e-7, abs=1e-10)
    ps = jnp.stack([p0, p0 * 1.1, p0 * 0.7])
    batched = jax.vmap(f)(ps)
    np.testing.assert_allclose(batched, [f(p) for p in ps], rtol=1e-14)
    # parameters are leaves: the module flattens to arrays only
    assert all(isinstance(x, jax.Array) for x in jax.tree_util.tree_leaves(make(p0)))


def _driven_bar(profile):
    system = fj.System(
        [RigidBar2D(1.0, 1.0)], [fj.RevoluteJoint(0, [0.0, 0.0], None, [0.0, 0.0]), fj.AngleDriver(0, None, profile)]
    )
    return system


def test_smooth_start_drives_a_bar_and_differentiates_through_the_simulation():
    t1, dt = 0.5, 0.01

    def final_angle(speed):
        system = _driven_bar(SmoothStart(speed, 0.3))
        q0 = jnp.array([0.0, 0.0, 1.0, 0.0])
        tr = fj.simulate(system, q0, jnp.zeros(4), t1, dt, solver=fj.GeneralizedAlpha(), save_every=50)
        return jnp.arctan2(tr.q[-1, 3], tr.q[-1, 2])

    w = 2.0
    exact = w * 0.3 / 2 + w * (t1 - 0.3)  # closed form at t1
    assert float(final_angle(w)) == pytest.approx(exact, abs=1e-8)
    grad = jax.grad(final_angle)(jnp.asarray(w))
    fd = (final_angle(w + 1e-5) - final_angle(w - 1e-5)) / 2e-5
    assert float(grad) == pytest.approx(float(fd), rel=1e-6)
    assert float(grad) == pytest.approx(0.3 / 2 + (t1 - 0.3), rel=1e-7)


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: SmoothStart(1.0, 0.0), "ramp_time"),
        (lambda: Cycloidal(1.0, -1.0), "duration"),
        (lambda: Trapezoidal(1.0, 1.0, accel_fraction=0.7), "accel_fraction"),
        (lambda: Trapezoidal(jnp.ones(2), 1.0), "amplitude"),
        (lambda: SmoothStart(jnp.nan, 1.0), "speed"),
    ],
)
def test_bad_profile_parameters_raise_value_error_naming_the_field(call, field):
    with pytest.raises(ValueError, match=field):
        call()


def test_equal_profiles_compare_equal():
    assert eqx.tree_equal(Trapezoidal(1.0, 2.0), Trapezoidal(1.0, 2.0))


def test_constant_signal_returns_its_value_under_jit_and_differentiates_in_it():
    c = Constant(jnp.array([1.0, -2.0]))
    assert jnp.array_equal(c(0.3), jnp.array([1.0, -2.0]))
    assert jnp.array_equal(eqx.filter_jit(lambda s, t: s(t))(c, 0.3), c(7.0))
    grad = eqx.filter_grad(lambda s: jnp.sum(s(0.0) ** 2))(c)
    np.testing.assert_allclose(grad.value, [2.0, -4.0])
