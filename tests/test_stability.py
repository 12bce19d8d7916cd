"""Baumgarte stability regions (flexjax.analysis.stability) against hand computations,
closed forms and the actual steps of the integrators."""

import math

import diffrax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from flexjax.analysis import stability as st


def rk4_R(z):
    """Classic RK4 stability polynomial, written out by hand."""
    return 1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24


def roots(alpha, beta):
    """Roots of lambda^2 + 2 alpha lambda + beta^2 = 0 (numpy)."""
    return np.roots([1.0, 2.0 * alpha, beta**2]).astype(complex)


# ------------------------------------------------------------------ stability function


def test_rk4_polynomial_coefficients():
    np.testing.assert_allclose(st.RK4_TABLEAU.coefficients(), [1, 1, 1 / 2, 1 / 6, 1 / 24], rtol=1e-15)
    z = np.array([0.3 + 0.2j, -2.0, 1.5j, -1.1 - 0.7j])
    np.testing.assert_allclose(st.RK4_TABLEAU.stability_function(z), rk4_R(z), rtol=1e-15)
    assert st.RK4_TABLEAU.linear_order() == 4


def test_euler_and_heun_polynomials():
    np.testing.assert_allclose(st.EULER_TABLEAU.coefficients(), [1, 1], atol=0)
    np.testing.assert_allclose(st.HEUN_TABLEAU.coefficients(), [1, 1, 0.5], atol=0)


def test_rk4_axis_limits():
    # R(x) = 1 at x = 0 and at the real root of 1 + x/2 + x^2/6 + x^3/24 (R(x) - 1 = x * cubic)
    cubic = np.roots([1 / 24, 1 / 6, 1 / 2, 1])
    x_ref = cubic[np.abs(cubic.imag) < 1e-12].real.min()
    assert x_ref == pytest.approx(-2.785293563, abs=1e-9)
    assert st.real_axis_limit(st.RK4_TABLEAU) == pytest.approx(x_ref, rel=1e-13)
    # |R(iy)|^2 = 1 - y^6/72 + y^8/576, so |R(iy)| = 1 at y^2 = 8
    assert st.imaginary_axis_limit(st.RK4_TABLEAU) == pytest.approx(2 * math.sqrt(2), rel=1e-13)


@pytest.mark.parametrize(
    "method, real_ref, imag_ref",
    [
        (st.EULER_TABLEAU, -2.0, 0.0),  # |1 + iy| > 1 for every y != 0
        (st.HEUN_TABLEAU, -2.0, 0.0),  # |R(iy)|^2 = 1 + y^4/4
        # Bosh3's R is the RK3 polynomial: |R(iy)|^2 = 1 - y^4/12 + y^6/36 -> y = sqrt(3)
        (st.from_diffrax(diffrax.Bosh3()), None, math.sqrt(3)),
    ],
    ids=["euler", "heun", "bosh3"],
)
def test_axis_limits_other_methods(method, real_ref, imag_ref):
    if real_ref is None:  # RK3: real root of R(x) + 1 = 2 + x + x^2/2 + x^3/6
        r = np.roots([1 / 6, 1 / 2, 1, 2])
        real_ref = r[np.abs(r.imag) < 1e-12].real[0]
    assert st.real_axis_limit(method) == pytest.approx(real_ref, rel=1e-13)
    assert st.imaginary_axis_limit(method) == pytest.approx(imag_ref, rel=1e-13, abs=0)


@pytest.mark.parametrize(
    "solver",
    [diffrax.Tsit5(), diffrax.Dopri5(), diffrax.Bosh3(), diffrax.Heun()],
    ids=["tsit5", "dopri5", "bosh3", "heun"],
)
def test_diffrax_tableau_matches_exp_to_its_order(solver):
    method = st.from_diffrax(solver)
    p = solver.order(None)
    gamma = np.asarray(method.coefficients())
    np.testing.assert_allclose(gamma[: p + 1], [1 / math.factorial(k) for k in range(p + 1)], rtol=1e-13)
    # |R(z) - e^z| = O(z^(p+1)): halving z divides the error by about 2^(p+1) (more when
    # the z^(p+2) term adds up with the leading one, as on the negative real axis here)
    err = lambda z: abs(complex(method.stability_function(z)) - np.exp(z))
    for z in (-0.1, -0.2):
        assert err(z) / err(z / 2) > 0.9 * 2 ** (p + 1)
    z = 0.1 * np.exp(1j * np.array([0.3, 1.7, 2.9]))
    assert np.all(np.abs(np.asarray(method.stability_function(z)) - np.exp(z)) < np.abs(z) ** (p + 1))


@pytest.mark.parametrize("solver", [diffrax.Tsit5(), diffrax.Dopri5()], ids=["tsit5", "dopri5"])
def test_diffrax_one_step_equals_R_of_hJ(solver):
    # one diffrax step on the drift equation y' = J y is the matrix R(hJ)
    alpha, beta, h = 7.0, 19.0, 0.1
    J = np.array([[0.0, 1.0], [-(beta**2), -2.0 * alpha]])
    term = diffrax.ODETerm(lambda t, y, args: jnp.asarray(J) @ y)

    @jax.jit
    def step(y0):  # what diffeqsolve does for one step of a fixed-step run
        state = solver.init(term, 0.0, h, y0, None)
        return solver.step(term, 0.0, h, y0, None, state, made_jump=False)[0]

    P = np.stack([step(jnp.array([1.0, 0.0])), step(jnp.array([0.0, 1.0]))], axis=1)
    gamma = np.asarray(st.from_diffrax(solver).coefficients())
    R = sum(g * np.linalg.matrix_power(h * J, k) for k, g in enumerate(gamma))
    np.testing.assert_allclose(P, R, rtol=1e-13, atol=1e-13)
    rho = max(abs(np.linalg.eigvals(P)))  # distinct roots here: eigenvalues well conditioned
    assert float(st.drift_amplification(st.from_diffrax(solver), alpha, beta, h)) == pytest.approx(rho, rel=1e-12)


# -------------------------------------------------------------------- admissible pairs


def test_hand_checkable_pairs_rk4():
    h = 0.1
    # (10, 100): lambda = -10 +- i sqrt(9900), h lambda = -1 +- 9.95i, far outside
    bad = max(abs(rk4_R(h * roots(10.0, 100.0))))
    assert bad > 300
    assert not bool(st.is_admissible(st.RK4_TABLEAU, 10.0, 100.0, h))
    assert float(st.drift_amplification(st.RK4_TABLEAU, 10.0, 100.0, h)) == pytest.approx(bad, rel=1e-12)
    # (5, 5): double root -5, h lambda = -0.5, R = 0.6067708...
    good = max(abs(rk4_R(h * roots(5.0, 5.0))))
    assert good == pytest.approx(1 - 0.5 + 0.125 - 0.125 / 6 + 0.0625 / 24, rel=1e-6)
    assert bool(st.is_admissible(st.RK4_TABLEAU, 5.0, 5.0, h))
    # (0, 20): undamped, h lambda = +-2i: |R(2i)|^2 = 1 - 64/72 + 256/576 = 5/9
    assert float(st.drift_amplification(st.RK4_TABLEAU, 0.0, 20.0, h)) == pytest.approx(math.sqrt(5 / 9), rel=1e-13)
    assert bool(st.is_admissible(st.RK4_TABLEAU, 0.0, 20.0, h))
    assert not bool(st.is_admissible(st.RK4_TABLEAU, 0.0, 29.0, h))  # 2.9 > 2 sqrt 2


def test_critical_line_edge_is_the_real_axis_limit():
    h, x = 0.05, -st.real_axis_limit(st.RK4_TABLEAU)
    a = x / h  # double root at the real-axis limit
    ok = st.is_admissible(
        st.RK4_TABLEAU, jnp.array([a * (1 - 1e-9), a * (1 + 1e-6)]), jnp.array([a * (1 - 1e-9), a * (1 + 1e-6)]), h
    )
    assert ok.tolist() == [True, False]


def test_region_boundary_closed_forms():
    h = 0.1
    X = -st.real_axis_limit(st.RK4_TABLEAU) / h
    alpha = np.array([0.0, 0.6 * X, 0.8 * X, 0.95 * X])
    bnd = st.region_boundary(st.RK4_TABLEAU, h, alpha)
    # alpha = 0: roots +-i beta, admissible up to the imaginary-axis limit
    assert bnd.beta_upper[0] == pytest.approx(2 * math.sqrt(2) / h, rel=1e-12)
    # X/2 < alpha <= X (real roots): -alpha - sqrt(alpha^2 - beta^2) >= -X  <=>  beta^2 >= 2 alpha X - X^2
    np.testing.assert_allclose(bnd.beta_lower[1:], np.sqrt(2 * alpha[1:] * X - X**2), rtol=1e-11)
    assert bnd.beta_lower[0] == 0.0
    # the grid agrees with the boundary
    grid = st.region_grid(st.RK4_TABLEAU, h, 1.2 * X, 35.0, 121)
    b = np.broadcast_to(np.asarray(grid.beta)[None, :], grid.admissible.shape)
    bg = st.region_boundary(st.RK4_TABLEAU, h, np.asarray(grid.alpha))
    inside = (b >= bg.beta_lower[:, None]) & (b <= bg.beta_upper[:, None])
    np.testing.assert_array_equal(np.asarray(grid.admissible), inside)


def test_recommended_pair_is_admissible_with_margin():
    h, m = 0.1, 0.2
    rec = st.recommend(st.RK4_TABLEAU, h, margin=m)
    # RK4's leftmost region point is its real-axis limit: critical damping at (1 - m) X / h
    x_ref = 2.785293563405282
    assert rec.alpha == pytest.approx((1 - m) * x_ref / h, rel=1e-11)  # recommend shrinks by 1e-12
    assert rec.beta == pytest.approx(rec.alpha, rel=1e-12)
    assert rec.decay_rate == pytest.approx(rec.alpha, rel=1e-12)
    assert rec.amplification == pytest.approx(abs(rk4_R(-(1 - m) * x_ref)), rel=1e-10)
    assert bool(st.is_admissible(st.RK4_TABLEAU, rec.alpha, rec.beta, h))
    # inside with the margin, and the margin is tight (the pair is the fastest such pair)
    assert bool(st.is_admissible(st.RK4_TABLEAU, rec.alpha / (1 - m), rec.beta / (1 - m), h))
    assert not bool(st.is_admissible(st.RK4_TABLEAU, 1.001 * rec.alpha / (1 - m), 1.001 * rec.beta / (1 - m), h))


def polynomial_method(gamma):
    """An explicit RK method with stability polynomial sum_k gamma_k z^k (gamma_0 = 1):
    A = ones on the subdiagonal gives b . A^(k-1) 1 = sum_{i >= k} b_i."""
    s = len(gamma) - 1
    b = [gamma[i] - (gamma[i + 1] if i < s else 0.0) for i in range(1, s + 1)]
    return st.ExplicitRungeKutta(np.diag(np.ones(s - 1), -1), b, np.zeros(s), name="poly")


@pytest.mark.parametrize(
    "method, off_axis",
    [(st.RK4_TABLEAU, False), (polynomial_method([1.0, 1.0, 0.243, 0.04]), True)],
    ids=["rk4", "off-axis-cubic"],
)
def test_recommendation_beats_brute_force_search(method, off_axis):
    # brute force: the fastest-decaying pair on a fine grid whose scaled roots pass a
    # hand-written |R| <= 1 test; the recommendation must match it to the grid resolution
    h, m = 0.1, 0.2
    gamma = np.asarray(method.coefficients())[::-1]
    a, b = np.meshgrid(np.linspace(0, 60, 601), np.linspace(0, 60, 601), indexing="ij")
    lam = [-a + np.sqrt(a**2 - b**2 + 0j), -a - np.sqrt(a**2 - b**2 + 0j)]
    ok = np.all([np.abs(np.polyval(gamma, h * l / (1 - m))) <= 1 for l in lam], axis=0)
    sigma = np.where(ok, -lam[0].real, -np.inf)
    best = np.unravel_index(np.argmax(sigma), sigma.shape)
    rec = st.recommend(method, h, margin=m)
    assert rec.decay_rate == pytest.approx(sigma[best], abs=0.1)  # grid spacing 0.1 1/s
    assert rec.decay_rate >= sigma[best] - 1e-9
    assert bool(st.is_admissible(method, rec.alpha / (1 - m), rec.beta / (1 - m), h))
    assert (rec.beta > rec.alpha + 1.0) == off_axis  # critical damping unless the region bulges left off-axis
    if off_axis:  # then it decays faster than the best critically damped pair
        assert rec.decay_rate > 1.02 * (1 - m) * -st.real_axis_limit(method) / h


def test_recommendation_scales_with_one_over_h():
    method = st.from_diffrax(diffrax.Tsit5())
    r1, r2 = st.recommend(method, 0.1), st.recommend(method, 0.05)
    assert r2.alpha == pytest.approx(2 * r1.alpha, rel=1e-10)
    assert r2.beta == pytest.approx(2 * r1.beta, rel=1e-10)
    assert r2.amplification == pytest.approx(r1.amplification, rel=1e-10)
    assert bool(st.is_admissible(method, r1.alpha / 0.8, r1.beta / 0.8, 0.1))


def test_deadbeat_pairs_hit_zeros_of_R():
    h = 0.1
    # Euler R = 1 + z: zero at -1 -> critical pair 1/h; Heun R = 1 + z + z^2/2: zeros -1 +- i
    assert st.deadbeat_pairs(st.EULER_TABLEAU, h) == [pytest.approx((10.0, 10.0), rel=1e-14)]
    assert st.deadbeat_pairs(st.HEUN_TABLEAU, h) == [pytest.approx((10.0, 10 * math.sqrt(2)), rel=1e-14)]
    # RK4: the zeros of the hand-written quartic with negative real part
    z = np.roots([1 / 24, 1 / 6, 1 / 2, 1, 1])
    z = z[z.imag > 0]
    ref = sorted(((-w.real / h, abs(w) / h) for w in z), key=lambda p: p[1])
    pairs = st.deadbeat_pairs(st.RK4_TABLEAU, h)
    np.testing.assert_allclose(pairs, ref, rtol=1e-12)
    for alpha, beta in pairs:
        assert float(st.drift_amplification(st.RK4_TABLEAU, alpha, beta, h)) < 1e-13


def test_decay_rate_closed_form():
    # real roots: alpha - sqrt(alpha^2 - beta^2); complex: alpha
    np.testing.assert_allclose(
        st.decay_rate(jnp.array([5.0, 5.0, 3.0]), jnp.array([3.0, 5.0, 7.0])), [1.0, 5.0, 3.0], rtol=1e-15
    )


# ------------------------------------------------------------------------- transforms


def test_jit_vmap_and_grad():
    h = 0.1
    alpha, beta = jnp.linspace(0.0, 30.0, 7), jnp.linspace(1.0, 31.0, 7)
    eager = st.is_admissible(st.RK4_TABLEAU, alpha, beta, h)
    jitted = jax.jit(lambda a, b: st.is_admissible(st.RK4_TABLEAU, a, b, h))(alpha, beta)
    mapped = jax.vmap(lambda a, b: st.drift_amplification(st.RK4_TABLEAU, a, b, h))(alpha, beta)
    np.testing.assert_array_equal(eager, jitted)
    np.testing.assert_allclose(mapped, st.drift_amplification(st.RK4_TABLEAU, alpha, beta, h), rtol=1e-15)
    # gradient of the discrete decay factor (a tuning penalty) against central differences
    f = lambda a: st.drift_amplification(st.RK4_TABLEAU, a, 12.0, h)
    fd = (f(4.0 + 1e-6) - f(4.0 - 1e-6)) / 2e-6
    assert float(jax.grad(f)(4.0)) == pytest.approx(float(fd), rel=1e-7)
    assert np.isfinite(float(jax.grad(f)(12.0)))  # critical damping: guarded square root


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: st.is_admissible(st.RK4_TABLEAU, 1.0, 1.0, 0.0), "step h must be positive"),
        (lambda: st.is_admissible(st.RK4_TABLEAU, 1.0, 1.0, -0.1), "step h must be positive"),
        (lambda: st.is_admissible(st.RK4_TABLEAU, -1.0, 1.0, 0.1), "`alpha` must be non-negative"),
        (lambda: st.is_admissible(st.RK4_TABLEAU, 1.0, jnp.array([1.0, -2.0]), 0.1), "`beta` must be non-negative"),
        (lambda: st.recommend(st.RK4_TABLEAU, -0.1), "step h must be positive"),
        (lambda: st.recommend(st.RK4_TABLEAU, 0.1, margin=1.0), "margin must lie in"),
        (lambda: st.region_grid(st.RK4_TABLEAU, 0.0), "step h must be positive"),
        (lambda: st.region_boundary(st.RK4_TABLEAU, 0.1, [-1.0]), "`alpha` must be non-negative"),
        (lambda: st.ExplicitRungeKutta([[0, 0]], [1, 0], [0, 1]), "square s x s"),
        (lambda: st.ExplicitRungeKutta([[0, 0], [1, 0]], [1.0], [0, 1]), "`b` must have length s = 2"),
        (lambda: st.ExplicitRungeKutta([[0, 0], [1, 0]], [0.5, 0.5], [0]), "`c` must have length s = 2"),
        (lambda: st.ExplicitRungeKutta([[0.5, 0], [1, 0]], [0.5, 0.5], [0, 1]), "strictly lower triangular"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_implicit_diffrax_solver_rejected():
    with pytest.raises(TypeError, match="not an explicit Runge-Kutta"):
        st.from_diffrax(diffrax.Kvaerno5())


def test_plots_write_png(tmp_path):
    rec = st.recommend(st.RK4_TABLEAU, 0.1)
    p1 = st.plot_region(st.RK4_TABLEAU, 0.1, tmp_path / "region.png", n=41, pairs={"(10, 100)": (10.0, 100.0)})
    p2 = st.plot_stability_region(
        [st.RK4_TABLEAU, st.HEUN_TABLEAU], tmp_path / "plane.png", h=0.1, pairs={"recommended": (rec.alpha, rec.beta)}
    )
    for p in (p1, p2):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_experiment_summary_contract(tmp_path):
    from flexjax.experiments import baumgarte_region, check_summary

    s = check_summary(baumgarte_region.run(tmp_path, quick=True))
    rec = st.recommend(st.RK4_TABLEAU, s["h"], s["margin"])
    assert s["alpha_recommended"] == rec.alpha and s["beta_recommended"] == rec.beta
    assert s["real_axis_limit"] == pytest.approx(-2.785293563, abs=1e-9)
    assert s["imaginary_axis_limit"] == pytest.approx(2 * math.sqrt(2), rel=1e-12)
    # one actual step of each integrator on the drift equation is R(hJ)
    for key in ("step_matrix_error", "tsit5_step_matrix_error", "dopri5_step_matrix_error", "heun_step_matrix_error"):
        assert s[key] < 1e-13
    assert s["amplification_outside_measured"] == pytest.approx(s["amplification_outside"], rel=1e-12)
    assert s["amplification_outside"] > 1 > s["amplification_recommended"]
    assert s["drift_final_outside"] > 1e10 and s["drift_final_recommended"] < 1e-50
    assert {"region_rk4.png", "region_tsit5.png", "stability_plane_rk4.png", "drift_rk4.png"} <= {
        p.name for p in tmp_path.glob("*.png")
    }
