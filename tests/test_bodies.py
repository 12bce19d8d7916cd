"""Mass matrices, internal constraints and gravity of the rigid bodies, checked
against the rigid-body kinetic energy T = m|v_c|²/2 + ωᵀ I ω/2 and quadrature."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj

from .helpers import rotation

_R90 = np.array([[0.0, -1.0], [1.0, 0.0]])


def test_point_mass_mass_matrix():
    assert np.allclose(fj.PointMass(2.5, dim=3).mass_matrix(jnp.zeros(3)), 2.5 * np.eye(3))


def test_bar2d_kinetic_energy_matches_rigid_body_formula():
    m, L, com, I = 3.0, 0.7, np.array([0.2, 0.05]), 0.11
    bar = fj.RigidBar2D(m, L, com=com, inertia=I)
    th, w = 0.4, -1.3
    A = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    ri, vi = np.array([0.3, -0.2]), np.array([0.5, 0.8])
    rj = ri + A @ [L, 0]
    vj = vi + w * _R90 @ (A @ [L, 0])
    q, v = jnp.concatenate([ri, rj]), jnp.concatenate([vi, vj])
    vc = vi + w * _R90 @ (A @ com)
    T_exact = 0.5 * m * vc @ vc + 0.5 * I * w**2
    assert float(0.5 * v @ bar.mass_matrix(q) @ v) == pytest.approx(T_exact, rel=1e-13)
    assert np.allclose(bar.center_of_mass(q), ri + A @ com)
    assert np.allclose(bar.constraints(q), 0, atol=1e-15)
    q_stretched = q.at[2].add(0.01)
    assert abs(float(bar.constraints(q_stretched)[0])) > 1e-3


def test_bar2d_uniform_mass_matrix_closed_form():
    m = 2.0
    M = fj.RigidBar2D(m, 1.0).mass_matrix(jnp.zeros(4))
    expected = m / 6 * np.block([[2 * np.eye(2), np.eye(2)], [np.eye(2), 2 * np.eye(2)]])
    assert np.allclose(M, expected, atol=1e-14)


def _body3d_state(R, r0, omega, v0):
    q = jnp.concatenate([r0, R[:, 0], R[:, 1], R[:, 2]])
    v = jnp.concatenate([v0] + [np.cross(omega, R[:, k]) for k in range(3)])
    return q, v


def test_body3d_kinetic_energy_matches_rigid_body_formula():
    m, com = 4.0, np.array([0.1, -0.2, 0.3])
    Ic = np.array([[0.3, 0.01, 0.02], [0.01, 0.2, -0.03], [0.02, -0.03, 0.25]])
    body = fj.RigidBody3D(m, Ic, com=com)
    R = rotation([1.0, 2.0, -0.5], 0.7)
    r0, omega, v0 = np.array([1.0, 0.0, -1.0]), np.array([0.4, -1.1, 0.9]), np.array([0.2, 0.3, -0.1])
    q, v = _body3d_state(R, r0, omega, v0)
    vc = v0 + np.cross(omega, R @ com)
    T_exact = 0.5 * m * vc @ vc + 0.5 * omega @ (R @ Ic @ R.T) @ omega
    assert float(0.5 * v @ body.mass_matrix(q) @ v) == pytest.approx(T_exact, rel=1e-13)
    assert np.allclose(body.constraints(q), 0, atol=1e-14)
    assert np.allclose(body.axes(q), R)


def test_bar3d_kinetic_energy():
    m, L = 1.5, 0.8
    bar = fj.RigidBar3D(m, L)
    R = rotation([0.0, 1.0, 1.0], 0.3)
    e = R[:, 0]
    omega = np.cross(e, [0.3, -0.2, 1.0])  # perpendicular to the bar axis
    ri, vi = np.array([0.1, 0.2, 0.3]), np.array([0.0, 1.0, -0.5])
    q = jnp.concatenate([ri, ri + L * e])
    v = jnp.concatenate([vi, vi + np.cross(omega, L * e)])
    vc = vi + np.cross(omega, 0.5 * L * e)
    T_exact = 0.5 * m * vc @ vc + 0.5 * (m * L**2 / 12) * omega @ omega
    assert float(0.5 * v @ bar.mass_matrix(q) @ v) == pytest.approx(T_exact, rel=1e-13)


def test_triangular_plate_mass_matrix_matches_quadrature():
    verts = np.array([[0.0, 0.0], [0.5, 0.0], [0.1, 0.4]])
    m = 2.0
    plate = fj.TriangularPlate(m, verts)
    area = 0.5 * abs(np.linalg.det(verts[1:] - verts[0]))
    # edge-midpoint rule: exact for quadratics on a triangle; integrand C(p)^T C(p) is quadratic
    mids = 0.5 * (verts + np.roll(verts, -1, axis=0))
    C = [jax.jacfwd(plate.position)(jnp.zeros(9), jnp.asarray(p)) for p in mids]
    M_quad = m / area * area / 3 * sum(c.T @ c for c in C)
    assert np.allclose(plate.mass_matrix(jnp.zeros(9)), M_quad, rtol=1e-12, atol=1e-14)
    R = rotation([1.0, 1.0, 0.0], 0.9)
    q = jnp.concatenate([R @ np.append(p, 0.0) for p in verts])
    assert np.allclose(plate.constraints(q), 0, atol=1e-14)
    assert np.allclose(plate.axes(q), R, atol=1e-14)


def test_centroidal_body2d():
    body = fj.RigidBody2D(3.0, 0.2)
    assert np.allclose(body.mass_matrix(jnp.zeros(3)), np.diag([3.0, 3.0, 0.2]))
    q = jnp.array([1.0, 2.0, np.pi / 2])
    assert np.allclose(body.position(q, jnp.array([1.0, 0.0])), [1.0, 3.0])


def test_gravity_force_is_weight_at_the_centre_of_mass():
    bar = fj.RigidBar2D(2.0, 1.0, com=[0.25, 0.0])
    sysm = fj.System([bar], [], [fj.Gravity((0.0, -9.81))])
    q = jnp.array([0.0, 0.0, 1.0, 0.0])
    Q = sysm.forces(q, jnp.zeros(4), 0.0)
    # weight 2*9.81 at x = 0.25 splits 3:1 between the points (lever rule)
    assert np.allclose(Q, [0, -0.75 * 19.62, 0, -0.25 * 19.62], atol=1e-12)
    assert float(sysm.potential_energy(q.at[1].set(1.0).at[3].set(1.0), 0.0)) == pytest.approx(19.62)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: fj.RigidBar2D(-1.0, 1.0), "mass"),
        (lambda: fj.RigidBar2D(1.0, 0.0), "length"),
        (lambda: fj.RigidBar2D(1.0, 1.0, com=[0.0, 0.0, 0.0]), "com"),
        (lambda: fj.RigidBody3D(1.0, np.ones((2, 2))), "inertia"),
        (lambda: fj.RigidBody3D(1.0, np.diag([1.0, -1.0, 1.0])), "inertia"),
        (lambda: fj.PointMass(1.0, dim=4), "dim"),
        (lambda: fj.TriangularPlate(1.0, [[0, 0], [1, 0], [2, 0]]), "area"),
        (lambda: fj.RigidBody2D(float("nan"), 1.0), "mass"),
    ],
)
def test_bad_body_parameters_raise(make, match):
    with pytest.raises(ValueError, match=match):
        make()
