"""Gradients through both simulation paths against central finite differences and,
for the slider-crank, against the derivative of the closed-form kinematics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax import models


def spring_pendulum(k, c=0.3):
    """Bar pendulum with a spring-damper from its tip to a wall point."""
    spring = fj.SpringDamper(0, [1.0, 0.0], None, [0.5, -1.0], stiffness=k, damping=c, rest_length=0.2)
    bar = fj.RigidBar2D(2.0, 1.0)
    return fj.System([bar], [fj.RevoluteJoint(0, [0.0, 0.0], None, [0.0, 0.0])], [fj.Gravity((0.0, -9.81)), spring])


Q0 = jnp.array([0.0, 0.0, np.sin(0.3), -np.cos(0.3)])


def ga_tip_x(k, rho, newton="auto"):
    tr = fj.simulate(
        spring_pendulum(k),
        Q0,
        jnp.zeros(4),
        0.5,
        1e-3,
        save_every=500,
        solver=fj.GeneralizedAlpha(rho_inf=rho, newton=newton),
        consistent=False,
    )
    return tr.q[-1, 2]


def fd(f, x, eps):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


# Finite-difference references run full Newton: its roots are exact to rounding, while
# the default kept matrix stops within the Newton tolerance, whose jumps between
# neighbouring parameter values (1e-11 m over 1e-5) would be differentiated as well.


def test_generalized_alpha_gradient_matches_finite_differences():
    k, rho = 5.0, 0.8
    gk, grho = jax.jit(jax.grad(ga_tip_x, argnums=(0, 1)))(k, rho)
    f = jax.jit(lambda k, rho: ga_tip_x(k, rho, "full"))
    fd_k = fd(lambda x: f(x, rho), k, 1e-4)
    fd_rho = fd(lambda x: f(k, x), rho, 1e-4)
    assert float(gk) == pytest.approx(float(fd_k), rel=1e-5)
    assert float(grho) == pytest.approx(float(fd_rho), rel=1e-5)
    assert abs(float(gk)) > 1e-3  # a real dependence, not a zero


@pytest.mark.parametrize("form_cls", [fj.Baumgarte, fj.UdwadiaKalaba], ids=["baumgarte", "uk"])
def test_ode_gradient_matches_finite_differences(form_cls):
    def tip_x(k, alpha):
        tr = fj.simulate_ode(
            spring_pendulum(k),
            Q0,
            jnp.zeros(4),
            0.5,
            form=form_cls(alpha, 5.0),
            ts=jnp.array([0.0, 0.5]),
            rtol=1e-12,
            atol=1e-12,
            consistent=False,
        )
        return tr.q[-1, 2]

    k, alpha = 5.0, 5.0
    gk, galpha = jax.jit(jax.grad(tip_x, argnums=(0, 1)))(k, alpha)
    f = jax.jit(tip_x)
    assert float(gk) == pytest.approx(float(fd(lambda x: f(x, alpha), k, 1e-4)), rel=1e-5)
    # on the constraint manifold the Baumgarte terms vanish: d/dalpha ~ 0 (tolerance level)
    assert abs(float(galpha)) < 1e-8


def test_gradient_through_driving_constraint_matches_closed_form():
    # slider x(t) = x_exact(omega t): d x / d omega = t * x_exact'(omega t)
    T = 0.3

    def slider_x(omega):
        system = models.slider_crank(omega=omega)
        q0, v0 = models.slider_crank_state(omega=omega)
        return fj.simulate(system, q0, v0, T, 1e-3, save_every=300).q[-1, 8]

    omega = 2 * np.pi
    g = jax.grad(slider_x)(omega)
    exact = T * jax.grad(models.slider_position_exact)(omega * T)
    assert float(g) == pytest.approx(float(exact), rel=1e-8)


def test_gradient_with_respect_to_initial_state_is_finite_and_correct():
    def final_angle(theta0, newton="auto"):
        system = models.pendulum()
        q0, v0 = models.pendulum_state(theta0)
        tr = fj.simulate(system, q0, v0, 0.4, 1e-3, save_every=400, solver=fj.GeneralizedAlpha(newton=newton))
        return jnp.arctan2(tr.q[-1, 2], -tr.q[-1, 3])

    g = jax.grad(final_angle)(0.1)
    assert np.isfinite(g)
    assert float(g) == pytest.approx(float(fd(jax.jit(lambda x: final_angle(x, "full")), 0.1, 1e-5)), rel=1e-5)


def _tip_x(k, steps, checkpoint):
    tr = fj.simulate(
        spring_pendulum(k),
        Q0,
        jnp.zeros(4),
        steps * 1e-3,
        1e-3,
        save_every=steps,
        solver=fj.GeneralizedAlpha(rho_inf=0.8),
        consistent=False,
        checkpoint=checkpoint,
    )
    return tr.q[-1, 2]


def test_checkpointed_gradient_is_exact_and_memory_grows_like_sqrt_n():
    """`simulate(checkpoint=True)` (default) recomputes steps in ~sqrt(n) blocks: the
    same gradient as storing every step, and a compiled temporary-memory plan that
    grows ~4x, not 16x, when n grows 16x (XLA's memory analysis, no timing; storing
    every step grows 10x from 1e3 to 1e4 steps, benchmarks/bench_grad.py)."""
    compiled = lambda n, c: jax.jit(jax.grad(lambda k: _tip_x(k, n, c))).lower(5.0).compile()
    short_ckpt, short_full = compiled(256, True), compiled(256, False)
    assert float(short_ckpt(5.0)) == pytest.approx(float(short_full(5.0)), rel=1e-12)
    temp = lambda c: c.memory_analysis().temp_size_in_bytes
    assert temp(compiled(4096, True)) / temp(short_ckpt) < 6  # measured ~4
