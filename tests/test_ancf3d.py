"""Spatial ANCF beam (fully parameterized, seed 001 eq. 1-14): exact mass properties,
rigid-motion invariance, small-deflection beam theory and frequencies (with the measured
mesh convergence and Poisson locking), large deflection against the planar element,
stresses, joints, gradients, batching and input errors."""

import warnings

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

import flexjax as fj
from flexjax.bodies.ancf2d import AncfBeam2D
from flexjax.bodies.ancf3d import AncfBeam3D, straight_beam_coordinates_3d
from flexjax.bodies.sections import CircularSection, RectangularSection
from flexjax.joints.ancf import AncfClamp
from flexjax.joints.ancf3d import AncfClamp3D, AncfRevolute3D, AncfRigidConnection3D, AncfSpherical3D
from flexjax.solvers.statics import solve_static

from .helpers import central_difference, rotation

# steel bar, 1 m, 12 mm (along y) x 10 mm (along z): slender (L/h = 100)
L, RHO, E = 1.0, 7800.0, 2.1e11
B, H = 0.012, 0.010
SECTION = RectangularSection(B, H)
A = B * H
I_Z, I_Y = H * B**3 / 12, B * H**3 / 12  # bending in y (about z), bending in z (about y)
BETA1 = 1.8751040687  # first root of cos b cosh b = -1


class Constant(eqx.Module):
    """Constant vector signal whose value is a leaf (no recompilation per value)."""

    value: jax.Array

    def __call__(self, t):
        return self.value


def _rigid_velocity(q, omega):
    """Coordinate velocity of a rigid rotation about the origin: every nodal vector
    (position and gradients) turns as $\\dot a = \\omega \\times a$."""
    return jnp.cross(omega[None, :], jnp.reshape(q, (-1, 3))).reshape(-1)


@eqx.filter_jit
def _energy_and_force(beam, q):
    return beam.potential_energy(q), beam.force(q, q, 0.0)


@eqx.filter_jit
def _mass(beam, q):
    return beam.mass_matrix(q)


@eqx.filter_jit
def _stiffness_and_mass(beam):
    q0 = beam.straight_coordinates()
    return jax.hessian(beam.potential_energy)(q0), beam.mass_matrix(q0)


def _clamped(beam):
    """Free coordinates of a beam clamped at node 0 (r_0, r_0y, r_0z fixed; r_0x free)."""
    n = beam.n_elements
    return np.r_[3:6, 12 : 12 * (n + 1)]


def linear_cantilever(beam):
    """Small-deflection tip displacements under unit tip loads in y, z, x and the first
    bending frequency (Hz), from the stiffness at the reference state."""
    K, M = (np.asarray(x) for x in _stiffness_and_mass(beam))
    free, tip = _clamped(beam), 12 * beam.n_elements
    Kf, Mf = K[np.ix_(free, free)], M[np.ix_(free, free)]
    out = []
    for d in (1, 2, 0):
        f = np.zeros(K.shape[0])
        f[tip + d] = 1.0
        u = np.zeros(K.shape[0])
        u[free] = np.linalg.solve(Kf, f[free])
        out.append(u[tip + d])
    w2 = scipy.linalg.eigh(Kf, Mf, eigvals_only=True, subset_by_index=[0, 0])[0]
    return out, np.sqrt(w2) / (2 * np.pi)


@pytest.fixture(scope="module")
def linear_errors():
    """Relative errors (y, z, axial, f1) per mesh and Poisson ratio of the continuum
    formulation (the seed's element; the split default is in test_ancf3d_split.py)."""
    refs = (L**3 / (3 * E * I_Z), L**3 / (3 * E * I_Y), L / (E * A))
    f1 = BETA1**2 * np.sqrt(E * min(I_Y, I_Z) / (RHO * A * L**4)) / (2 * np.pi)
    out = {}
    for n in (4, 8, 16):
        for nu in (0.0, 0.3):
            with warnings.catch_warnings():  # the locking warning: measured here on purpose
                warnings.simplefilter("ignore")
                beam = AncfBeam3D(L, RHO, E, SECTION, n, poisson=nu, formulation="continuum")
            tips, f = linear_cantilever(beam)
            out[n, nu] = [t / r - 1 for t, r in zip(tips, refs, strict=True)] + [f / f1 - 1]
    return out


# -- mass -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "section, inertia_cc",
    [
        (SECTION, lambda m: m * np.array([(B**2 + H**2) / 12, H**2 / 12, B**2 / 12])),
        (CircularSection(0.006), lambda m: m * np.array([0.006**2 / 2, 0.006**2 / 4, 0.006**2 / 4])),
    ],
)
def test_mass_matrix_gives_exact_mass_and_rigid_body_inertia(section, inertia_cc):
    beam = AncfBeam3D(L, RHO, E, section, 3)
    q = beam.straight_coordinates()
    M = _mass(beam, q)
    m = float(beam.total_mass())
    assert m == pytest.approx(RHO * float(section.area()) * L, rel=1e-14)
    U = jnp.tile(jnp.concatenate([jnp.eye(3), jnp.zeros((9, 3))]), (beam.n_elements + 1, 1))  # translations
    assert np.allclose(U.T @ M @ U, m * np.eye(3), rtol=1e-13, atol=0)
    # rotation about the origin (the root): I_O = I_c + parallel-axis term for c = (L/2, 0, 0)
    V = jnp.stack([_rigid_velocity(q, w) for w in jnp.eye(3)], axis=1)
    I_O = np.diag(inertia_cc(m) + m * np.array([0.0, L**2 / 12 + L**2 / 4, L**2 / 12 + L**2 / 4]))
    assert np.allclose(V.T @ M @ V, I_O, rtol=1e-12, atol=1e-15 * m)
    # the centre of mass used by Gravity is the first moment of M for any q
    qd = q + 0.05 * jax.random.normal(jax.random.PRNGKey(0), q.shape)
    assert np.allclose(beam.center_of_mass(qd), U.T @ M @ qd / m, rtol=1e-12, atol=1e-14)
    assert np.allclose(M, M.T) and float(jnp.linalg.eigvalsh(M)[0]) > 0


def test_gravity_resultant_is_weight():
    beam = AncfBeam3D(L, RHO, E, SECTION, 2)
    q = beam.straight_coordinates()
    system = fj.System([beam], force_elements=[fj.Gravity((0.0, 0.0, -9.81))])
    (Q,) = system.force_elements[0].force((beam,), (q,), (q,), 0.0)
    resultant = jnp.reshape(Q, (-1, 4, 3))[:, 0].sum(0)  # translational rows
    assert np.allclose(resultant, [0, 0, -9.81 * float(beam.total_mass())], rtol=1e-13, atol=1e-12)


# -- invariance -------------------------------------------------------------------
@pytest.mark.parametrize("formulation", ["split", "continuum"])
@pytest.mark.parametrize("integration", ["full", "selective"])
@pytest.mark.filterwarnings("ignore:AncfBeam3D")
def test_rigid_motion_gives_no_elastic_force_and_energy_is_objective(integration, formulation):
    beam = AncfBeam3D(L, RHO, E, SECTION, 4, poisson=0.3, integration=integration, formulation=formulation)
    R = jnp.asarray(rotation((1.0, -2.0, 0.5), 1.3))
    q = beam.straight_coordinates((0.4, -0.2, 1.1), R)
    scale = E * A
    U, Q = _energy_and_force(beam, q)
    assert float(jnp.max(jnp.abs(Q))) < 1e-12 * scale
    assert float(U) < 1e-20 * scale
    # a deformed state, rotated: same energy, rotated force
    qd = beam.straight_coordinates() + 0.01 * jax.random.normal(jax.random.PRNGKey(1), q.shape)
    qr = (jnp.reshape(qd, (-1, 3)) @ R.T).reshape(-1)
    (Ud, Qd), (Ur, Qr) = _energy_and_force(beam, qd), _energy_and_force(beam, qr)
    assert float(Ur) == pytest.approx(float(Ud), rel=1e-11)
    assert np.allclose(
        Qr, (jnp.reshape(Qd, (-1, 3)) @ R.T).reshape(-1), rtol=1e-9, atol=1e-9 * float(jnp.max(jnp.abs(Qd)))
    )


@pytest.mark.parametrize("formulation", ["split", "continuum"])
@pytest.mark.parametrize("integration", ["full", "selective"])
@pytest.mark.filterwarnings("ignore:AncfBeam3D")
def test_free_beam_has_exactly_six_zero_energy_modes(integration, formulation):
    beam = AncfBeam3D(L, RHO, E, SECTION, 4, poisson=0.3, integration=integration, formulation=formulation)
    K = np.asarray(_stiffness_and_mass(beam)[0])
    ev = np.linalg.eigvalsh(K)
    assert np.all(np.abs(ev[:6]) < 1e-6 * ev[-1]) and ev[6] > 1e-9 * ev[-1]  # no hourglass modes


# -- small deflections: beam theory -------------------------------------------------
def test_cantilever_tip_loads_converge_to_beam_theory_at_nu_0(linear_errors):
    # measured (y, z): 4 el. -1.555e-2, -1.558e-2; 8 el. -3.834e-3, -3.856e-3;
    # 16 el. -9.05e-4, -9.27e-4. The cross-section gradients are linear along an element,
    # so the curvature is constant per element: second order, from the stiff side.
    for d in (0, 1):
        e4, e8, e16 = (linear_errors[n, 0.0][d] for n in (4, 8, 16))
        assert -1.6e-2 < e4 < e8 < e16 < 0
        assert abs(e16) < 1e-3
        assert 3.8 < e4 / e8 < 4.4 and 3.8 < e8 / e16 < 4.4
    for n in (4, 8, 16):  # axial: exact (PL/EA) at nu = 0
        assert abs(linear_errors[n, 0.0][2]) < 1e-12


def test_poisson_locking_is_measured(linear_errors):
    # with nu != 0 the linear-in-(y, z) section cannot contract non-uniformly, so bending
    # sees the laterally constrained modulus E (1 - nu)/((1 + nu)(1 - 2 nu)): with nu = 0.3
    # the tip deflection is 25.7 % too small on every mesh (measured -0.2687, -0.2600, -0.2578)
    locked = (1 + 0.3) * (1 - 0.6) / (1 - 0.3)
    for n in (4, 8, 16):
        e_y, e_z, e_x, e_f = linear_errors[n, 0.3]
        assert (1 + e_y) / (1 + linear_errors[n, 0.0][0]) == pytest.approx(locked, rel=1e-3)
        assert (1 + e_z) / (1 + linear_errors[n, 0.0][1]) == pytest.approx(locked, rel=1e-3)
        assert 0.15 < e_f < 0.18  # frequency 16 % too high
    # axial: the clamp holds the section (no lateral contraction at the wall), a local
    # O(h) effect: measured -1.86e-2, -9.29e-3, -4.66e-3
    e = [linear_errors[n, 0.3][2] for n in (4, 8, 16)]
    assert -2e-2 < e[0] < e[1] < e[2] < 0 and e[2] > -5e-3


def test_first_bending_frequency_matches_euler_bernoulli(linear_errors):
    # measured 1.218e-2, 2.976e-3, 6.99e-4 (4, 8, 16 elements); rotary inertia and shear
    # of the continuum element are O((h/L)^2) = 1e-4
    f4, f8, f16 = (linear_errors[n, 0.0][3] for n in (4, 8, 16))
    assert 0 < f16 < f8 < f4 < 1.3e-2 and f8 < 3.1e-3 and f16 < 7.5e-4


# -- the System path: statics, gradients, batching ------------------------------------
def _cantilever_system(beam, load):
    force = fj.PointForce(0, jnp.array([beam.length, 0.0, 0.0]), Constant(jnp.asarray(load, float)))
    return fj.System([beam], [AncfClamp3D(0, 0)], [force])


P_SMALL = 1e-4 * E * I_Y / L**2  # deflection 3e-5 L: linear to ~1e-9


@pytest.fixture(scope="module")
def tip_z_of_youngs():
    def tip_z(youngs):
        beam = AncfBeam3D(L, RHO, youngs, SECTION, 2)
        sol = solve_static(_cantilever_system(beam, (0.0, 0.0, P_SMALL)), beam.straight_coordinates(), 1)
        return beam.node_position(sol.q, -1)[2]

    return tip_z


def test_solve_static_matches_linear_solution_and_clamp_reaction(tip_z_of_youngs):
    beam = AncfBeam3D(L, RHO, E, SECTION, 2)
    w_lin = linear_cantilever(beam)[0][1] * P_SMALL
    assert float(tip_z_of_youngs(E)) == pytest.approx(w_lin, rel=1e-6)
    sol = solve_static(_cantilever_system(beam, (0.0, 0.0, P_SMALL)), beam.straight_coordinates(), 1)
    assert np.allclose(sol.lam[:3], [0, 0, P_SMALL], rtol=1e-8, atol=1e-10 * P_SMALL)  # wall force


def test_gradient_wrt_youngs_matches_central_difference(tip_z_of_youngs):
    grad = float(jax.grad(tip_z_of_youngs)(E))
    fd = float(central_difference(tip_z_of_youngs, E, 1e-4 * E))
    assert grad == pytest.approx(fd, rel=1e-6)
    assert grad == pytest.approx(-float(tip_z_of_youngs(E)) / E, rel=1e-6)  # w ~ 1/E


def test_vmap_over_youngs_equals_loop(tip_z_of_youngs):
    Es = jnp.array([0.8, 1.0, 1.3]) * E
    batched = jax.vmap(tip_z_of_youngs)(Es)
    looped = jnp.stack([tip_z_of_youngs(e) for e in Es])
    assert np.allclose(batched, looped, rtol=1e-12, atol=0)
    assert float(batched[0]) > float(batched[2]) > 0


@pytest.mark.slow  # ~30 s: two 16-element Newton solves
def test_large_deflection_agrees_with_planar_beam():
    # P L^2/EI = 2 in the x-y plane (tip deflection 0.49 L), 16 elements each. Measured
    # 3D vs 2D: deflection -5.9e-3, shortening -1.1e-2 (8 elements: -7.0e-2, -1.3e-1);
    # the planar element is within 3e-5 of the exact elastica. The 3D element is too
    # stiff at large rotations: its linearly interpolated section vectors shorten in a
    # bent element (thickness locking), which mesh refinement removes.
    n, alpha = 16, 2.0
    load = alpha * E * I_Z / L**2
    beam = AncfBeam3D(L, RHO, E, SECTION, n, formulation="continuum")
    sol = solve_static(_cantilever_system(beam, (0.0, -load, 0.0)), beam.straight_coordinates(), 4)
    tip = np.asarray(beam.node_position(sol.q, -1))
    planar = AncfBeam2D(L, RHO, A, I_Z, E, n, strain="green_lagrange")
    force = fj.PointForce(0, jnp.array([L]), Constant(jnp.array([0.0, -load])))
    q2 = solve_static(fj.System([planar], [AncfClamp(0, 0)], [force]), planar.straight_coordinates(), 4).q
    tip2 = np.asarray(planar.node_position(q2, -1))
    assert -7e-3 < tip[1] / tip2[1] - 1 < -5e-3
    assert -1.3e-2 < (L - tip[0]) / (L - tip2[0]) - 1 < -9e-3
    assert abs(tip[2]) < 1e-12  # stays in plane


# -- stresses -------------------------------------------------------------------------
def test_von_mises_matches_beam_theory_bending_and_axial_stress():
    beam = AncfBeam3D(L, RHO, E, SECTION, 8)
    K = np.asarray(_stiffness_and_mass(beam)[0])
    free, q0 = _clamped(beam), beam.straight_coordinates()
    P = 1e-10 * E * A  # rotations ~ 4e-6: the quadratic part of E is negligible
    for d, point, expected in (
        (1, lambda s: (s, B / 2, 0.0), lambda s: P * (L - s) * (B / 2) / I_Z),  # bending: M c / I
        (0, lambda s: (s, -B / 2, H / 2), lambda s: P / A),  # axial: P / A
    ):
        f = np.zeros(K.shape[0])
        f[12 * 8 + d] = P
        u = np.zeros(K.shape[0])
        u[free] = np.linalg.solve(K[np.ix_(free, free)], f[free])
        q = q0 + u
        # element mid-points: the curvature is constant per element (the mean moment),
        # so bending stress is exact there; measured |error| <= 2e-4 (shear P/A included)
        for s in (1 / 16, 7 / 16, 13 / 16):
            vm = float(beam.von_mises(q, jnp.array(point(s))))
            assert vm == pytest.approx(expected(s), rel=1e-3)


# -- joints -----------------------------------------------------------------------------
def _rotate_about(q, point, R):
    """Rigidly rotate beam coordinates about `point`."""
    v = jnp.reshape(q, (-1, 4, 3))
    pos = (v[:, 0] - point[None, :]) @ R.T + point[None, :]
    grads = v[:, 1:] @ R.T
    return jnp.concatenate([pos[:, None], grads], axis=1).reshape(-1)


def test_joint_residuals_follow_their_kinematics():
    beam = AncfBeam3D(L, RHO, E, SECTION, 2)
    q = beam.straight_coordinates((0.0, 0.0, 0.0))
    root = jnp.zeros(3)
    turn_z, turn_y = jnp.asarray(rotation((0, 0, 1), 0.7)), jnp.asarray(rotation((0, 1, 0), 0.7))
    sph, hinge = AncfSpherical3D(0, 0), AncfRevolute3D(0, 0, (0.0, 0.0, 1.0))
    clamp = AncfClamp3D(0, 0)
    for j in (sph, hinge, clamp):
        assert np.allclose(j.constraint(beam, q, None, jnp.zeros(0), 0.0), 0, atol=1e-15)
    qz, qy = _rotate_about(q, root, turn_z), _rotate_about(q, root, turn_y)
    assert np.allclose(sph.constraint(beam, qy, None, None, 0.0), 0, atol=1e-15)
    assert np.allclose(hinge.constraint(beam, qz, None, None, 0.0), 0, atol=1e-15)
    assert np.max(np.abs(hinge.constraint(beam, qy, None, None, 0.0))) > 0.1
    assert np.max(np.abs(clamp.constraint(beam, qz, None, None, 0.0))) > 0.1
    # an axial stretch of the clamped node's r_x is free; a shift of its position is not
    stretched = q.at[3].set(1.01)
    assert np.allclose(clamp.constraint(beam, stretched, None, None, 0.0), 0, atol=1e-15)
    assert np.max(np.abs(clamp.constraint(beam, q.at[0].add(1e-3), None, None, 0.0))) == pytest.approx(1e-3)
    # beam-to-beam at an angle: beam i along y starts at the tip of beam j (along x)
    Ai = jnp.asarray(rotation((0, 0, 1), np.pi / 2))
    qi = beam.straight_coordinates((L, 0.0, 0.0), Ai)
    rigid = AncfRigidConnection3D(1, 0, 0, -1, rotation=Ai)  # R0 = A_j^T A_i, A_j = I
    assert np.allclose(rigid.constraint(beam, qi, beam, q, 0.0), 0, atol=1e-15)
    assert np.allclose(AncfSpherical3D(1, 0, 0, node_j=-1).constraint(beam, qi, beam, q, 0.0), 0, atol=1e-15)
    assert np.max(np.abs(AncfRigidConnection3D(1, 0, 0, -1).constraint(beam, qi, beam, q, 0.0))) > 0.5


@pytest.mark.slow  # ~15 s: compiles the Newton solver for a three-body system
def test_clamp_to_rigid_body_and_split_beam_match_ground_clamp():
    # one 2-element beam clamped to ground == two 1-element halves joined rigidly and
    # clamped to an NCF rigid body welded to ground (all under the same tip load)
    load = (0.0, 2e-3 * E * I_Z / L**2, -1e-3 * E * I_Y / L**2)
    full = AncfBeam3D(L, RHO, E, SECTION, 2)
    sol = solve_static(_cantilever_system(full, load), full.straight_coordinates(), 1)
    reference = np.asarray(full.node_position(sol.q, -1))

    half = AncfBeam3D(L / 2, RHO, E, SECTION, 1)
    body = fj.RigidBody3D(1.0, (0.1, 0.1, 0.1))
    joints = [
        fj.FixedJoint(2, (0.0, 0.0, 0.0), None, (-0.3, 0.0, 0.0), dim=3),
        AncfClamp3D(0, 0, 2, point_j=(0.3, 0.0, 0.0)),  # body origin at x = -0.3
        AncfRigidConnection3D(1, 0, 0, -1),
    ]
    force = fj.PointForce(1, jnp.array([L / 2, 0.0, 0.0]), Constant(jnp.asarray(load)))
    system = fj.System([half, half, body], joints, [force])
    q0 = jnp.concatenate(
        [
            half.straight_coordinates(),
            half.straight_coordinates((L / 2, 0.0, 0.0)),
            jnp.array([-0.3, 0, 0, 1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0]),
        ]
    )
    assert np.allclose(system.constraints(q0, 0.0), 0, atol=1e-15)
    q = solve_static(system, q0, 1).q
    tip = np.asarray(half.node_position(q[system.body_slice(1)], -1))
    assert np.allclose(tip, reference, rtol=0, atol=1e-9 * np.max(np.abs(reference - [L, 0, 0])))


# -- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_elements": 0}, "n_elements"),
        ({"length": -1.0}, "length"),
        ({"rho": 0.0}, "rho"),
        ({"youngs": np.nan}, "youngs"),
        ({"poisson": 0.5}, "poisson"),
        ({"poisson": -0.1}, "poisson"),
        ({"formulation": "shell"}, "formulation"),
        ({"axial_order": 0}, "axial_order"),
        ({"section_order": 13}, "section_order"),
        ({"integration": "reduced"}, "integration"),
        ({"section": 0.01}, "section"),
    ],
)
def test_bad_beam_input_raises(kwargs, match, user_facing_checks):
    args = {"length": L, "rho": RHO, "youngs": E, "section": SECTION, "n_elements": 2} | kwargs
    with pytest.raises(ValueError, match=match):
        AncfBeam3D(**args)


def test_bad_section_helper_and_joint_input_raise():
    with pytest.raises(ValueError, match="width"):
        RectangularSection(0.0, 0.01)
    with pytest.raises(ValueError, match="height"):
        RectangularSection(0.01, -0.01)
    with pytest.raises(ValueError, match="radius"):
        CircularSection(0.0)
    with pytest.raises(ValueError, match="coincide"):
        straight_beam_coordinates_3d((1.0, 2.0, 3.0), (1.0, 2.0, 3.0), 2)
    with pytest.raises(ValueError, match="parallel"):
        straight_beam_coordinates_3d((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), 2, y_axis=(2.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="node"):
        AncfBeam3D(L, RHO, E, SECTION, 2).node_position(jnp.zeros(36), 3)
    with pytest.raises(ValueError, match="node_j"):
        AncfSpherical3D(0, 0, None, node_j=1)
    with pytest.raises(ValueError, match="not both"):
        AncfRevolute3D(0, 0, (0.0, 0.0, 1.0), 1, point_j=(0.0, 0.0, 0.0), node_j=1)
    with pytest.raises(ValueError, match="rotation"):
        AncfClamp3D(0, 0, rotation=np.eye(2))
    with pytest.raises(ValueError, match="AncfClamp3D"):
        AncfRigidConnection3D(0, 0, None, 1)
    with pytest.raises(ValueError, match="node"):
        AncfClamp3D(0, 1.5)
    rigid = fj.RigidBody3D(1.0, (0.1, 0.1, 0.1))
    system = fj.System([rigid], [AncfClamp3D(0, 0)])
    with pytest.raises(ValueError, match="must be an AncfBeam3D"):
        system.constraints(jnp.zeros(12), 0.0)


def test_straight_beam_helper_matches_method():
    beam = AncfBeam3D(2.0, RHO, E, SECTION, 3)
    R = jnp.asarray(rotation((0.3, 1.0, -0.2), 0.9))
    start = jnp.array([0.1, 0.2, 0.3])
    q = straight_beam_coordinates_3d(start, start + 2.0 * R[:, 0], 3, y_axis=R[:, 1])
    assert np.allclose(q, beam.straight_coordinates(start, R), atol=1e-14)
    assert np.allclose(beam.node_axes(q, 2), R, atol=1e-14)
    assert np.allclose(beam.position(q, jnp.array([1.3, 0.004, -0.002])), start + R @ jnp.array([1.3, 0.004, -0.002]))
