"""Assembly, constraint derivatives, force elements, joints and consistent initial
conditions, checked against finite differences and closed-form geometry."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax import models
from flexjax.solvers import generalized_alpha

from .helpers import rotation


@pytest.fixture(scope="module")
def crank():
    return models.slider_crank(), *models.slider_crank_state()


def test_layout(crank):
    system, q0, _ = crank
    assert system.offsets == (0, 4, 8, 11)
    assert system.nq == 11 and system.nconstraints == 11
    assert system.mass(q0).shape == (11, 11)


def test_gamma_is_second_time_derivative_of_constraints(crank):
    # along q(t) = q + v t + a t²/2: d²Phi/dt² = Phi_q a - gamma (central differences)
    system, q0, v0 = crank
    rng = np.random.default_rng(1)
    q = q0 + 0.01 * rng.standard_normal(11)
    v, a = rng.standard_normal(11), rng.standard_normal(11)
    t0, h = 0.3, 1e-4
    path = lambda s: system.constraints(q + v * s + 0.5 * a * s**2, t0 + s)
    d2 = (path(h) - 2 * path(0.0) + path(-h)) / h**2
    predicted = system.constraints_q(q, t0) @ a - system.gamma(q, v, jnp.asarray(t0))
    assert np.allclose(d2, predicted, atol=2e-6)
    d1 = (path(h) - path(-h)) / (2 * h)
    assert np.allclose(d1, system.constraint_velocity(q, v, jnp.asarray(t0)), atol=1e-7)


def test_linearized_constraints_and_the_projection_jacobian(crank):
    """`linearized_constraints` (one batch of JVPs) gives Phi, Phi_q and Phi_t: Phi_t
    against a central difference in t on the driven crank; `projection` hands over
    Phi_q at the point it projected to."""
    from flexjax.system import linearized_constraints, projection

    system, q0, v0 = crank
    rng = np.random.default_rng(2)
    q, v, t = q0 + 0.01 * rng.standard_normal(11), rng.standard_normal(11), 0.3
    Phi, J, Phi_t = jax.jit(lambda q: linearized_constraints(system, q, t))(q)
    np.testing.assert_allclose(Phi, system.constraints(q, t), rtol=0, atol=1e-15)
    np.testing.assert_allclose(J, system.constraints_q(q, t), rtol=0, atol=1e-14)
    h = 1e-5
    fd = (system.constraints(q, t + h) - system.constraints(q, t - h)) / (2 * h)
    assert np.max(np.abs(fd)) > 1.0  # the driver moves with t
    np.testing.assert_allclose(Phi_t, fd, rtol=0, atol=1e-8)
    np.testing.assert_allclose(J @ v + Phi_t, system.constraint_velocity(q, v, jnp.asarray(t)), rtol=0, atol=1e-13)
    qp, vp, res_q, res_v, Jp = jax.jit(lambda q, v: projection(system, q, v, jnp.asarray(t), 20))(q, v)
    assert float(res_q) < 1e-12 and float(res_v) < 1e-10  # CONSISTENT_TOL
    np.testing.assert_allclose(Jp, system.constraints_q(qp, t), rtol=0, atol=1e-14)


def test_spring_damper_force_is_minus_potential_gradient_plus_damping():
    bars = [fj.RigidBar2D(1.0, 1.0), fj.RigidBar2D(2.0, 0.5)]
    k, c, l0 = 30.0, 2.0, 0.4
    spring = fj.SpringDamper(0, [1.0, 0.0], 1, [0.5, 0.0], k, c, l0)
    system = fj.System(bars, [], [spring])
    q = jnp.array([0.0, 0.0, 1.0, 0.0, 1.3, 0.8, 1.6, 1.2])
    v = jnp.array([0.1, 0.0, -0.2, 0.3, 0.5, 0.1, 0.0, -0.4])
    Q0 = system.forces(q, jnp.zeros(8), 0.0)
    assert np.allclose(Q0, -jax.grad(system.potential_energy)(q, 0.0), atol=1e-12)
    d = np.array([1.6, 1.2]) - np.array([1.0, 0.0])
    l = np.linalg.norm(d)
    assert float(system.potential_energy(q, 0.0)) == pytest.approx(0.5 * k * (l - l0) ** 2, rel=1e-13)
    # damping power = -c * ldot^2
    ldot = d @ (np.array([0.0, -0.4]) - np.array([-0.2, 0.3])) / l
    power = float((system.forces(q, v, 0.0) - Q0) @ v)
    assert power == pytest.approx(-c * ldot**2, rel=1e-12)


def test_spring_force_finite_gradient_at_zero_length():
    spring = fj.SpringDamper(0, [0.0, 0.0], None, [0.0, 0.0], 10.0, 1.0, 0.0)
    system = fj.System([fj.PointMass(1.0)], [], [spring])
    g = jax.grad(lambda k: jnp.sum(system.forces(jnp.zeros(2), jnp.zeros(2), 0.0)) * k)(1.0)
    assert np.isfinite(g)
    assert np.all(np.isfinite(jax.jacfwd(system.forces)(jnp.zeros(2), jnp.ones(2), 0.0)))


def test_applied_torque_does_virtual_work_on_rotation():
    tau = 2.5
    system = fj.System([fj.RigidBar2D(1.0, 2.0)], [], [fj.AppliedTorque(0, lambda t: tau)])
    q = jnp.array([0.1, 0.2, 0.1 + 2 * np.cos(0.3), 0.2 + 2 * np.sin(0.3)])
    dq = jnp.array([0.0, 0.0, -2 * np.sin(0.3), 2 * np.cos(0.3)])  # unit rotation rate about r_i
    assert float(system.forces(q, jnp.zeros(4), 0.0) @ dq) == pytest.approx(tau, rel=1e-12)


def test_point_force_virtual_work():
    F = jnp.array([1.0, -3.0, 2.0])
    body = fj.RigidBody3D(1.0, np.eye(3) * 0.1)
    system = fj.System([body], [], [fj.PointForce(0, [0.5, 0.0, 0.0], lambda t: F)])
    R = rotation([0, 0, 1], 0.4)
    q = jnp.concatenate([jnp.zeros(3), R[:, 0], R[:, 1], R[:, 2]])
    omega = np.array([0.2, -0.1, 0.7])
    v = jnp.concatenate([np.zeros(3)] + [np.cross(omega, R[:, k]) for k in range(3)])
    vp = np.cross(omega, R @ [0.5, 0.0, 0.0])
    assert float(system.forces(q, v, 0.0) @ v) == pytest.approx(float(F @ vp), rel=1e-12)


def test_fixed_and_spherical_and_hinge_constraints_vanish_on_consistent_poses():
    R1, R2 = rotation([1, 2, 3], 0.5), rotation([-1, 0, 2], 1.1)
    b1 = fj.RigidBody3D(1.0, np.eye(3))
    b2 = fj.RigidBody3D(1.0, np.eye(3))
    p1 = np.array([0.3, 0.1, -0.2])
    r1 = np.array([1.0, 2.0, 3.0])
    world = r1 + R1 @ p1
    p2 = np.array([-0.1, 0.4, 0.0])
    r2 = world - R2 @ p2
    q1 = jnp.concatenate([r1, *R1.T])
    q2 = jnp.concatenate([r2, *R2.T])
    fixed = fj.FixedJoint(0, p1, 1, p2, dim=3, relative_orientation=R2.T @ R1)
    ball = fj.SphericalJoint(0, p1, 1, p2)
    system = fj.System([b1, b2], [fixed, ball])
    q = jnp.concatenate([q1, q2])
    assert np.allclose(system.constraints(q, 0.0), 0, atol=1e-14)
    assert np.linalg.matrix_rank(np.asarray(system.constraints_q(q, 0.0))) == 12 + 6
    bad = fj.System([b1, b2], [fj.FixedJoint(0, p1, 1, p2, dim=3)])
    assert np.max(np.abs(bad.constraints(q, 0.0))) > 0.1
    axis_world = np.array([0.0, 0.0, 1.0])
    hinge = fj.System([b1], [fj.RevoluteJoint3D(0, p1, R1.T @ axis_world, None, world, axis_world)])
    assert np.allclose(hinge.constraints(q1, 0.0)[6:], 0, atol=1e-14)


def test_planar_fixed_joint_and_angle_driver():
    th1, th2 = 0.3, 1.2
    b = [fj.RigidBar2D(1.0, 1.0), fj.RigidBar2D(1.0, 1.0)]
    e = lambda th: np.array([np.cos(th), np.sin(th)])
    q = jnp.concatenate([np.zeros(2), e(th1), e(th1), e(th1) + e(th2)])
    weld = fj.FixedJoint(0, [1.0, 0.0], 1, [0.0, 0.0], relative_orientation=th1 - th2)
    drive = fj.AngleDriver(1, 0, fj.ConstantRate(th2 - th1 - 0.1, 0.1))
    system = fj.System(b, [weld, drive])
    assert np.allclose(system.constraints(q, 1.0), 0, atol=1e-14)
    assert abs(float(system.constraints(q, 2.0)[-1])) == pytest.approx(np.sin(0.1), rel=1e-12)


def test_consistent_state_projects_onto_constraints():
    system = models.double_pendulum()
    q0, _ = models.double_pendulum_state(0.4, -0.2)
    rng = np.random.default_rng(3)
    q, v = system.consistent_state(q0 + 1e-2 * rng.standard_normal(8), rng.standard_normal(8))
    assert np.max(np.abs(system.constraints(q, 0.0))) < 1e-12
    assert np.max(np.abs(system.constraint_velocity(q, v, 0.0))) < 1e-12
    assert np.max(np.abs(q - q0)) < 0.05


def test_consistent_start_taken_as_is_and_projected_under_grad():
    """`simulate` takes a concrete start that satisfies the constraints to rounding as it
    is (no projection in its program), projects a start off by 1e-7, and under `grad`
    always projects, so that the derivative of the start with respect to a constraint
    parameter is the projection's: for a pendulum bar pinned at the origin, the
    minimum-norm correction of a longer bar moves its tip radially, d q_tip / dL =
    (sin θ, -cos θ)."""
    theta = 0.3
    q0, v0 = models.pendulum_state(theta)
    run = lambda length, q: fj.simulate(models.pendulum(length=length), q, v0, 0.01, 1e-3)
    as_is = run(1.0, q0)
    assert np.array_equal(np.asarray(as_is.q[0]), np.asarray(q0))  # not even rounding moved it
    off = q0.at[3].add(1e-7)
    projected = run(1.0, off)
    assert float(jnp.max(jnp.abs(projected.constraint_residual[0]))) < 1e-14
    moved = float(jnp.max(jnp.abs(projected.q[0] - off)))
    assert 1e-8 < moved < 1e-7  # the radial part of the offset, 1e-7 cos(theta), taken out
    dq0 = jax.jacfwd(lambda length: run(length, q0).q[0])(1.0)
    np.testing.assert_allclose(np.asarray(dq0), [0.0, 0.0, np.sin(theta), -np.cos(theta)], rtol=0, atol=1e-12)


def test_start_taken_as_is_reuses_the_checks_constraint_jacobian(monkeypatch):
    """A start taken as it is hands the program the $\Phi_q$ that the start checks
    computed, so that the initial accelerations do not linearize the constraints again,
    and those accelerations are the closed form: a uniform bar pinned at its end,
    released at rest at angle θ, has α = -(3g / 2L) sin θ, so its tip accelerates at
    L α (cos θ, sin θ)."""
    handed = []
    real = generalized_alpha.consistent_accelerations

    def spy(system, q, v, t, least_squares=False, Phi_q=None):
        handed.append(Phi_q)
        return real(system, q, v, t, least_squares, Phi_q)

    monkeypatch.setattr(generalized_alpha, "consistent_accelerations", spy)
    jax.clear_caches()  # trace the program anew, with the spy in it
    theta, g = 0.4, 9.81
    q0, v0 = models.pendulum_state(theta)
    traj = fj.simulate(models.pendulum(g=g), q0, v0, 2e-3, 1e-3)
    assert len(handed) == 1 and isinstance(handed[0], jax.core.Tracer)  # an argument of the program
    alpha = -1.5 * g * np.sin(theta)
    tip = [alpha * np.cos(theta), alpha * np.sin(theta)]
    np.testing.assert_allclose(np.asarray(traj.a[0]), [0.0, 0.0, *tip], rtol=0, atol=1e-12)


def test_inconsistent_initial_conditions_raise():
    bar = fj.RigidBar2D(1.0, 1.0)
    joints = [fj.RevoluteJoint(0, [0.0, 0.0], None, [0.0, 0.0]), fj.RevoluteJoint(0, [1.0, 0.0], None, [3.0, 0.0])]
    system = fj.System([bar], joints)
    with pytest.raises(fj.InconsistentInitialConditions, match=r"max \|Phi\|"):
        system.consistent_state(jnp.array([0.0, 0.0, 1.0, 0.0]), jnp.zeros(4))
    with pytest.raises(ValueError, match="NaN"):
        system.consistent_state(jnp.array([0.0, np.nan, 1.0, 0.0]), jnp.zeros(4))
    with pytest.raises(ValueError, match="shape"):
        system.consistent_state(jnp.zeros(3), jnp.zeros(4))
    jitted = jax.jit(lambda q: system.consistent_state(q, jnp.zeros(4))[0])
    with pytest.raises(Exception, match="inconsistent initial conditions"):
        jax.block_until_ready(jitted(jnp.array([0.0, 0.0, 1.0, 0.0])))


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: fj.System([fj.RigidBar2D(1.0, 1.0)], [fj.RevoluteJoint(0, [0, 0], 3, [0, 0])]), "refers to body 3"),
        (
            lambda: fj.System([fj.RigidBody3D(1.0, np.eye(3))], [fj.RevoluteJoint(0, [0, 0], None, [0, 0])]),
            "2D but body 0",
        ),
        (lambda: fj.System([fj.RigidBar2D(1.0, 1.0)], [], [fj.Gravity((0, 0, -9.81))]), "3D but acts"),
        (lambda: fj.System([]), "at least one body"),
        (lambda: fj.System(["bar"]), "not an AbstractBody"),
        (lambda: fj.RevoluteJoint(0, [0, 0], 0, [0, 0]), "two different bodies"),
        (lambda: fj.RevoluteJoint(0, [0, 0], None, [0, 0, 0]), "point_j"),
        (lambda: fj.AngleDriver(0, None, 3.0), "callable"),
    ],
)
def test_bad_assembly_raises(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_wrong_coordinate_shape_raises(crank):
    system, _, _ = crank
    with pytest.raises(ValueError, match=r"shape \(11,\)"):
        system.mass(jnp.zeros(10))
