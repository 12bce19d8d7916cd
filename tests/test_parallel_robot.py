"""The 3-RRPaR parallel robot (seed 001): inverse kinematics, constraint structure, the
driven rigid mechanism on its circle, the workspace check and the rods' compliance."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import flexjax as fj
from flexjax.models.parallel_robot import (
    CHAIN_AZIMUTHS,
    GEOMETRY,
    PERIOD,
    PlatformCirclePath,
    body_index,
    elbow_positions,
    forward_kinematics,
    initial_state,
    inverse_kinematics,
    kinematic_state,
    parallel_robot,
    platform_response,
    simulate_parallel_robot,
)

TIMES = np.linspace(0.0, PERIOD, 9)[:-1] + 0.03


@pytest.fixture(scope="module")
def rigid():
    return parallel_robot(rigid=True)


@pytest.fixture(scope="module")
def flexible():
    return parallel_robot(116e9)


def test_inverse_then_forward_kinematics_closes_the_loop():
    def check(t):
        P = PlatformCirclePath()(t)
        theta = inverse_kinematics(P)
        E = elbow_positions(theta)
        C = P[None, :] + GEOMETRY["platform_radius"] * jnp.stack(
            [jnp.cos(jnp.array(CHAIN_AZIMUTHS)), jnp.sin(jnp.array(CHAIN_AZIMUTHS)), jnp.zeros(3)], axis=1
        )
        return forward_kinematics(theta) - P, jnp.linalg.norm(C - E, axis=1) - GEOMETRY["rod_length"]

    fk_error, rod_error = jax.jit(jax.vmap(check))(jnp.asarray(TIMES))
    assert float(jnp.max(jnp.abs(fk_error))) < 1e-14
    assert float(jnp.max(jnp.abs(rod_error))) < 1e-14  # every rod spans exactly L_r


def test_model_sizes_and_constraint_rank(rigid, flexible):
    for system, nq, m, rank in ((rigid, 192, 204, 192), (flexible, 336, 168, 168)):
        q0, _ = kinematic_state(system, 0.3)
        assert (system.nq, system.nconstraints) == (nq, m)
        assert float(jnp.max(jnp.abs(system.constraints(q0, 0.3)))) < 1e-14
        assert np.linalg.matrix_rank(np.asarray(system.constraints_q(q0, 0.3)), tol=1e-9) == rank
    # rigid: 12 redundant rows (seed eq. 15's s = 12), no motion left once driven


@pytest.mark.slow
def test_driven_rigid_mechanism_moves_the_platform_on_the_circle(rigid):
    # velocity and acceleration of the driven rigid mechanism from the constraints alone
    path, t = PlatformCirclePath(), 0.37
    q, _ = kinematic_state(rigid, t)
    q, v = rigid.consistent_state(q, jnp.zeros_like(q), t)
    a, _ = fj.solvers.generalized_alpha.consistent_accelerations(rigid, q, v, jnp.asarray(t), least_squares=True)
    sl = rigid.body_slice(body_index(0, "platform"))
    np.testing.assert_allclose(q[sl][:3], path(t), atol=1e-14)
    np.testing.assert_allclose(v[sl][:3], path.velocity(jnp.asarray(t)), atol=1e-12)
    np.testing.assert_allclose(a[sl][:3], path.acceleration(jnp.asarray(t)), atol=1e-9)
    np.testing.assert_allclose(q[sl][3:], jnp.eye(3).reshape(-1), atol=1e-14)  # translation only


@pytest.mark.slow
def test_rigid_run_follows_the_circle(rigid):
    tr = simulate_parallel_robot(rigid, 0.02, rigid=True)
    x, _, _ = platform_response(rigid, tr)
    assert float(tr.constraint_residual.max()) < 1e-12
    np.testing.assert_allclose(x, jax.vmap(PlatformCirclePath())(tr.t), atol=1e-12)


@pytest.mark.parametrize(
    "path, match",
    [(PlatformCirclePath(radius=0.45), "chain"), (PlatformCirclePath(centre=(0.0, 0.0, -0.72)), "singularity")],
)
def test_trajectory_outside_the_workspace_raises(path, match):
    with pytest.raises(ValueError, match=match):
        parallel_robot(path=path)


@pytest.mark.slow
def test_platform_sag_grows_with_rod_compliance():
    # static equilibrium under gravity at the start of the circle (drivers hold the arms)
    sag = {}
    for E in (116e9, 1e9):
        system = parallel_robot(E)
        q, _ = initial_state(system)
        sl = system.body_slice(body_index(0, "platform"))
        sag[E] = np.asarray(q[sl][:3] - PlatformCirclePath()(0.0))
        assert float(jnp.max(jnp.abs(system.constraints(q, 0.0)))) < 1e-12
    # soft rods: the self-weight bow shortens their chords, which can lift the platform
    assert np.linalg.norm(sag[116e9]) < 1e-6
    assert np.linalg.norm(sag[1e9]) > 10 * np.linalg.norm(sag[116e9])
