"""Modes of the elastically constrained (FLFJ) beam and the ModalHubBeam body (seed 000, SPEC "Modal beam on a hub").

References used: the classical roots of the cantilever and pinned-free beam, the
small-stiffness asymptote gamma^4 = 3 k l / EI, an independent Hermite-cubic finite
element model (scipy eigensolver), the paper's P(r_c) values, closed-form integrals of
the axial modes, seed eq. 35-36 (the paper's own mode formula), seed eq. 45-47 written
out by hand, and conservation of energy and angular momentum.
"""

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

import flexjax as fj
from flexjax.analysis import (
    beam_fe_frequencies,
    beam_fe_matrices,
    cantilever_roots,
    critical_stiffness,
    critical_stiffness_coefficient,
    eval_modes,
    flfj_frequencies,
    flfj_roots,
    frequency_ratio,
    hub_beam_fe_matrices,
    integration_matrix,
    mode_coefficients,
    transverse_modes,
)
from flexjax.bodies import ModalHubBeam, SpongArm

from .helpers import central_difference

# the experiments' rod: steel, d = 2 mm, E = 207 GPa, l = 1 m (EI/l = 0.1626 N m, as in the paper)
EI = 207e9 * np.pi * 0.002**4 / 64
RHO_A = 7850 * np.pi * 0.002**2 / 4
EA = 207e9 * np.pi * 0.002**2 / 4
L = 1.0
J_HUB = 0.002

CANTILEVER = [1.87510407, 4.69409113, 7.85475744, 10.99554073]
PINNED_FREE = [3.92660231, 7.06858275, 10.21017612]


def body(k=1.0, **kw):
    kw = {"n_axial": 1, "n_transverse": 4, **kw}
    return ModalHubBeam(J_HUB, L, RHO_A, EA, EI, k=k, **kw)


# -- frequency equation -----------------------------------------------------------------


def test_large_stiffness_gives_cantilever_roots():
    assert np.allclose(cantilever_roots(4), CANTILEVER, rtol=0, atol=1e-8)
    assert np.allclose(flfj_roots(1e9, 2), CANTILEVER[:2], rtol=0, atol=1e-8)


def test_zero_stiffness_gives_rigid_mode_then_pinned_free_roots():
    g = flfj_roots(0.0, 4)
    assert float(g[0]) == 0.0  # the rigid-body mode is counted as mode 1
    assert np.allclose(g[1:], PINNED_FREE, rtol=0, atol=1e-8)
    # continuity: a tiny spring puts mode 1 at (3 kappa)^(1/4), the others near pinned-free
    kappa = 1e-10
    g = flfj_roots(kappa, 3)
    assert float(g[0]) == pytest.approx((3 * kappa) ** 0.25, rel=1e-6)
    assert np.allclose(g[1:], PINNED_FREE[:2], atol=1e-6)


def test_roots_solve_the_unscaled_equation_and_interlace():
    for kappa in (0.05, 1.0, 6.15, 80.0):
        g = np.asarray(flfj_roots(kappa, 4))
        lhs = np.cos(g) * np.sinh(g) - np.cosh(g) * np.sin(g)
        rhs = -(kappa / g) * (np.cos(g) * np.cosh(g) + 1)
        assert np.allclose(lhs, rhs, rtol=1e-10, atol=1e-10 * np.cosh(g))
        lower = np.array([0.0] + PINNED_FREE)
        assert np.all(g > lower) and np.all(g < np.array(CANTILEVER))


def test_root_derivative_matches_finite_difference():
    f = jax.jit(lambda p: flfj_frequencies(p[1], RHO_A, L, p[0], 3))  # p = (k, EI)
    p0 = jnp.array([1.0, EI])
    J = np.asarray(jax.jit(jax.jacfwd(f))(p0))
    for j, h in ((0, 1e-5), (1, 1e-6 * EI)):
        e = jnp.zeros(2).at[j].set(h)
        fd = (np.asarray(f(p0 + e)) - np.asarray(f(p0 - e))) / (2 * h)
        assert np.allclose(J[:, j], fd, rtol=1e-6)


# -- independent finite-element check ---------------------------------------------------


@pytest.mark.parametrize("k", [0.0, 0.1, 1.0, 10.0])
def test_modal_frequencies_match_finite_elements(k):
    K, M = beam_fe_matrices(EI, RHO_A, L, k, n_elements=40)
    lam = scipy.linalg.eigh(K, M, eigvals_only=True, subset_by_index=[0, 3])
    f_fe = np.sqrt(np.maximum(lam, 0)) / (2 * np.pi)
    f = np.asarray(flfj_frequencies(EI, RHO_A, L, k, 4))
    if k == 0:
        assert f[0] == 0 and f_fe[0] < 1e-3  # rigid mode in both (FE: round-off, ~4e-5 Hz)
        f, f_fe = f[1:], f_fe[1:]
    assert np.max(np.abs(f - f_fe) / f_fe) < 5e-3  # the required accuracy (0.5 %)
    assert np.max(np.abs(f - f_fe) / f_fe) < 1e-5  # what 40 cubic elements actually give
    # the numpy (Cholesky) solver of the experiments gives the same (rigid mode: round-off)
    assert np.allclose(
        beam_fe_frequencies(EI, RHO_A, L, k, 4, 40), np.sqrt(np.maximum(lam, 0)) / (2 * np.pi), rtol=1e-9, atol=1e-3
    )


def test_clamped_finite_elements_match_cantilever():
    f_fe = beam_fe_frequencies(EI, RHO_A, L, n=4, n_elements=40, root="clamped")
    f = flfj_frequencies(EI, RHO_A, L, jnp.inf, 4)
    assert np.allclose(f, f_fe, rtol=1e-5)


# -- mode shapes --------------------------------------------------------------------------


def test_mode_shapes_satisfy_boundary_conditions_and_normalization():
    @jax.jit
    def ends(g):
        c = mode_coefficients(g)
        at = lambda s, d: eval_modes(c, jnp.array([s]), d)[0]
        d3_tip = jax.jacfwd(lambda s: eval_modes(c, s[None], 2)[0])(1.0)
        return at(0.0, 0), at(0.0, 1), at(0.0, 2), at(1.0, 2), d3_tip

    for kappa in (0.0, 0.3, 6.15, jnp.inf):
        g = flfj_roots(kappa, 4)
        phi0, d1, d2, d2_tip, d3_tip = ends(g)
        assert np.allclose(phi0, 0, atol=1e-12)
        if np.isfinite(kappa):
            assert np.allclose(d2, kappa * d1, atol=1e-9 * (1 + kappa))  # EI w''(0) = k w'(0)
        else:
            assert np.allclose(d1, 0, atol=1e-9)
        assert np.allclose(d2_tip, 0, atol=1e-9) and np.allclose(d3_tip, 0, atol=1e-8)
        # independent quadrature: numpy Gauss-Legendre, 200 points
        x, w = np.polynomial.legendre.leggauss(200)
        s, w = 0.5 * (x + 1), 0.5 * w
        Phi = np.asarray(transverse_modes(g, s))
        assert np.allclose(Phi.T @ (w[:, None] * Phi), np.eye(4), atol=1e-12)
        assert np.all(Phi[-1] > 0)


def test_mode_shape_matches_seed_eq_35_36():
    kappa = 6.15
    g = np.asarray(flfj_roots(kappa, 3))
    s = np.linspace(0, 1, 11)
    delta = np.cos(g) * np.sinh(g) - np.cosh(g) * np.sin(g)
    xi = (1 + np.cos(g) * np.cosh(g) + np.sin(g) * np.sinh(g)) / delta
    zeta = (1 + np.cos(g) * np.cosh(g) - np.sin(g) * np.sinh(g)) / delta
    u = g[None] * s[:, None]
    paper = np.cos(u) - np.cosh(u) + xi * np.sin(u) + zeta * np.sinh(u)
    ours = np.asarray(transverse_modes(g, s))
    scale = ours[-1] / paper[-1]
    assert np.allclose(paper * scale, ours, atol=1e-9)


def test_integration_matrix_is_exact_for_polynomials():
    x, _ = np.polynomial.legendre.leggauss(40)
    s = 0.5 * (x + 1)
    A = np.asarray(integration_matrix(40))
    assert np.allclose(A @ (7 * s**6 - 2 * s), s**7 - s**2, atol=1e-14)


# -- critical stiffness -----------------------------------------------------------------


def test_critical_stiffness_coefficients_reproduce_the_paper():
    P = np.asarray(critical_stiffness_coefficient(jnp.array([0.95, 0.97, 0.99])))
    paper = np.array([37.1361, 63.8008, 197.1245])
    assert np.allclose(P, paper, rtol=1e-4)  # measured: 2.0e-5, 4.5e-5, 7.6e-6 relative
    # consistency with the root finder: k_c = P n gives r = r_c for any n (Fig. 9 is linear)
    ratio = jax.jit(jax.vmap(frequency_ratio))
    for n in (0.0813, 0.1626, 0.3252):
        assert np.allclose(ratio(jnp.asarray(P) * n, jnp.full(3, n)), [0.95, 0.97, 0.99], rtol=0, atol=1e-12)
    assert float(critical_stiffness(0.95, EI, L)) == pytest.approx(P[0] * EI / L, rel=1e-14)


# -- ModalHubBeam constants and equations -----------------------------------------------


@pytest.fixture(scope="module")
def beam():
    return body(k=1.0, n_axial=2, n_transverse=4)


def test_constants_against_closed_forms(beam):
    c = eqx.filter_jit(lambda b: b.constants())(beam)
    m = RHO_A * L
    w = (2 * np.arange(1, 3) - 1) * np.pi / (2 * L)
    assert float(c.J1) == pytest.approx(RHO_A * L**3 / 3, rel=1e-14)
    assert np.allclose(c.M1, m * np.eye(2), atol=1e-14 * m)
    assert np.allclose(c.K1, EA * L * np.diag(w**2), rtol=1e-12, atol=1e-10 * EA)
    assert np.allclose(c.U1, RHO_A * np.sqrt(2) * np.array([1.0, -1.0]) / w**2, rtol=1e-12)
    # modes orthogonal in mass and in stiffness (root spring included): K2 = diag(omega^2) m
    omega = 2 * np.pi * np.asarray(eqx.filter_jit(lambda b: b.frequencies())(beam))
    assert np.allclose(c.M2, m * np.eye(4), atol=1e-13 * m)
    assert np.allclose(c.K2 / m, np.diag(omega**2), rtol=1e-10, atol=1e-10 * omega[-1] ** 2)
    # D = int rho A x S(x) dx = int rho A (l^2 - x^2)/2 Phi'^T Phi' dx (by parts), 200-point Gauss
    x, wq = np.polynomial.legendre.leggauss(200)
    s, wq = 0.5 * (x + 1), 0.5 * wq * L
    d = np.asarray(transverse_modes(beam.gamma, s, 1)) / L
    D_parts = np.einsum("g,gi,gj->ij", RHO_A * wq * (L**2 - (L * s) ** 2) / 2, d, d)
    assert np.allclose(c.D, D_parts, rtol=1e-10, atol=1e-12 * np.abs(D_parts).max())
    phi2 = np.asarray(transverse_modes(beam.gamma, s))
    phi1 = np.sqrt(2) * np.sin(np.outer(L * s, w))
    assert np.allclose(c.R, np.einsum("g,gi,gj->ij", RHO_A * wq, phi1, phi2), atol=1e-12 * m)
    assert np.allclose(c.U2, (RHO_A * wq * L * s) @ phi2, rtol=1e-11)


@pytest.mark.parametrize("wc", [True, False])
def test_lagrangian_reproduces_seed_eq_45_47(wc):
    b = body(k=1.0, n_axial=2, n_transverse=3, wc=wc)
    rng = np.random.default_rng(0)
    q = jnp.asarray(np.concatenate([[0.4], 1e-4 * rng.normal(size=2), 1e-2 * rng.normal(size=3)]))
    v = jnp.asarray(np.concatenate([[1.3], 1e-2 * rng.normal(size=2), 0.1 * rng.normal(size=3)]))
    Mq, F, (M, G, K, Q) = eqx.filter_jit(lambda b: (b.mass_matrix(q), b.force(q, v, 0.0), b.paper_matrices(q, v)))(b)
    assert np.allclose(Mq, M, rtol=1e-13, atol=1e-16)
    assert np.allclose(F, Q - 2 * v[0] * G @ v - K @ q, rtol=1e-11, atol=1e-11 * np.abs(F).max())


def test_exact_and_paper_kinetic_energy_differ_at_higher_order():
    bp, be = body(n_axial=1, n_transverse=3), body(n_axial=1, n_transverse=3, kinetic="exact")

    @jax.jit
    def diff(eps):
        q = jnp.stack([0.2, 0.0, eps, -0.5 * eps, 0.2 * eps])
        v = jnp.stack([2.0, 0.0, 10 * eps, 3 * eps, -eps])
        return be.kinetic_energy(q, v) - bp.kinetic_energy(q, v)

    diffs = [float(diff(eps)) for eps in (1e-2, 5e-3)]
    # the first neglected terms are cubic in the deformation (2 theta_dot (w_c w2_dot - w2 wc_dot))
    assert diffs[0] / diffs[1] == pytest.approx(8, rel=0.02)


def test_position_and_center_of_mass():
    b = body(n_axial=1, n_transverse=3)
    position, com = eqx.filter_jit(b.position), eqx.filter_jit(b.center_of_mass)
    th = 0.7
    R = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    q0 = jnp.array([th, 0.0, 0.0, 0.0, 0.0])
    assert np.allclose(position(q0, jnp.array([L])), R @ [L, 0], atol=1e-15)
    assert np.allclose(com(q0), R @ [L / 2, 0], atol=1e-14)
    q = q0.at[2].set(0.01)  # first transverse mode, 1 cm
    tip_w = float(transverse_modes(b.gamma, jnp.array([1.0]))[0, 0]) * 0.01
    # axial shortening w_c(l) = -q^2/2 int_0^l phi'^2 dx (eq. 4), by 200-point numpy Gauss
    x, w = np.polynomial.legendre.leggauss(200)
    d = np.asarray(transverse_modes(b.gamma, 0.5 * (x + 1), 1))[:, 0] / L
    wc_tip = -0.5 * 0.01**2 * np.sum(0.5 * L * w * d**2)
    tip = R.T @ np.asarray(position(q, jnp.array([L])))
    assert tip[1] == pytest.approx(tip_w, rel=1e-12)
    assert tip[0] - L == pytest.approx(wc_tip, rel=1e-9)
    assert np.allclose(b.axes(q), R)


def _linear_frequencies(b):
    """Frequencies (Hz) of a body linearized about rest: M(0), K = -dQ/dq(0)."""
    q = jnp.zeros(b.ncoords)
    M, K = eqx.filter_jit(lambda b: (b.mass_matrix(q), -jax.jacfwd(lambda x: b.force(x, q, 0.0))(q)))(b)
    lam = scipy.linalg.eigh(np.asarray(K), np.asarray(M), eigvals_only=True)
    return np.sqrt(np.maximum(lam, 0)) / (2 * np.pi)


def _fe_frequencies(**kw):
    K, M = hub_beam_fe_matrices(ei=EI, rho_a=RHO_A, length=L, n_elements=60, **kw)
    return np.sqrt(np.maximum(scipy.linalg.eigh(K, M, eigvals_only=True), 0)) / (2 * np.pi)


def test_free_hub_linearization_matches_finite_element_arm():
    # hub free to turn: hub-beam coupling (U2, J1, J_H) against an FE model of the whole arm
    f = _linear_frequencies(body(k=1.0, n_axial=0, n_transverse=4))
    f_fe = _fe_frequencies(hub_inertia=J_HUB, k=1.0, root="elastic")
    assert f[0] == pytest.approx(0, abs=1e-6)  # free rotation
    assert np.allclose(f[1:4], f_fe[1:4], rtol=1e-6)
    clamped = ModalHubBeam(J_HUB, L, RHO_A, EA, EI, n_axial=0, n_transverse=4, root="clamped")
    assert np.allclose(
        _linear_frequencies(clamped)[1:4], _fe_frequencies(hub_inertia=J_HUB, root="clamped")[1:4], rtol=2e-6
    )


def test_spong_arm_is_the_same_physics_in_a_poorer_basis():
    # rotor J + spring k + clamped beam on a massless link hub = the FLFJ arm (hub J, root spring k)
    f_fe_spong = _fe_frequencies(hub_inertia=0.0, k=1.0, root="clamped", rotor_inertia=J_HUB)
    f_fe_flfj = _fe_frequencies(hub_inertia=J_HUB, k=1.0, root="elastic")
    assert np.allclose(f_fe_spong[1:5], f_fe_flfj[1:5], rtol=1e-12)
    beam = ModalHubBeam(0.0, L, RHO_A, EA, EI, n_axial=0, n_transverse=4, root="clamped")
    f_spong = _linear_frequencies(SpongArm(J_HUB, 1.0, beam))
    f_flfj = _linear_frequencies(body(k=1.0, n_axial=0, n_transverse=4))
    err_spong = np.abs(f_spong[1:4] - f_fe_flfj[1:4]) / f_fe_flfj[1:4]
    err_flfj = np.abs(f_flfj[1:4] - f_fe_flfj[1:4]) / f_fe_flfj[1:4]
    assert np.all(err_spong < 5e-4)
    assert err_flfj[2] < err_spong[2] / 10  # with the same 4 modes, the FLFJ basis is better
    with pytest.raises(ValueError, match="root='clamped'"):
        SpongArm(J_HUB, 1.0, body())
    with pytest.raises(ValueError, match="rotor_inertia"):
        SpongArm(0.0, 1.0, beam)


# -- dynamics: energy, momentum, gradients, transforms ----------------------------------


@pytest.fixture(scope="module")
def free_run():
    """Undamped, unforced hub-beam: hub spinning at 1 rad/s, first mode displaced 1 cm."""
    b = body(k=1.0, n_axial=0, n_transverse=3)
    q0 = jnp.zeros(4).at[1].set(0.01)
    v0 = jnp.zeros(4).at[0].set(1.0)
    tr = fj.simulate_ode(fj.System([b]), q0, v0, 2.0, rtol=1e-10, atol=1e-12, ts=jnp.linspace(0, 2.0, 41))
    return b, tr


def test_energy_and_angular_momentum_are_conserved(free_run):
    b, tr = free_run
    e = np.asarray(tr.energy)
    assert np.max(np.abs(e - e[0])) / e[0] < 1e-9
    # angular momentum about the pivot H = dT/d(theta_dot): no external torque
    H = np.asarray(jax.jit(jax.vmap(lambda q, v: jax.grad(b.kinetic_energy, argnums=1)(q, v)[0]))(tr.q, tr.v))
    assert np.max(np.abs(H - H[0])) / abs(H[0]) < 1e-9
    assert np.ptp(np.asarray(tr.q[:, 1])) > 0.01  # the beam really vibrates


def test_joint_damping_dissipates(free_run):
    b, tr = free_run
    damped = eqx.tree_at(
        lambda x: x.c, b, jnp.asarray(0.05, float)
    )  # same dtype: no recompilation  # c does not enter the modes: tree_at is fine
    trd = fj.simulate_ode(fj.System([damped]), tr.q[0], tr.v[0], 2.0, rtol=1e-10, atol=1e-12, ts=tr.t)
    e = np.asarray(trd.energy)
    assert np.all(np.diff(e) < 1e-14)
    # the vibration dies out; the spin (angular momentum) cannot be removed by internal damping
    assert np.ptp(np.asarray(trd.q[-10:, 1])) < 0.1 * np.ptp(np.asarray(tr.q[-10:, 1]))


def test_gradient_of_final_coordinate_matches_finite_difference():
    q0 = jnp.zeros(4).at[1].set(0.01)
    v0 = jnp.zeros(4).at[0].set(1.0)

    def final(ei):
        b = ModalHubBeam(J_HUB, L, RHO_A, EA, ei, k=1.0, n_axial=0, n_transverse=3)
        tr = fj.simulate_ode(
            fj.System([b]),
            q0,
            v0,
            0.5,
            rtol=None,
            dt0=2e-3,
            ts=jnp.array([0.5]),
            adjoint=diffrax.ForwardMode(),
            consistent=False,
        )
        return tr.q[-1, 1]

    jvp = lambda ei: jax.jvp(final, (ei,), (jnp.ones(()),))
    _, grad = jvp(jnp.asarray(EI))
    h = 1e-5 * EI
    fd = (jvp(jnp.asarray(EI + h))[0] - jvp(jnp.asarray(EI - h))[0]) / (2 * h)
    assert abs(float(grad - fd)) / abs(float(fd)) < 1e-5


Q_TEST = jnp.array([0.3, 1e-5, 0.004, -0.001, 0.0005])
V_TEST = jnp.array([0.8, 0.0, 0.02, 0.1, -0.05])


def _accel(b):
    return jnp.linalg.solve(b.mass_matrix(Q_TEST), b.force(Q_TEST, V_TEST, 0.0))


def _accel_and_freqs(k):
    b = body(k=k, n_axial=1, n_transverse=3)
    return jnp.concatenate([_accel(b), b.frequencies()])


_accel_and_freqs_jit = jax.jit(_accel_and_freqs)  # shared by the two tests below (one compile)


def test_vmap_over_stiffness_equals_loop():
    ks = jnp.array([0.0, 0.1, 1.0, 25.0])
    batched = jax.jit(jax.vmap(_accel_and_freqs))(ks)
    looped = jnp.stack([_accel_and_freqs_jit(k) for k in ks])
    assert np.allclose(batched, looped, rtol=1e-12, atol=1e-12)


def test_leaf_gradient_equals_rebuilt_gradient_and_stale_cache_raises():
    b0 = body(k=1.0, n_axial=1, n_transverse=3)
    acc = lambda b: _accel(b)[3]
    leaf = lambda k: acc(eqx.tree_at(lambda b: b.k, b0, k))
    g_leaf = jax.jit(jax.grad(leaf))(1.0)
    fd = central_difference(lambda k: _accel_and_freqs_jit(jnp.asarray(k, float))[3], 1.0, 1e-5)
    assert float(g_leaf) == pytest.approx(float(fd), rel=1e-6)
    stale = eqx.tree_at(lambda b: b.k, b0, jnp.asarray(2.0, float))
    with pytest.raises(Exception, match="cached roots"):  # the check survives jit in the tables
        jax.block_until_ready(eqx.filter_jit(lambda b: b.tables().phi2)(stale))


def test_clamped_root_uses_cantilever_modes():
    b = ModalHubBeam(J_HUB, L, RHO_A, EA, EI, n_axial=1, n_transverse=3, root="clamped")
    roots, slope = eqx.filter_jit(lambda b: (b.roots(), b.tables().dphi2_root))(b)
    assert np.allclose(roots, CANTILEVER[:3], atol=1e-8)
    assert np.allclose(slope, 0, atol=1e-9)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"k": -1.0}, "`k` must be >= 0"),
        ({"length": 0.0}, "`length` must be > 0"),
        ({"ei": -1.0}, "`ei` must be > 0"),
        ({"n_transverse": 0}, "n_transverse"),
        ({"n_axial": -1}, "n_axial"),
        ({"k": None}, "needs the joint stiffness"),
        ({"k": 0.0, "hub_inertia": 0.0}, "singular"),
        ({"root": "clamped"}, "no joint spring"),
        ({"kinetic": "full"}, "kinetic"),
        ({"k": float("inf")}, "finite"),
    ],
)
def test_bad_input_raises(kwargs, match, user_facing_checks):
    args = {"hub_inertia": J_HUB, "length": L, "rho_a": RHO_A, "ea": EA, "ei": EI, "k": 1.0, **kwargs}
    with pytest.raises(ValueError, match=match):
        ModalHubBeam(**args)
