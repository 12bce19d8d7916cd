"""ZVD input shaping and PD control against closed-form responses."""

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax.control.input_shaping import Shaper, multimode_zvd, residual_vibration, zvd
from flexjax.control.pd import PD, CoordinateControl
from flexjax.control.references import Ramp, RestToRest


def test_zvd_undamped_closed_form():
    s = zvd(2.0)
    assert np.allclose(s.amplitudes, [0.25, 0.5, 0.25])
    assert np.allclose(s.times, [0.0, np.pi / 2, np.pi])


@pytest.mark.parametrize("zeta", [0.0, 0.05, 0.3])
def test_zvd_amplitudes_sum_to_one_and_cancel_the_mode(zeta):
    s = zvd(3.0, zeta)
    assert float(jnp.sum(s.amplitudes)) == pytest.approx(1.0, abs=1e-15)
    assert float(residual_vibration(s, 3.0, zeta)) < 1e-15
    # ZVD robustness: +-10 % frequency error leaves < 3 % residual vibration
    assert float(residual_vibration(s, 3.3, zeta)) < 0.03


def test_multimode_shaper_cancels_every_mode():
    omegas = jnp.array([2.0, 7.0, 19.0])
    s = multimode_zvd(omegas, 0.02)
    assert s.times.shape == (27,)
    assert float(jnp.sum(s.amplitudes)) == pytest.approx(1.0, abs=1e-14)
    for w in omegas:
        assert float(residual_vibration(s, w, 0.02)) < 1e-14
    assert float(residual_vibration(s, 4.0, 0.02)) > 0.05  # a mode it was not designed for


def test_multimode_shaper_on_numbers_is_one_program_and_equals_the_convolutions():
    """On numbers, `multimode_zvd` is one compiled program (each mode's ZVD shaper and
    convolution op by op were 38 small programs for four modes); its impulses equal the
    convolution of the single-mode shapers (eq. 57), under `jit` and `grad` too; bad
    frequencies and damping ratios are refused by name."""
    omegas, zetas = jnp.array([2.0, 7.0, 19.0, 41.0]), jnp.array([0.0, 0.01, 0.02, 0.05])
    compiles, faster = [], 1.1 * omegas
    listener = lambda event, duration, fun_name=None, **kw: (
        compiles.append(fun_name) if event == "/jax/core/compile/backend_compile_duration" else None
    )
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        multimode_zvd(omegas, zetas)
        first = list(compiles)
        s = multimode_zvd(faster, zetas)  # new values: nothing compiles
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    assert first.count("jit(_convolved_impulses)") == 1 and len(first) <= 3, first  # + the inputs' conversion
    assert compiles == first, compiles
    omegas = faster
    ref = zvd(omegas[0], zetas[0])
    for w, z in zip(omegas[1:], zetas[1:], strict=True):
        ref = ref.convolve(zvd(w, z))
    np.testing.assert_allclose(np.asarray(s.times), np.asarray(ref.times), rtol=1e-15, atol=0)
    np.testing.assert_allclose(np.asarray(s.amplitudes), np.asarray(ref.amplitudes), rtol=1e-14, atol=0)
    traced = jax.jit(lambda w: multimode_zvd(w, zetas).times)(omegas)
    np.testing.assert_allclose(np.asarray(traced), np.asarray(s.times), rtol=1e-15, atol=0)
    # d(duration)/d(omega_1) = -2 pi / omega_1^2 / sqrt(1 - zeta_1^2): the slowest mode's two half periods
    g = jax.grad(lambda w: multimode_zvd(w, zetas).duration)(omegas)
    expected = [-2 * np.pi / (float(w) ** 2 * np.sqrt(1 - float(z) ** 2)) for w, z in zip(omegas, zetas, strict=True)]
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="omega_n"):
        multimode_zvd(jnp.array([2.0, -1.0]))
    with pytest.raises(ValueError, match="zeta"):
        multimode_zvd(omegas[:2], jnp.array([0.1, 1.0]))


def test_shaped_step_leaves_an_undamped_oscillator_at_rest():
    # x'' = w^2 (u_IS(t) - x): after the last impulse x = 1 and x' = 0 exactly
    w = 2.5
    s = zvd(w)
    step = lambda t: jnp.where(t >= 0, 1.0, 0.0)
    f = lambda t, y, args: jnp.stack([y[1], w**2 * (s.shape(step, t) - y[0])])
    t_end = float(s.duration) + 3.0
    # integrate piecewise between impulses so the discontinuities are steps' edges
    y = jnp.zeros(2)
    edges = list(np.asarray(s.times)) + [t_end]
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        sol = diffrax.diffeqsolve(
            diffrax.ODETerm(f),
            diffrax.Dopri8(),
            a + 1e-12,
            b,
            1e-3,
            y,
            stepsize_controller=diffrax.PIDController(rtol=1e-12, atol=1e-12),
        )
        y = sol.ys[-1]
    assert np.allclose(y, [1.0, 0.0], atol=1e-8)


def test_gradient_with_respect_to_shaper_time_matches_fd():
    def v(t2):
        s = Shaper(jnp.stack([0.0, t2, 2 * t2]), jnp.array([0.25, 0.5, 0.25]))
        return residual_vibration(s, 2.0)

    g = jax.grad(v)(1.4)
    fd = (v(1.4 + 1e-6) - v(1.4 - 1e-6)) / 2e-6
    assert float(g) == pytest.approx(float(fd), rel=1e-6)


def test_rest_to_rest_profile():
    r = RestToRest(1.0, 2.0)
    assert float(r(-1.0)) == 0.0 and float(r(3.0)) == pytest.approx(1.0)
    assert float(r(1.0)) == pytest.approx(0.5)
    assert float(jax.grad(r)(0.0)) == pytest.approx(0.0, abs=1e-12)
    assert float(jax.grad(r)(1.0)) == pytest.approx(1.0)  # peak speed 2a/T
    assert float(Ramp(1.0, 4.0)(2.0)) == 0.5


def test_pd_controlled_rotor_reaches_the_target():
    # rigid rotor J th'' = kp (u - th) - kd th': critically damped, settles at the target
    J, kp = 0.002, 0.6
    kd = 2 * np.sqrt(kp * J)
    law = PD(kp, kd, RestToRest(1.0, 1.0), shaper=zvd(10.0))
    body = fj.RigidBody2D(1.0, J)
    system = fj.System(
        [body], [fj.DrivingConstraint(0, lambda q: q[0:2], lambda t: jnp.zeros(2), 2)], [CoordinateControl(0, 2, law)]
    )
    tr = fj.simulate_ode(system, jnp.zeros(3), jnp.zeros(3), 4.0, ts=jnp.array([0.0, 4.0]), rtol=1e-10, atol=1e-12)
    assert float(tr.q[-1, 2]) == pytest.approx(1.0, abs=1e-6)
    assert float(law.target(0.5)) < float(RestToRest(1.0, 1.0)(0.5))  # the shaper delays the move


def test_bad_shaper_input():
    with pytest.raises(ValueError, match="omega_n"):
        zvd(0.0)
    with pytest.raises(ValueError, match="zeta"):
        zvd(1.0, 1.0)
    with pytest.raises(ValueError, match=">= 0"):
        Shaper([-1.0, 0.0], [0.5, 0.5])
