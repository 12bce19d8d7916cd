"""`flexjax.modes`: natural frequencies of constrained systems linearized at a state.

References: the pendulum's sqrt(3 g / 2 L), the Euler-Bernoulli cantilever roots, an
independent Hermite-cubic FE model (`beam_fe`), the FLFJ frequency equation (seed 000
eq. 32), central differences for the derivatives.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax import models
from flexjax.analysis import beam_fe_frequencies, flfj_frequencies
from flexjax.bodies import AncfBeam2D, ModalHubBeam, straight_beam_coordinates

G = 9.81
CANTILEVER = np.array([1.87510407, 4.69409113])

# steel rod, d = 2 mm, l = 1 m (the FLFJ experiments' link)
E_ROD, RHO_ROD, D_ROD, L_ROD, J_HUB = 207e9, 7850.0, 0.002, 1.0, 0.002
A_ROD, I_ROD = np.pi * D_ROD**2 / 4, np.pi * D_ROD**4 / 64


def pendulum_frequency(length):
    return fj.modes(models.pendulum(1.0, length, G), models.pendulum_state(0.0, length)[0]).frequencies[0]


def test_pendulum_frequency_shape_and_rigid_modes():
    system = models.pendulum(2.0, 0.7, G)
    q = models.pendulum_state(0.3, 0.7)[0]  # off the equilibrium: still a valid linearization
    m = fj.modes(system, models.pendulum_state(0.0, 0.7)[0])
    assert m.frequencies.shape == (1,)
    assert float(m.frequencies[0]) == pytest.approx(np.sqrt(3 * G / (2 * 0.7)) / (2 * np.pi), rel=1e-12)
    q0 = models.pendulum_state(0.0, 0.7)[0]
    Phi_q = system.constraints_q(q0, jnp.asarray(0.0))
    np.testing.assert_allclose(Phi_q @ m.shapes, 0.0, atol=1e-12)
    np.testing.assert_allclose(m.shapes.T @ system.mass(q0) @ m.shapes, np.eye(1), atol=1e-12)
    # inverted: an unstable direction, reported as a negative frequency
    up = fj.modes(system, models.pendulum_state(np.pi, 0.7)[0])
    assert float(up.frequencies[0]) == pytest.approx(-np.sqrt(3 * G / (2 * 0.7)) / (2 * np.pi), rel=1e-10)
    assert float(up.omega_squared[0]) < 0
    # without gravity the pendulum is a rigid-body mode: exactly zero
    free = fj.System(system.bodies, system.joints)
    assert float(fj.modes(free, q).frequencies[0]) == 0.0


def test_redundant_constraints_do_not_remove_modes():
    system = models.pendulum(1.0, 1.0, G)
    doubled = fj.System(system.bodies, system.joints * 2, system.force_elements)
    q = models.pendulum_state(0.0)[0]
    assert float(fj.modes(doubled, q).frequencies[0]) == pytest.approx(float(pendulum_frequency(1.0)), rel=1e-10)


def test_pendulum_frequency_gradient_and_vmap():
    grad = jax.grad(pendulum_frequency)(1.3)
    fd = (pendulum_frequency(1.3 + 1e-6) - pendulum_frequency(1.3 - 1e-6)) / 2e-6
    exact = -0.5 * np.sqrt(3 * G / 2) * 1.3**-1.5 / (2 * np.pi)
    assert float(grad) == pytest.approx(float(fd), rel=1e-7)
    assert float(grad) == pytest.approx(exact, rel=1e-10)
    lengths = jnp.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(
        jax.vmap(pendulum_frequency)(lengths), [pendulum_frequency(x) for x in lengths], rtol=1e-13
    )


@pytest.fixture(scope="module")
def cantilever():
    E, rho, h, L, n = 2e11, 7800.0, 0.01, 1.0, 8
    beam = AncfBeam2D(L, rho, h * h, h**4 / 12, E, n)
    system = fj.System([beam], [fj.AncfClamp(0, 0)])
    return system, straight_beam_coordinates([0.0, 0.0], [L, 0.0], n)


def test_cantilever_ancf_beam_matches_euler_bernoulli_roots(cantilever):
    system, q = cantilever
    beam = system.bodies[0]
    f = np.asarray(fj.modes(system, q, n=3).frequencies)
    ei, rho_a = float(beam.youngs * beam.second_moment), float(beam.rho * beam.area)
    exact = CANTILEVER**2 / (2 * np.pi * float(beam.length) ** 2) * np.sqrt(ei / rho_a)
    assert f[0] == pytest.approx(exact[0], rel=5e-6)
    assert f[1] == pytest.approx(exact[1], rel=2e-4)  # eight cubic elements
    # the same discretization written out independently (Hermite-cubic FE): to round-off
    np.testing.assert_allclose(f, beam_fe_frequencies(ei, rho_a, 1.0, n=3, n_elements=8, root="clamped"), rtol=1e-8)


def test_cantilever_frequency_gradient_wrt_youngs_modulus():
    beam = AncfBeam2D(1.0, 7800.0, 1e-4, 1e-8 / 12, 2e11, 2)
    q = straight_beam_coordinates([0.0, 0.0], [1.0, 0.0], 2)

    def f1(E):
        system = fj.System([eqx.tree_at(lambda b: b.youngs, beam, E)], [fj.AncfClamp(0, 0)])
        return fj.modes(system, q, n=1).frequencies[0]

    E = 2e11
    grad = jax.jvp(f1, (E,), (1.0,))[1]  # forward mode: one parameter
    fd = (f1(E * (1 + 1e-6)) - f1(E * (1 - 1e-6))) / (2e-6 * E)
    assert float(grad) == pytest.approx(float(fd), rel=1e-6)
    assert float(grad) == pytest.approx(float(f1(E)) / (2 * E), rel=1e-8)  # f ~ sqrt(E) for any mesh


def test_flfj_arm_matches_its_frequency_equation():
    k = 1.0
    body = ModalHubBeam(J_HUB, L_ROD, RHO_ROD * A_ROD, E_ROD * A_ROD, E_ROD * I_ROD, k, n_axial=0, n_transverse=4)
    equation = np.asarray(flfj_frequencies(E_ROD * I_ROD, RHO_ROD * A_ROD, L_ROD, k, 4))
    held = fj.System([body], [fj.coordinate_driver(0, 0, fj.ConstantRate(0.0, 0.0))])
    np.testing.assert_allclose(fj.modes(held, jnp.zeros(5)).frequencies, equation, rtol=1e-9)
    # an independent discretization: planar ANCF beam pinned at the root, spring k on the root slope
    n = 4
    beam = AncfBeam2D(L_ROD, RHO_ROD, A_ROD, I_ROD, E_ROD, n)
    spring = fj.PIDJointTorque(0, 0, fj.ConstantRate(0.0, 0.0), k, 0.0, 0.0)
    ancf = fj.System([beam], [fj.AncfPin(0, 0)], [spring])
    f = np.asarray(fj.modes(ancf, straight_beam_coordinates([0.0, 0.0], [L_ROD, 0.0], n), n=2).frequencies)
    assert f[0] == pytest.approx(equation[0], rel=5e-5)  # four cubic elements
    assert f[1] == pytest.approx(equation[1], rel=1e-3)


def test_free_free_beam_has_three_rigid_body_modes():
    beam = AncfBeam2D(1.0, 7800.0, 1e-4, 1e-4**2 / 12, 2e11, 2)
    m = fj.modes(fj.System([beam]), straight_beam_coordinates([0.0, 0.0], [1.0, 0.0], 2), n=4)
    np.testing.assert_array_equal(np.asarray(m.frequencies[:3]), 0.0)
    assert float(m.frequencies[3]) > 10.0


def test_bad_arguments_raise():
    system = models.pendulum()
    q = models.pendulum_state(0.0)[0]
    with pytest.raises(ValueError, match="`q`"):
        fj.modes(system, q[:3])
    with pytest.raises(ValueError, match="`v`"):
        fj.modes(system, q, v=jnp.zeros(2))
    with pytest.raises(ValueError, match="`n`"):
        fj.modes(system, q, n=2)
