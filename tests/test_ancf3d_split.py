"""Spatial ANCF beam, split formulation (no Poisson locking, St-Venant torsion) and the
3D loads and supports: torsion constants, closed-form statics and beam-theory
frequencies at nu = 0.3 with 20 elements, the point moment's virtual work on ANCF and
rigid bodies, large rotations under a tip moment, the distributed load, the full clamp,
gradients against central differences and vmap."""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

import flexjax as fj
from flexjax.bodies.ancf3d import AncfBeam3D
from flexjax.bodies.sections import CircularSection, RectangularSection
from flexjax.joints.ancf3d import AncfClamp3D, AncfSpherical3D
from flexjax.solvers.statics import solve_static

from .helpers import rotation

# aluminium, 1 m, slender (L/h = 100 in the stiff direction): Euler-Bernoulli applies
L, RHO, E, NU = 1.0, 2700.0, 70e9, 0.3
G = E / (2 * (1 + NU))
N = 20
SECTIONS = {"rect_1x4": RectangularSection(0.01, 0.0025), "circle": CircularSection(0.005)}
BETAS = (1.8751040687, 4.6940911330, 7.8547574382)  # cos b cosh b = -1


class Constant(eqx.Module):
    """Constant vector signal whose value is a leaf."""

    value: jax.Array

    def __call__(self, t):
        return self.value


def _props(section):
    Iy, Iz = (float(x) for x in section.second_moments())
    return float(section.area()), Iy, Iz, float(section.torsion_constant())


def _loaded_system(beam, force, moment, load, full=False, follower=False):
    """Cantilever clamped at node 0 with a tip force, a tip moment and a distributed load."""
    return fj.System(
        [beam],
        [AncfClamp3D(0, 0, full=full)],
        [
            fj.PointForce(0, jnp.array([beam.length, 0.0, 0.0]), Constant(force)),
            fj.AppliedMoment3D(0, Constant(moment), node=-1, follower=follower),
            fj.DistributedLoad3D(0, load),
        ],
    )


@eqx.filter_jit
def _tip(beam, force, moment, load, full=False, steps=1, follower=False):
    """Tip position, tip gradients and result code of the static solution."""
    system = _loaded_system(beam, force, moment, load, full, follower)
    sol = solve_static(system, beam.straight_coordinates(), steps)
    return beam.node_position(sol.q, -1), beam.node_gradients(sol.q, -1), sol.result


@eqx.filter_jit
def _stiffness_and_mass(beam):
    q0 = beam.straight_coordinates()
    return jax.hessian(beam.potential_energy)(q0), beam.mass_matrix(q0)


def _twist(F):
    """Rotation of the tip section about x (rad) from its y gradient."""
    return jnp.arctan2(F[2, 1], F[1, 1])


# -- torsion constants ----------------------------------------------------------------
@pytest.mark.parametrize("ratio, beta", [(1.0, 0.1406), (2.0, 0.2287), (4.0, 0.2808), (10.0, 0.3123)])
def test_rectangle_torsion_constant_matches_published_table(ratio, beta):
    # J = beta a c^3 (a >= c); beta from Timoshenko & Goodier (1970), Table in §109
    for w, h in ((0.02 * ratio, 0.02), (0.02, 0.02 * ratio)):  # either side the longer
        J = float(RectangularSection(w, h).torsion_constant())
        assert J / (0.02 * ratio * 0.02**3) == pytest.approx(beta, abs=1.5e-4)


def test_circle_torsion_constant_and_gradient():
    assert float(CircularSection(0.1).torsion_constant()) == pytest.approx(np.pi * 1e-4 / 2, rel=1e-15)
    f = lambda w: RectangularSection(w, 0.01).torsion_constant()
    for w in (0.01, 0.03):  # the square (a tie of max/min) and a 3:1 rectangle
        fd = (f(w + 1e-7) - f(w - 1e-7)) / 2e-7
        assert float(jax.grad(f)(w)) == pytest.approx(float(fd), rel=1e-6)


# -- closed forms at nu = 0.3, 20 elements ----------------------------------------------
@pytest.mark.parametrize("name", list(SECTIONS))
def test_static_closed_forms_at_nu_0_3(name):
    # measured (rect 1:4 / circle): tip y -5.5e-4 / -5.7e-4, tip z -6.2e-4 / -5.7e-4,
    # uniform load -7.3e-4 / -7.6e-4, axial -1.5e-6 (geometric nonlinearity of the load
    # 1e-6 EA), torsion -3e-6 / 3e-12. The continuum element gives -26 % in bending
    # (test_ancf3d.py) and -16 % in torsion on a square (below)
    section = SECTIONS[name]
    A, Iy, Iz, J = _props(section)
    beam = AncfBeam3D(L, RHO, E, section, N, poisson=NU)
    z, e = jnp.zeros(3), jnp.eye(3)
    cases = (  # (force, moment, load), measured response, closed form
        ((1e-6 * E * A * e[0], z, z), lambda r, F: r[0] - L, 1e-6 * L),  # PL/EA
        ((1e-6 * E * Iz * e[1], z, z), lambda r, F: r[1], 1e-6 * L**3 / 3),  # PL^3/3EI_z
        ((1e-6 * E * Iy * e[2], z, z), lambda r, F: r[2], 1e-6 * L**3 / 3),  # PL^3/3EI_y
        ((z, z, 1e-6 * E * Iz * e[1]), lambda r, F: r[1], 1e-6 * L**4 / 8),  # qL^4/8EI_z
        ((z, 1e-6 * G * J * e[0], z), lambda r, F: _twist(F), 1e-6 * L),  # TL/GJ
    )
    for loads, response, reference in cases:
        r, F, result = _tip(beam, *loads)
        assert bool(result == fj.RESULTS.successful)
        assert float(response(r, F)) / reference - 1 == pytest.approx(0.0, abs=1e-2)
        assert abs(float(response(r, F)) / reference - 1) < 1e-3  # the measured level


@pytest.mark.filterwarnings("ignore:AncfBeam3D")
def test_continuum_option_has_no_warping_in_torsion():
    # square section: the linear section field gives G I_p, twist too small by J/I_p = 0.8436
    section = RectangularSection(0.01, 0.01)
    A, Iy, Iz, J = _props(section)
    twists = []
    for formulation in ("split", "continuum"):
        beam = AncfBeam3D(L, RHO, E, section, 4, poisson=NU, formulation=formulation)
        K = np.asarray(_stiffness_and_mass(beam)[0])
        free, tip = np.r_[3:6, 12:60], 48
        f = np.zeros(60)
        f[tip + 8], f[tip + 10] = 0.5, -0.5  # unit moment about x: (e_x x e_y)/2 on r_y, (e_x x e_z)/2 on r_z
        u = np.zeros(60)
        u[free] = np.linalg.solve(K[np.ix_(free, free)], f[free])
        twists.append(u[tip + 8])
    assert twists[0] / (L / (G * J)) == pytest.approx(1.0, abs=1e-4)
    assert twists[1] / twists[0] == pytest.approx(J / (Iy + Iz), rel=1e-4)
    with pytest.warns(UserWarning, match="locks"):
        AncfBeam3D(L, RHO, E, section, 2, poisson=0.33, formulation="continuum")


@pytest.mark.parametrize("name", list(SECTIONS))
def test_bending_and_torsion_frequencies_match_beam_theory(name):
    # measured (rect 1:4): bending y +4.1e-4, +2.8e-3, +6.8e-3; z +4.9e-4, +3.4e-3,
    # +8.0e-3; torsion +2.6e-4 (second order in the element size, from above)
    section = SECTIONS[name]
    A, Iy, Iz, J = _props(section)
    beam = AncfBeam3D(L, RHO, E, section, N, poisson=NU)
    K, M = (np.asarray(x) for x in _stiffness_and_mass(beam))
    free = np.r_[3:6, 12 : 12 * (N + 1)]  # default clamp: r_0, r_0y, r_0z held
    w2 = scipy.linalg.eigh(K[np.ix_(free, free)], M[np.ix_(free, free)], eigvals_only=True, subset_by_index=[0, 14])
    f = np.sqrt(w2) / (2 * np.pi)
    refs = [b**2 * np.sqrt(E * I / (RHO * A * L**4)) / (2 * np.pi) for I in (Iz, Iy) for b in BETAS]
    refs.append(np.sqrt(G * J / (RHO * (Iy + Iz))) / (4 * L))  # fixed-free shaft
    for ref in refs:
        err = f[np.argmin(np.abs(f - ref))] / ref - 1
        assert 0 < err < 1e-2


# -- the point moment ---------------------------------------------------------------------
def _skew(w):
    return jnp.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def test_moment_does_work_on_the_spin_of_a_deformed_node():
    # delta W = M . axial(dF F^-1): a spin dF = W F does M . omega, a stretch dF = S F none
    beam = AncfBeam3D(L, RHO, E, SECTIONS["rect_1x4"], 2)
    q = beam.straight_coordinates() + 0.05 * jax.random.normal(jax.random.PRNGKey(3), (36,))
    M, omega = jnp.array([0.3, -1.2, 0.7]), jnp.array([0.2, 0.5, -0.4])
    force = fj.AppliedMoment3D(0, Constant(M), node=-1)
    (Q,) = force.force((beam,), (q,), (q,), 0.0)
    F = beam.node_gradients(q, -1)

    def virtual(dF):  # nodal-gradient variation of the tip node
        return jnp.zeros(36).at[27:36].set(dF.T.reshape(-1))

    S = jnp.array([[0.3, 0.1, -0.2], [0.1, -0.5, 0.4], [-0.2, 0.4, 0.9]])
    assert float(Q @ virtual(_skew(omega) @ F)) == pytest.approx(float(M @ omega), rel=1e-12)
    assert abs(float(Q @ virtual(S @ F))) < 1e-13
    assert np.all(np.asarray(Q[:27]) == 0)  # only the node's gradients are loaded
    # follower: given in the node's (Gram-Schmidt) axes
    Mb = beam.node_axes(q, -1).T @ M
    (Qf,) = fj.AppliedMoment3D(0, Constant(Mb), node=-1, follower=True).force((beam,), (q,), (q,), 0.0)
    assert np.allclose(Qf, Q, rtol=1e-12, atol=1e-14)


def test_moment_on_a_rigid_body_fixed_and_follower():
    R = jnp.asarray(rotation((1.0, 0.4, -0.3), 0.8))
    q = jnp.concatenate([jnp.array([0.1, 0.2, 0.3]), R.T.reshape(-1)])  # [r0, u, v, w]
    body = fj.RigidBody3D(1.0, (0.1, 0.2, 0.3))
    M, omega = jnp.array([0.3, -1.2, 0.7]), jnp.array([0.2, 0.5, -0.4])
    rigid_rotation = jnp.concatenate([jnp.zeros(3), jnp.cross(omega[None], R.T).reshape(-1)])
    (Q,) = fj.AppliedMoment3D(0, Constant(M)).force((body,), (q,), (q,), 0.0)
    assert float(Q @ rigid_rotation) == pytest.approx(float(M @ omega), rel=1e-12)
    assert np.allclose(Q[:3], 0) and float(Q @ jnp.r_[1.0, 2.0, 3.0, jnp.zeros(9)]) == 0  # no force
    # follower: M given in body axes acts as the fixed moment R M
    (Qf,) = fj.AppliedMoment3D(0, Constant(R.T @ M), follower=True).force((body,), (q,), (q,), 0.0)
    assert np.allclose(Qf, Q, rtol=1e-12, atol=1e-14)


def test_tip_moment_rolls_a_cantilever_into_an_arc():
    # M = EI theta / L about z bends the beam into a circular arc of radius L/theta
    # (exact elastica), theta = pi/2. Measured tip error, 16 elements: (1.7e-3, -1.6e-3) L,
    # end-section rotation -3.1e-3 rad (32: 8.5e-5 L, -1.7e-4 rad; 12: 5.7e-3 L). With
    # integration="full" the bent elements lock (thickness locking): 3.6e-2 L at 12
    section = SECTIONS["circle"]
    A, Iy, Iz, J = _props(section)
    theta = np.pi / 2
    beam = AncfBeam3D(L, RHO, E, section, 16, poisson=NU)
    z = jnp.zeros(3)
    r, F, result = _tip(beam, z, jnp.array([0.0, 0.0, E * Iz * theta / L]), z, steps=4)
    radius = L / theta
    exact = np.array([radius * np.sin(theta), radius * (1 - np.cos(theta)), 0.0])
    assert bool(result == fj.RESULTS.successful)
    assert np.max(np.abs(np.asarray(r) - exact)) < 2.5e-3 * L
    assert float(jnp.arctan2(-F[0, 1], F[1, 1])) == pytest.approx(theta, abs=4e-3)  # section rotation


@pytest.mark.parametrize("follower", [False, True])
def test_moment_force_derivatives_and_vmap_on_beam_and_rigid_body(follower):
    # the Jacobian dQ/dq (what implicit solvers differentiate) against central
    # differences, and vmap over moment values against a loop
    beam = AncfBeam3D(L, RHO, E, SECTIONS["rect_1x4"], 1)
    R = jnp.asarray(rotation((1.0, 0.4, -0.3), 0.8))
    cases = (
        (beam, beam.straight_coordinates() + 0.05 * jax.random.normal(jax.random.PRNGKey(7), (24,)), -1),
        (fj.RigidBody3D(1.0, (0.1, 0.2, 0.3)), jnp.concatenate([jnp.array([0.1, 0.2, 0.3]), R.T.reshape(-1)]), None),
    )
    for body, q, node in cases:

        def Q(qq, M, body=body, node=node):
            force = fj.AppliedMoment3D(0, Constant(M), node=node, follower=follower)
            return force.force((body,), (qq,), (qq,), 0.0)[0]

        Q = jax.jit(Q)
        M = jnp.array([0.3, -1.2, 0.7])
        jac = np.asarray(jax.jit(jax.jacfwd(Q))(q, M))
        for k in (0, 5, q.size - 1):
            dq = jnp.zeros(q.size).at[k].set(1e-6)
            fd = np.asarray((Q(q + dq, M) - Q(q - dq, M)) / 2e-6)
            assert np.allclose(jac[:, k], fd, rtol=1e-6, atol=1e-8 * np.max(np.abs(jac)))
        Ms = jnp.array([[0.3, -1.2, 0.7], [1.0, 0.0, 0.0], [-0.5, 2.0, 0.1]])
        batched = jax.vmap(lambda m, Q=Q, q=q: Q(q, m))(Ms)
        assert np.allclose(batched, jnp.stack([Q(q, m) for m in Ms]), rtol=1e-13, atol=1e-15)


# -- distributed load and full clamp --------------------------------------------------------
def test_distributed_load_equals_gravity_on_the_beam():
    beam = AncfBeam3D(L, RHO, E, SECTIONS["rect_1x4"], 3)
    q = beam.straight_coordinates() + 0.01 * jax.random.normal(jax.random.PRNGKey(5), (48,))
    g = jnp.array([0.3, -9.81, 1.2])
    (Qg,) = fj.Gravity(g).force((beam,), (q,), (q,), 0.0)
    load = fj.DistributedLoad3D(0, RHO * float(beam.section.area()) * g)
    (Ql,) = load.force((beam,), (q,), (q,), 0.0)
    assert np.allclose(Ql, Qg, rtol=1e-12, atol=1e-12 * float(jnp.max(jnp.abs(Qg))))
    resultant = jnp.reshape(Ql, (-1, 4, 3))[:, 0].sum(0)
    assert np.allclose(resultant, L * load.load, rtol=1e-13)
    assert float(load.potential_energy((beam,), (q,), 0.0)) == pytest.approx(
        -L * float(load.load @ beam.center_of_mass(q))
    )


def test_full_clamp_holds_the_axial_gradient():
    beam = AncfBeam3D(L, RHO, E, SECTIONS["rect_1x4"], 2)
    R = jnp.asarray(rotation((0.0, 1.0, 1.0), 0.4))
    full, wall = AncfClamp3D(0, 0, rotation=R, full=True), AncfClamp3D(0, 0, rotation=R)
    qr = beam.straight_coordinates(axes=R)
    assert full.nconstraints == 12 and wall.nconstraints == 9
    assert np.allclose(full.constraint(beam, qr, None, None, 0.0), 0, atol=1e-15)
    stretched = qr.at[3:6].multiply(1.01)
    assert np.allclose(wall.constraint(beam, stretched, None, None, 0.0), 0, atol=1e-15)
    assert float(jnp.linalg.norm(full.constraint(beam, stretched, None, None, 0.0)[3:6])) == pytest.approx(
        0.01, rel=1e-9
    )
    with pytest.raises(ValueError, match="full"):
        AncfClamp3D(0, 0, full=1)
    # bending under a fully fixed root: PL^3/3EI as with the wall clamp (both within 1e-3)
    A, Iy, Iz, J = _props(beam.section)
    P = 1e-6 * E * Iz
    beam = AncfBeam3D(L, RHO, E, SECTIONS["rect_1x4"], N, poisson=NU)
    r, _, _ = _tip(beam, jnp.array([0.0, P, 0.0]), jnp.zeros(3), jnp.zeros(3), full=True)
    assert float(r[1]) / (P * L**3 / (3 * E * Iz)) == pytest.approx(1.0, abs=1e-3)


# -- gradients and vmap ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def response():
    """Tip (twist, y deflection, z deflection) of a 4-element beam with a full clamp, a tip
    moment about x, a tip force in y and a distributed load in z, as a function of
    p = (nu, E, width, moment, load)."""

    def f(p):
        nu, youngs, width, moment, load = p
        beam = AncfBeam3D(L, RHO, youngs, RectangularSection(width, 0.004), 4, poisson=nu)
        force = jnp.array([0.0, 0.5, 0.0])
        r, F, _ = _tip(beam, force, jnp.stack([moment, 0.0, 0.0]), jnp.stack([0.0, 0.0, load]), full=True)
        return jnp.stack([_twist(F), r[1], r[2]])

    return f


P0 = jnp.array([0.33, 70e9, 0.01, 2.0, 3.0])


def test_gradients_match_central_differences(response):
    # d(twist)/d(nu) through G, d(deflection)/d(width) through I, k_s and J, and the load
    # magnitudes of the moment and the distributed load
    jac = np.asarray(jax.jacfwd(response)(P0))
    for k, h in enumerate((1e-5, 1e3, 1e-7, 1e-4, 1e-4)):
        dp = jnp.zeros(5).at[k].set(h)
        fd = np.asarray((response(P0 + dp) - response(P0 - dp)) / (2 * h))
        assert np.allclose(jac[:, k], fd, rtol=1e-5, atol=1e-5 * np.max(np.abs(fd)))
    assert jac[0, 0] > 0 and jac[0, 3] > 0  # twist grows with nu (lower G) and with T


def test_vmap_over_material_and_loads_equals_loop(response):
    batch = jnp.stack([P0, P0 * jnp.array([0.0, 1.2, 0.9, -1.0, 2.0]), P0 * jnp.array([1.4, 0.8, 1.1, 0.5, -1.0])])
    batched = jax.vmap(response)(batch)
    looped = jnp.stack([response(p) for p in batch])
    # vmapped Newton runs every lane to the slowest one's iteration count: equal to rounding
    assert np.allclose(batched, looped, rtol=1e-9, atol=0)
    twist_per_moment = batched[:, 0] / batch[:, 3]
    assert float(twist_per_moment[0]) < float(twist_per_moment[2])  # lower G at nu = 0.46


def test_bad_moment_and_load_input_raises():
    beam = AncfBeam3D(L, RHO, E, SECTIONS["circle"], 2)
    with pytest.raises(ValueError, match="callable"):
        fj.AppliedMoment3D(0, (1.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="node"):
        fj.AppliedMoment3D(0, Constant(jnp.ones(3)), node=1.5)
    with pytest.raises(ValueError, match="node"):  # a beam needs its node
        fj.AppliedMoment3D(0, Constant(jnp.ones(3))).force((beam,), (beam.straight_coordinates(),), None, 0.0)
    with pytest.raises(ValueError, match="load"):
        fj.DistributedLoad3D(0, (1.0, 2.0))
    with pytest.raises(ValueError, match="AncfBeam3D"):
        fj.System(
            [fj.RigidBody3D(1.0, (0.1, 0.1, 0.1))], [], [fj.DistributedLoad3D(0, (0.0, 0.0, 1.0))]
        ).force_elements[0].force((fj.RigidBody3D(1.0, (0.1, 0.1, 0.1)),), (jnp.zeros(12),), None, 0.0)


# -- large rotations: reduced versions of flexjax/experiments/ancf3d_validation.py ----------------
@pytest.mark.slow  # ~60 s with a cold compilation cache: a 4-body polygon, 20 load steps
def test_45_degree_bend_tip_at_p300_against_simo_vu_quoc():
    # Bathe & Bolourchi's 45° bend (R = 100, unit square, E = 1e7) with 4 straight
    # segments of 2 elements; Simo & Vu-Quoc (1986): (58.84, 22.33, 40.08) at P = 300.
    # Measured (59.32, 22.58, 38.95): 2.9 % of the tip displacement, the coarse polygon
    # (11.25° corners) is too stiff. The experiment runs 8 x 2 elements (0.90 %, every
    # component within 0.9 %) and 16 x 2 at P = 300, 450, 600
    from flexjax.models.ancf3d_bend import ancf3d_bend

    system_of, q0, tip = ancf3d_bend(4, 2)
    sol = solve_static(system_of(jnp.asarray(300.0)), q0, 20)
    reference, start = np.array([58.84, 22.33, 40.08]), np.array([70.71067812, 29.28932188, 0.0])
    assert bool(sol.result == fj.RESULTS.successful)
    assert np.linalg.norm(np.asarray(tip(sol.q)) - reference) / np.linalg.norm(reference - start) < 3.5e-2


@pytest.mark.slow  # ~40 s with a cold compilation cache (the generalized-alpha loop)
def test_spinning_rod_conserves_energy_at_rho_inf_1():
    # a rod on a spherical joint, released horizontally with 4 rad/s about the vertical:
    # large 3D rotation; the experiment runs 8 elements for 2 s
    beam = AncfBeam3D(1.0, 1000.0, 5e7, CircularSection(0.01), 2, poisson=NU)
    system = fj.System([beam], [AncfSpherical3D(0, 0)], [fj.Gravity((0.0, 0.0, -9.81))])
    q0 = beam.straight_coordinates()
    v0 = jnp.cross(jnp.array([0.0, 0.0, 4.0])[None], q0.reshape(-1, 3)).reshape(-1)
    traj = fj.simulate(system, q0, v0, 0.3, 1e-3, solver=fj.GeneralizedAlpha(rho_inf=1.0))
    energy = np.asarray(traj.energy)
    assert np.max(np.abs(energy - energy[0])) < 1e-4 * float(beam.total_mass()) * 9.81 * 0.5
    assert float(traj.q[-1, 26]) < -0.1  # the tip has fallen: a large rotation
